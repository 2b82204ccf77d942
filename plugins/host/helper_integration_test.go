//go:build integration

package host

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// helperEnv selects the helper process's mode: a comma-separated list for the scriptable fake
// MCP server, or "gosdk" for a server built with the MCP go-sdk.
const helperEnv = "HOLOGRAM_HOST_TEST_HELPER"

// TestHelperProcess is not a test: run as a child (helper-process pattern) with helperEnv set,
// it is a plugin. Modes of the fake server:
//
//	normal          tools echo, add, crash, slow (page 1), fail, image, relist, ask (page 2)
//	stderr          write three lines to stderr at start
//	log             send a warning notifications/message after notifications/initialized
//	crash-at-start  exit 7 before reading anything
//	crash-after-start exit 2 right after answering tools/list
//	hang-handshake  never answer initialize
//	protocol-V      answer initialize with protocol version V (e.g. protocol-2024-11-05)
//	noping          never answer ping
//	ignore-term     ignore SIGTERM and the end of stdin
//	env             offer the tool env: the names of its environment
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	if mode == "gosdk" {
		runGoSDK()
	} else {
		runFake(strings.Split(mode, ","))
	}
	os.Exit(0)
}

// echoTool is the echo tool's body, shared by the fake server and the in-process benchmark.
func echoTool(args json.RawMessage) (string, error) {
	var a struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return "", err
	}
	return a.Text, nil
}

// runGoSDK serves one tool, greet, with the MCP go-sdk over stdio.
func runGoSDK() {
	server := mcp.NewServer(&mcp.Implementation{Name: "gosdk-peer", Version: "1.0.0"}, nil)
	type greetIn struct {
		Name string `json:"name" jsonschema:"who to greet"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "Greets someone."},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello, " + in.Name}}}, nil, nil
		})
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "gosdk server:", err)
		os.Exit(1)
	}
}

// runFake is the scriptable fake MCP server.
func runFake(modes []string) {
	has := func(m string) bool {
		for _, x := range modes {
			if x == m {
				return true
			}
		}
		return false
	}
	if has("ignore-term") {
		signal.Ignore(syscall.SIGTERM)
	}
	if has("stderr") {
		for i := range 3 {
			fmt.Fprintf(os.Stderr, "stderr line %d\n", i)
		}
	}
	if has("crash-at-start") {
		fmt.Fprintln(os.Stderr, "dying at start")
		os.Exit(7)
	}
	var outMu sync.Mutex
	send := func(v any) {
		b, _ := json.Marshal(v)
		outMu.Lock()
		defer outMu.Unlock()
		os.Stdout.Write(append(b, '\n'))
	}
	reply := func(id json.RawMessage, result any) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	text := func(s string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
	}
	tool := func(name string, readOnly bool) map[string]any {
		t := map[string]any{"name": name, "description": name + " tool",
			"inputSchema": map[string]any{"type": "object"}}
		if readOnly {
			t["annotations"] = map[string]any{"readOnlyHint": true}
		}
		return t
	}
	var extra bool
	var pendingAsk json.RawMessage
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			break
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *protocol.Error `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch m.Method {
		case "":
			if pendingAsk != nil {
				answer := "result: " + string(m.Result)
				if m.Error != nil {
					answer = fmt.Sprintf("error %d: %s", m.Error.Code, m.Error.Message)
				}
				reply(pendingAsk, text(answer))
				pendingAsk = nil
			}
		case "initialize":
			if has("hang-handshake") {
				continue
			}
			version := protocol.LatestVersion
			for _, md := range modes {
				if v, ok := strings.CutPrefix(md, "protocol-"); ok {
					version = v
				}
			}
			reply(m.ID, map[string]any{"protocolVersion": version,
				"capabilities": map[string]any{"tools": map[string]any{"listChanged": true}, "logging": map[string]any{}},
				"serverInfo":   map[string]any{"name": "fake", "version": "1"}})
		case "notifications/initialized":
			if has("log") {
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
					"params": map[string]any{"level": "warning", "logger": "fake", "data": "hello from fake"}})
			}
		case "tools/list":
			var p struct{ Cursor string }
			json.Unmarshal(m.Params, &p)
			if p.Cursor == "" {
				reply(m.ID, map[string]any{"tools": []any{tool("echo", true), tool("add", false), tool("crash", false), tool("slow", true)}, "nextCursor": "p2"})
			} else {
				tools := []any{tool("fail", false), tool("image", true), tool("relist", false), tool("ask", false)}
				if extra {
					tools = append(tools, tool("extra", false))
				}
				if has("env") {
					tools = append(tools, tool("env", true))
				}
				reply(m.ID, map[string]any{"tools": tools})
				if has("crash-after-start") {
					os.Exit(2)
				}
			}
		case "ping":
			if !has("noping") {
				reply(m.ID, map[string]any{})
			}
		case "shutdown":
			fmt.Fprintln(os.Stderr, "shutdown received")
			reply(m.ID, map[string]any{})
			os.Exit(0)
		case "tools/call":
			var p struct {
				Name      string
				Arguments json.RawMessage
			}
			json.Unmarshal(m.Params, &p)
			switch p.Name {
			case "echo":
				s, err := echoTool(p.Arguments)
				if err != nil {
					s = err.Error()
				}
				reply(m.ID, text(s))
			case "add":
				var a struct{ A, B int }
				json.Unmarshal(p.Arguments, &a)
				reply(m.ID, text(fmt.Sprint(a.A+a.B)))
			case "crash":
				os.Exit(3)
			case "slow":
				var a struct{ MS int }
				json.Unmarshal(p.Arguments, &a)
				go func(id json.RawMessage) {
					time.Sleep(time.Duration(a.MS) * time.Millisecond)
					reply(id, text("slept"))
				}(m.ID)
			case "fail":
				reply(m.ID, map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": "it failed"}}})
			case "image":
				reply(m.ID, map[string]any{"content": []any{
					map[string]any{"type": "text", "text": "here"},
					map[string]any{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(make([]byte, 10))},
					map[string]any{"type": "resource_link", "uri": "file:///tmp/x.txt"},
				}})
			case "env": // the names of its environment, sorted
				var names []string
				for _, kv := range os.Environ() {
					names = append(names, strings.SplitN(kv, "=", 2)[0])
				}
				slices.Sort(names)
				reply(m.ID, text(strings.Join(names, " ")))
			case "relist":
				extra = !extra
				reply(m.ID, text("ok"))
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
			case "ask":
				var a struct{ Method string }
				json.Unmarshal(p.Arguments, &a)
				pendingAsk = m.ID
				send(map[string]any{"jsonrpc": "2.0", "id": "ask-1", "method": a.Method, "params": map[string]any{}})
			default:
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "unknown tool " + p.Name}})
			}
		default:
			if m.ID != nil {
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			}
		}
	}
	if has("ignore-term") {
		select {}
	}
}
