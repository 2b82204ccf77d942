package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

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
	toolRun       = "editor_run"
)

// runKind names the editor's commands in the project's kept answers.
const runKind = "editor: Run a command"

// fsTimeout bounds one file request to the editor.
const fsTimeout = 2 * time.Minute

// Bounds of a command run in the editor's terminal.
const (
	runOutputLimit = 256 << 10
	runTimeout     = 10 * time.Minute
)

// shellTools are the built-in shell plugin's tools, hidden when the editor's terminal runs commands.
var shellTools = []string{"shell_run", "shell_allowed"}

// filesTools are the built-in files plugin's tools, hidden when the editor's stand in for them.
var filesTools = []string{"files_read", "files_write", "files_list", "files_search"}

// editorTools returns the client tools and the hidden tools for the editor's capabilities. Over
// --remote the kernel's files and shell tools are always hidden: they would act on the kernel's
// machine, not the editor's project; only the editor's own run.
func editorTools(caps sdk.ClientCapabilities, remote bool) ([]client.ClientTool, []string) {
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
	var hide []string
	if len(tools) > 0 {
		hide = append(hide, filesTools...)
	}
	if caps.Terminal {
		tools = append(tools, client.ClientTool{Name: toolRun,
			Description: "Run a program in the editor's terminal, in the project (or a directory inside it), after the owner's approval; " +
				"returns its exit code and output (at most 256 KiB, the end kept).",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"command":{"type":"string","description":"the program, e.g. go or ./build.sh"},` +
				`"args":{"type":"array","items":{"type":"string"},"description":"its arguments"},` +
				`"cwd":{"type":"string","description":"directory, relative to the project or absolute inside it (default: the project)"}},"required":["command"]}`)})
		hide = append(hide, shellTools...)
	}
	if remote {
		hide = append(append([]string(nil), filesTools...), shellTools...)
	}
	return tools, hide
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
func (a *Agent) runEditorTool(ctx context.Context, s *session, sid sdk.SessionId, t client.ToolEvent) client.ToolAnswer {
	if t.Name == toolRun {
		return a.runInTerminal(ctx, s, sid, t)
	}
	ctx, cancel := context.WithTimeout(ctx, fsTimeout) // an editor that never answers does not hold the turn
	defer cancel()
	cwd := s.cwd
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

// runInTerminal runs editor_run: the owner's approval (kept rules first), then the command in a
// terminal of the editor, shown in the tool call, its output returned and the terminal released.
func (a *Agent) runInTerminal(ctx context.Context, s *session, sid sdk.SessionId, t client.ToolEvent) client.ToolAnswer {
	fail := func(format string, args ...any) client.ToolAnswer {
		return client.ToolAnswer{Content: fmt.Sprintf(format, args...), IsError: true}
	}
	var args struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Cwd     string   `json:"cwd"`
	}
	if err := json.Unmarshal([]byte(t.Arguments), &args); err != nil {
		return fail("bad arguments: %v", err)
	}
	if strings.TrimSpace(args.Command) == "" {
		return fail("command is empty")
	}
	dir := s.cwd
	if args.Cwd != "" {
		var err error
		if dir, err = projectPath(s.cwd, args.Cwd); err != nil {
			return fail("%v", err)
		}
	}
	shown := strings.TrimSpace(args.Command + " " + strings.Join(args.Args, " "))
	if a.decide(ctx, s, sid, t.ID, t.Name, runKind, fmt.Sprintf("Run a command: $ %s\nin %s", shown, dir)) != Allow {
		return fail("not run: denied by the owner")
	}
	rctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	limit := runOutputLimit
	term, err := a.conn.CreateTerminal(rctx, sdk.CreateTerminalRequest{SessionId: sid, Command: args.Command, Args: args.Args, Cwd: &dir, OutputByteLimit: &limit})
	if err != nil {
		return fail("the editor could not start %s: %v", args.Command, err)
	}
	uctx := context.WithoutCancel(ctx)
	defer func() {
		if _, err := a.conn.ReleaseTerminal(uctx, sdk.ReleaseTerminalRequest{SessionId: sid, TerminalId: term.TerminalId}); err != nil {
			a.opts.Log.Warn("acp: release terminal", "err", err)
		}
	}()
	if err := a.conn.SessionUpdate(uctx, sdk.SessionNotification{SessionId: sid, Update: sdk.UpdateToolCall(sdk.ToolCallId(t.ID),
		sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(term.TerminalId)}))}); err != nil {
		a.opts.Log.Warn("acp: session/update", "err", err)
	}
	exit, err := a.conn.WaitForTerminalExit(rctx, sdk.WaitForTerminalExitRequest{SessionId: sid, TerminalId: term.TerminalId})
	if err != nil {
		if _, kerr := a.conn.KillTerminal(uctx, sdk.KillTerminalRequest{SessionId: sid, TerminalId: term.TerminalId}); kerr != nil {
			a.opts.Log.Warn("acp: kill terminal", "err", kerr)
		}
		if rctx.Err() != nil && ctx.Err() == nil {
			return fail("timeout: %s did not finish within %s (killed)", shown, runTimeout)
		}
		return fail("%s: %v", shown, err)
	}
	out, err := a.conn.TerminalOutput(uctx, sdk.TerminalOutputRequest{SessionId: sid, TerminalId: term.TerminalId})
	if err != nil {
		return fail("%s: the editor gave no output: %v", shown, err)
	}
	status := "exit ?"
	switch {
	case exit.ExitCode != nil:
		status = fmt.Sprintf("exit %d", *exit.ExitCode)
	case exit.Signal != nil:
		status = "killed by " + *exit.Signal
	}
	text := fmt.Sprintf("$ %s\n(in %s, the editor's terminal) %s\n%s", shown, dir, status, out.Output)
	if out.Truncated {
		text += "\n(output cut to its last 256 KiB)"
	}
	return client.ToolAnswer{Content: text}
}
