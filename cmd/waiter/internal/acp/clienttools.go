package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/hologramagent/hologram/kernel/client"
)

// The editor's own tools: when the editor advertises fs.readTextFile / fs.writeTextFile, a
// prompt brings them to the kernel as client-executed tools (docs/api.md, "Client-executed
// tools") and hides the kernel's files tools, so the model reads and writes the project's files
// through the editor (its unsaved buffers included), inside the session's cwd.

// Names of the editor's tools.
const (
	toolReadFile  = "editor_read_file"
	toolWriteFile = "editor_write_file"
)

// filesTools are the built-in files plugin's tools, hidden when the editor's stand in for them.
var filesTools = []string{"files_read", "files_write", "files_list", "files_search"}

// editorTools returns the client tools and the hidden tools for the editor's capabilities.
func editorTools(caps sdk.ClientCapabilities) ([]client.ClientTool, []string) {
	var tools []client.ClientTool
	if caps.Fs.ReadTextFile {
		tools = append(tools, client.ClientTool{Name: toolReadFile,
			Description: "Read a text file of the project open in the editor (unsaved changes included). " +
				"path is relative to the project or absolute inside it; line (1-based) and limit select lines.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"the file, relative to the project or absolute inside it"},` +
				`"line":{"type":"integer","minimum":1,"description":"first line to read, 1-based"},` +
				`"limit":{"type":"integer","minimum":1,"description":"how many lines to read"}},"required":["path"]}`)})
	}
	if caps.Fs.WriteTextFile {
		tools = append(tools, client.ClientTool{Name: toolWriteFile,
			Description: "Write (create or replace) a text file of the project open in the editor. " +
				"path is relative to the project or absolute inside it.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"the file, relative to the project or absolute inside it"},` +
				`"content":{"type":"string","description":"the whole new content"}},"required":["path","content"]}`)})
	}
	if len(tools) == 0 {
		return nil, nil
	}
	return tools, filesTools
}

// projectPath resolves p inside the project dir: the absolute path the editor is asked for.
func projectPath(cwd, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New("path is empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path contains a NUL byte")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	rel, err := filepath.Rel(cwd, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the project %s", p, cwd)
	}
	return p, nil
}

// runEditorTool runs one call of an editor tool through the editor and returns its answer.
func (a *Agent) runEditorTool(ctx context.Context, sid sdk.SessionId, cwd string, t client.ToolEvent) client.ToolAnswer {
	fail := func(format string, args ...any) client.ToolAnswer {
		return client.ToolAnswer{Content: fmt.Sprintf(format, args...), IsError: true}
	}
	var args struct {
		Path    string  `json:"path"`
		Line    *int    `json:"line"`
		Limit   *int    `json:"limit"`
		Content *string `json:"content"`
	}
	if err := json.Unmarshal([]byte(t.Arguments), &args); err != nil {
		return fail("bad arguments: %v", err)
	}
	path, err := projectPath(cwd, args.Path)
	if err != nil {
		return fail("%v", err)
	}
	switch t.Name {
	case toolReadFile:
		if (args.Line != nil && *args.Line < 1) || (args.Limit != nil && *args.Limit < 1) {
			return fail("line and limit must be at least 1")
		}
		resp, err := a.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sid, Path: path, Line: args.Line, Limit: args.Limit})
		if err != nil {
			return fail("the editor could not read %s: %v", path, err)
		}
		if len(resp.Content) > maxEditorFile {
			return fail("%s is %d bytes, more than the %d one read may return: read it in parts (line, limit)", path, len(resp.Content), maxEditorFile)
		}
		return client.ToolAnswer{Content: resp.Content}
	case toolWriteFile:
		if args.Content == nil {
			return fail("content is required")
		}
		if _, err := a.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sid, Path: path, Content: *args.Content}); err != nil {
			return fail("the editor could not write %s: %v", path, err)
		}
		return client.ToolAnswer{Content: fmt.Sprintf("wrote %d bytes to %s", len(*args.Content), path)}
	}
	return fail("unknown editor tool %s", t.Name)
}

// maxEditorFile bounds one read through the editor (the kernel's limit for an answer).
const maxEditorFile = 2 << 20
