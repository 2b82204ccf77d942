package protocol

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden wire transcripts in testdata")

// scriptedServer is the small MCP server the golden transcripts are replayed
// against.
func scriptedServer(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case MethodInitialize:
		var p InitializeParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &Error{Code: InvalidParams, Message: "invalid params: " + err.Error()}
		}
		return InitializeResult{
			ProtocolVersion: NegotiateVersion(p.ProtocolVersion),
			Capabilities:    ServerCapabilities{Tools: &ToolsCapability{ListChanged: true}},
			ServerInfo:      Implementation{Name: "scripted", Version: "1.0.0"},
		}, nil
	case MethodPing, MethodShutdown:
		return struct{}{}, nil
	case MethodToolsList:
		readOnly := true
		return ListToolsResult{Tools: []Tool{
			{
				Name:        "echo",
				Description: "Echoes its text.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
				Annotations: &ToolAnnotations{ReadOnlyHint: &readOnly},
			},
			{Name: "fail", Description: "Always fails.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		}}, nil
	case MethodToolsCall:
		var p CallToolParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &Error{Code: InvalidParams, Message: "invalid params: " + err.Error()}
		}
		switch p.Name {
		case "echo":
			var args struct {
				Text *string `json:"text"`
			}
			if err := json.Unmarshal(p.Arguments, &args); err != nil || args.Text == nil {
				return nil, &Error{Code: InvalidParams, Message: `invalid params: echo needs a string "text"`}
			}
			return CallToolResult{Content: []Content{{Type: "text", Text: *args.Text}}}, nil
		case "fail":
			return CallToolResult{Content: []Content{{Type: "text", Text: "the tool failed"}}, IsError: true}, nil
		}
		return nil, &Error{Code: InvalidParams, Message: "unknown tool: " + p.Name}
	}
	return nil, &Error{Code: MethodNotFound, Message: "method not found: " + method}
}

// expectedReplies is how many lines the server writes for one client line:
// one for a request or a frame it must refuse, none for a notification or a
// response.
func expectedReplies(line string, maxFrame int) int {
	m, err := NewDecoder(strings.NewReader(line+"\n"), maxFrame).Decode()
	var de *DecodeError
	switch {
	case errors.As(err, &de):
		if de.Response {
			return 0
		}
		return 1
	case err != nil:
		return 0
	case m.IsRequest():
		return 1
	}
	return 0
}

// TestGoldenTranscripts replays the client lines of every
// testdata/*.txtar into a Conn served by scriptedServer and compares the
// server's lines byte for byte. The comment may set "maxframe: N".
func TestGoldenTranscripts(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			comment, files := parseTxtar(data)
			maxFrame := DefaultNativeMaxFrame
			for _, l := range strings.Split(string(comment), "\n") {
				if v, ok := strings.CutPrefix(l, "maxframe: "); ok {
					if maxFrame, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
						t.Fatal(err)
					}
				}
			}
			var client []byte
			serverIdx := -1
			for i, f := range files {
				switch f.Name {
				case "client":
					client = f.Data
				case "server":
					serverIdx = i
				}
			}
			if serverIdx < 0 {
				files = append(files, txtarFile{Name: "server"})
				serverIdx = len(files) - 1
			}
			got := replay(t, client, maxFrame)
			if *update {
				files[serverIdx].Data = got
				if err := os.WriteFile(path, formatTxtar(comment, files), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := files[serverIdx].Data; !bytes.Equal(got, want) {
				t.Errorf("server lines differ (run with -update to accept)\n got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// replay feeds the client lines to a served Conn one at a time, reading the
// expected replies after each, then closes the input and collects anything
// written after.
func replay(t *testing.T, client []byte, maxFrame int) []byte {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	conn := NewConn(inR, outW, ConnOptions{MaxFrame: maxFrame, Handler: HandlerFunc(scriptedServer)})
	runErr := make(chan error, 1)
	go func() {
		err := conn.Run(context.Background())
		outW.Close()
		runErr <- err
	}()
	out := bufio.NewReader(outR)
	var got []byte
	for _, line := range strings.Split(strings.TrimSuffix(string(client), "\n"), "\n") {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		for range expectedReplies(line, maxFrame) {
			l, err := out.ReadBytes('\n')
			if err != nil {
				t.Fatalf("reading the reply to %.80s: %v", line, err)
			}
			got = append(got, l...)
		}
	}
	inW.Close()
	rest, err := io.ReadAll(out)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, rest...)
	if err := <-runErr; err != nil {
		t.Errorf("Run after EOF = %v, want nil", err)
	}
	return got
}
