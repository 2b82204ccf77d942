//go:build integration

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/kerneltest"
)

// The ACP issue's end-to-end test: the official ACP TypeScript client
// (cmd/waiter/internal/acp/testdata/npm, installed by `make acp-peers`) starts `waiter acp` as an
// editor does, against the real homed, its built-in notes and shell plugins, and
// ../shared/tools/fake_openai.py.

// acpUpdate is one session/update notification as the editor received it.
type acpUpdate struct {
	SessionID string `json:"sessionId"`
	Update    struct {
		SessionUpdate string `json:"sessionUpdate"`
		Content       json.RawMessage
		Title         string `json:"title"`
		Status        string `json:"status"`
		Kind          string `json:"kind"`
		ToolCallID    string `json:"toolCallId"`
		Used          int    `json:"used"`
		Size          int    `json:"size"`
	} `json:"update"`
}

// text is the update's text: a chunk's, or a tool call's content texts joined.
func (u acpUpdate) text() string {
	var one struct{ Text string }
	if json.Unmarshal(u.Update.Content, &one) == nil && one.Text != "" {
		return one.Text
	}
	var many []struct{ Content struct{ Text string } }
	_ = json.Unmarshal(u.Update.Content, &many)
	var b strings.Builder
	for _, c := range many {
		b.WriteString(c.Content.Text)
	}
	return b.String()
}

type acpTurn struct {
	StopReason  string      `json:"stopReason"`
	Updates     []acpUpdate `json:"updates"`
	Permissions []struct {
		ToolCall struct {
			ToolCallID string `json:"toolCallId"`
			Title      string `json:"title"`
		} `json:"toolCall"`
		Options []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	} `json:"permissions"`
}

// message joins the turn's agent_message_chunk texts.
func (t acpTurn) message() string {
	var b strings.Builder
	for _, u := range t.Updates {
		if u.Update.SessionUpdate == "agent_message_chunk" {
			b.WriteString(u.text())
		}
	}
	return b.String()
}

// of returns the updates of one kind.
func (t acpTurn) of(kind string) []acpUpdate {
	var out []acpUpdate
	for _, u := range t.Updates {
		if u.Update.SessionUpdate == kind {
			out = append(out, u)
		}
	}
	return out
}

type acpSessions struct {
	Sessions []struct {
		SessionID string `json:"sessionId"`
		Cwd       string `json:"cwd"`
		Title     string `json:"title"`
	} `json:"sessions"`
}

func (l acpSessions) ids() []string {
	var out []string
	for _, s := range l.Sessions {
		out = append(out, s.SessionID)
	}
	return out
}

type acpConfig struct {
	ConfigOptions []struct {
		ID           string `json:"id"`
		CurrentValue string `json:"currentValue"`
		Options      []struct {
			Value string `json:"value"`
		} `json:"options"`
	} `json:"configOptions"`
}

type acpError struct {
	Error *string `json:"error"`
	Code  int     `json:"code"`
}

type acpReport struct {
	Initialize struct {
		ProtocolVersion   int `json:"protocolVersion"`
		AgentCapabilities struct {
			LoadSession         bool `json:"loadSession"`
			SessionCapabilities struct {
				List *struct{} `json:"list"`
			} `json:"sessionCapabilities"`
		} `json:"agentCapabilities"`
		AuthMethods []json.RawMessage `json:"authMethods"`
	} `json:"initialize"`
	NewSession struct {
		SessionID string `json:"sessionId"`
		acpConfig
	} `json:"newSession"`
	Hello, Tool, Allow, Reject, Cancel, AfterCancel, Always1, Always2, Always3 acpTurn
	NoFs, FsRead, FsWrite, FsOutside, McpEcho, McpElsewhere                    acpTurn
	TermRun, TermReject, TermShell                                             acpTurn
	TermCalls                                                                  []struct{ Method, ID, Command, Cwd string } `json:"termCalls"`
	McpSession                                                                 string                                      `json:"mcpSession"`
	McpHTTP                                                                    acpError                                    `json:"mcpHttp"`
	FsCalls                                                                    []struct{ Method, Path, Content string }    `json:"fsCalls"`
	Files                                                                      map[string]string                           `json:"files"`
	BadModel                                                                   acpError                                    `json:"badModel"`
	SetModel                                                                   acpConfig                                   `json:"setModel"`
	OtherSession                                                               string                                      `json:"otherSession"`
	OtherModes                                                                 struct {
		CurrentModeID  string `json:"currentModeId"`
		AvailableModes []struct {
			ID string `json:"id"`
		} `json:"availableModes"`
	} `json:"otherModes"`
	UnknownSession acpError    `json:"unknownSession"`
	List, ListAll  acpSessions `json:"-"`
	Replay         []acpUpdate `json:"replay"`
}

func TestACPEditorEndToEnd(t *testing.T) {
	peer := filepath.Join("..", "waiter", "internal", "acp", "testdata", "npm")
	if _, err := os.Stat(filepath.Join(peer, "node_modules", "@agentclientprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the ACP TypeScript client is not installed (%v): run `make acp-peers` (HOLOGRAM_CI=%q)", err, os.Getenv("HOLOGRAM_CI"))
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed (make deps installs it)")
	}
	e := newEnv(t)
	bp := filepath.Join(e.root, "builtin")
	buildBuiltins(t, bp, "notes", "shell")
	t.Setenv("HOLOGRAM_PLUGINS_DIR", bp)
	shellConf := filepath.Join(e.config, "hologram", "plugins")
	if err := os.MkdirAll(shellConf, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shellConf, "shell.toml"), []byte("[[allow]]\nprogram = \"echo\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fake := startFakeOpenAI(t)
	everything := kerneltest.NPMPeer(t, "@modelcontextprotocol/server-everything")

	// No kernel yet: waiter acp says so on stderr, with the fix, and exits non-zero.
	out, errOut, code := e.waiter("", nil, "acp")
	if code == 0 || out != "" || !strings.Contains(errOut, "no kernel answers on "+e.sock) || !strings.Contains(errOut, "start one with `homed`") {
		t.Fatalf("waiter acp without a kernel: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	e.start()
	e.addProvider(fake.url, "sk-acp")
	if out, errOut, code := e.waiter("", nil, "plugin", "enable", "shell"); code != 0 { // the shell ships disabled
		t.Fatalf("enable shell: %d %s%s", code, out, errOut)
	}
	for _, p := range []string{"notes", "shell"} {
		e.waitPlugin(p, "running", func(p client.Plugin) bool { return p.State == "running" && len(p.Tools) > 0 })
	}
	project, other := filepath.Join(e.root, "project"), filepath.Join(e.root, "other")
	for _, d := range []string{project, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	start := time.Now()
	cmd := exec.Command("node", filepath.Join(peer, "editor.mjs"), filepath.Join(binDir, "waiter"), project, other, everything)
	cmd.Env = e.environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the editor: %v\n%s", err, stderr.String())
	}
	t.Logf("the editor's steps took %s", time.Since(start).Round(time.Millisecond))
	var rep acpReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("the editor's report: %v\n%s", err, stdout.String())
	}
	var lists struct{ List, ListAll acpSessions }
	if err := json.Unmarshal(stdout.Bytes(), &lists); err != nil {
		t.Fatal(err)
	}
	rep.List, rep.ListAll = lists.List, lists.ListAll
	sid := rep.NewSession.SessionID

	t.Run("initialize", func(t *testing.T) {
		in := rep.Initialize
		if in.ProtocolVersion != 1 || !in.AgentCapabilities.LoadSession || in.AgentCapabilities.SessionCapabilities.List == nil || len(in.AuthMethods) != 0 {
			t.Fatalf("initialize: %+v", in)
		}
		if sid == "" || len(rep.NewSession.ConfigOptions) != 1 || rep.NewSession.ConfigOptions[0].ID != "model" || rep.NewSession.ConfigOptions[0].CurrentValue != "default" {
			t.Fatalf("session/new: %+v", rep.NewSession)
		}
	})
	t.Run("streamed prompt", func(t *testing.T) {
		h := rep.Hello
		if h.StopReason != "end_turn" || h.message() != "PONG hello editor" {
			t.Fatalf("hello: stop %q, message %q", h.StopReason, h.message())
		}
		// usage_update is the L1 window the turn's prompt held: empty in a new session's first
		// turn, the earlier turns later on.
		u := h.of("usage_update")
		if len(u) != 1 || u[0].Update.Size <= 0 || u[0].Update.Used != 0 {
			t.Fatalf("usage_update: %+v", u)
		}
		u = rep.AfterCancel.of("usage_update")
		if len(u) != 1 || u[0].Update.Used <= 0 || u[0].Update.Used > u[0].Update.Size {
			t.Fatalf("a later usage_update: %+v", u)
		}
	})
	t.Run("tool call with its updates", func(t *testing.T) {
		tl := rep.Tool
		calls, ups := tl.of("tool_call"), tl.of("tool_call_update")
		if len(calls) != 1 || calls[0].Update.Title != "notes_create" || calls[0].Update.Status != "in_progress" {
			t.Fatalf("tool_call: %+v", calls)
		}
		if len(ups) != 1 || ups[0].Update.ToolCallID != calls[0].Update.ToolCallID || ups[0].Update.Status != "completed" {
			t.Fatalf("tool_call_update: %+v", ups)
		}
		if tl.StopReason != "end_turn" || !strings.HasPrefix(tl.message(), "DONE ") {
			t.Fatalf("after the tool: stop %q, message %q", tl.StopReason, tl.message())
		}
	})
	shellResult := func(t *testing.T, tr acpTurn) acpUpdate {
		t.Helper()
		ups := tr.of("tool_call_update")
		if len(ups) != 1 {
			t.Fatalf("tool_call_update: %+v", tr.Updates)
		}
		return ups[0]
	}
	t.Run("permission allow", func(t *testing.T) {
		if len(rep.Allow.Permissions) != 1 {
			t.Fatalf("permission requests: %+v", rep.Allow.Permissions)
		}
		p := rep.Allow.Permissions[0]
		var kinds []string
		for _, o := range p.Options {
			kinds = append(kinds, o.Kind)
		}
		if strings.Join(kinds, ",") != "allow_once,allow_always,reject_once,reject_always" || !strings.Contains(p.ToolCall.Title, "echo acp-allowed") {
			t.Fatalf("permission request: %+v", p)
		}
		if u := shellResult(t, rep.Allow); u.Update.Status != "completed" || !strings.Contains(u.text(), "acp-allowed") || p.ToolCall.ToolCallID != u.Update.ToolCallID {
			t.Fatalf("allowed command: %+v %q", u.Update, u.text())
		}
	})
	t.Run("permission reject", func(t *testing.T) {
		if len(rep.Reject.Permissions) != 1 {
			t.Fatalf("permission requests: %+v", rep.Reject.Permissions)
		}
		if u := shellResult(t, rep.Reject); u.Update.Status != "failed" || !strings.Contains(u.text(), "not run") {
			t.Fatalf("rejected command: %+v %q", u.Update, u.text())
		}
		if rep.Reject.StopReason != "end_turn" {
			t.Fatalf("stop %q", rep.Reject.StopReason)
		}
	})
	t.Run("cancel mid-turn", func(t *testing.T) {
		if rep.Cancel.StopReason != "cancelled" || len(rep.Cancel.Permissions) != 1 {
			t.Fatalf("cancel: stop %q, %d permission requests", rep.Cancel.StopReason, len(rep.Cancel.Permissions))
		}
		if strings.Contains(rep.Cancel.message(), "acp-cancelled") {
			t.Fatalf("the cancelled command ran: %q", rep.Cancel.message())
		}
		if rep.AfterCancel.StopReason != "end_turn" || rep.AfterCancel.message() != "PONG still there?" {
			t.Fatalf("the turn after the cancel: %q %q", rep.AfterCancel.StopReason, rep.AfterCancel.message())
		}
	})
	t.Run("allow always is kept per project", func(t *testing.T) {
		if len(rep.Always1.Permissions) != 1 || !strings.Contains(shellResult(t, rep.Always1).text(), "acp-always-1") {
			t.Fatalf("always 1: %+v", rep.Always1)
		}
		for i, tr := range []acpTurn{rep.Always2, rep.Always3} {
			if len(tr.Permissions) != 0 || !strings.Contains(shellResult(t, tr).text(), "acp-always-") || shellResult(t, tr).Update.Status != "completed" {
				t.Fatalf("always %d: asked %d times, %+v", i+2, len(tr.Permissions), tr.Updates)
			}
		}
		out, errOut, code := e.waiter("", nil, "acp", "permissions", "--json")
		var rules []struct{ Project, Kind, Decision string }
		if code != 0 || json.Unmarshal([]byte(out), &rules) != nil || len(rules) != 1 ||
			rules[0].Project != project || rules[0].Kind != "shell: Run a command" || rules[0].Decision != "allow" {
			t.Fatalf("acp permissions: %d %s %s", code, out, errOut)
		}
		if out, errOut, code := e.waiter("", nil, "acp", "permissions", "revoke", project); code != 0 || !strings.Contains(out, "revoked 1") {
			t.Fatalf("revoke: %d %s %s", code, out, errOut)
		}
		if out, _, code := e.waiter("", nil, "acp", "permissions"); code != 0 || !strings.Contains(out, "no kept answers") {
			t.Fatalf("after revoke: %d %s", code, out)
		}
		if _, errOut, code := e.waiter("", nil, "acp", "permissions", "revoke", project); code != 1 || !strings.Contains(errOut, "no rule for") {
			t.Fatalf("revoke again: %d %s", code, errOut)
		}
	})
	t.Run("model config option", func(t *testing.T) {
		if rep.BadModel.Error == nil || rep.BadModel.Code != -32602 {
			t.Fatalf("an unknown model: %+v", rep.BadModel)
		}
		if len(rep.SetModel.ConfigOptions) != 1 || rep.SetModel.ConfigOptions[0].CurrentValue != "fake-1" {
			t.Fatalf("set model: %+v", rep.SetModel)
		}
		sessions := e.sessions()
		if s, ok := sessions[sid]; !ok || s.Model != "fake-1" || s.Channel != "acp" || s.Partner != project {
			t.Fatalf("the kernel's session: %+v", s)
		}
		// Modes, for older clients, are the same models.
		if m := rep.OtherModes; m.CurrentModeID != "default" || len(m.AvailableModes) != 2 || m.AvailableModes[1].ID != "fake-1" {
			t.Fatalf("modes: %+v", m)
		}
		if s := sessions[rep.OtherSession]; s.Model != "fake-1" {
			t.Fatalf("session/set_mode did not set the model: %+v", s)
		}
	})
	t.Run("fs through the editor", func(t *testing.T) { fsThroughTheEditor(t, rep, project, fake) })
	t.Run("commands in the editor's terminal", func(t *testing.T) {
		if len(rep.TermRun.Permissions) != 1 || !strings.Contains(rep.TermRun.Permissions[0].ToolCall.Title, "$ echo from the terminal") {
			t.Fatalf("the permission: %+v", rep.TermRun.Permissions)
		}
		if got := rep.TermRun.message(); !strings.HasPrefix(got, "DONE $ echo from the terminal") || !strings.Contains(got, "exit 0") || !strings.Contains(got, "from the terminal\n") {
			t.Fatalf("run in the terminal: %q", got)
		}
		sawTerminal := false
		for _, u := range rep.TermRun.of("tool_call_update") {
			sawTerminal = sawTerminal || strings.Contains(string(u.Update.Content), `"terminalId":"term-1"`)
		}
		if !sawTerminal {
			t.Fatalf("the tool call did not show the terminal: %+v", rep.TermRun.Updates)
		}
		if got := rep.TermReject.message(); !strings.Contains(got, "not run: denied") {
			t.Fatalf("a rejected command: %q", got)
		}
		if got := rep.TermShell.message(); got != "NOTOOL shell_run" {
			t.Fatalf("the shell plugin was offered beside the editor's terminal: %q", got)
		}
		if len(rep.TermCalls) != 2 || rep.TermCalls[0].Method != "create" || rep.TermCalls[0].Cwd != project || rep.TermCalls[1].Method != "release" {
			t.Fatalf("the editor's terminal requests: %+v", rep.TermCalls)
		}
	})
	t.Run("the editor's MCP servers", func(t *testing.T) {
		if got := rep.McpEcho.message(); !strings.Contains(got, "from the editor") || !strings.HasPrefix(got, "DONE ") {
			t.Fatalf("the session's MCP server: %q %+v", got, rep.McpEcho.Updates)
		}
		if got := rep.McpElsewhere.message(); got != "NOTOOL echo" {
			t.Fatalf("another session saw the MCP server's tool: %q", got)
		}
		if rep.McpHTTP.Error == nil || !strings.Contains(*rep.McpHTTP.Error, "only stdio servers") {
			t.Fatalf("an http MCP server: %+v", rep.McpHTTP)
		}
		// waiter acp removed the session's server when the editor stopped it.
		out, errOut, code := e.waiter("", nil, "plugin", "list", "--json")
		if code != 0 {
			t.Fatalf("plugin list: %d %s", code, errOut)
		}
		var list []client.Plugin
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatal(err)
		}
		for _, p := range list {
			if strings.HasPrefix(p.Name, "acp-") {
				t.Fatalf("the editor's MCP server outlived its editor: %+v", p)
			}
		}
	})
	t.Run("unknown session", func(t *testing.T) {
		if rep.UnknownSession.Error == nil || rep.UnknownSession.Code != -32002 {
			t.Fatalf("%+v", rep.UnknownSession)
		}
	})
	t.Run("list and load", func(t *testing.T) {
		if got := rep.List.ids(); len(got) != 1 || got[0] != sid || rep.List.Sessions[0].Cwd != project {
			t.Fatalf("session/list of the project: %+v", rep.List)
		}
		if got := rep.ListAll.ids(); len(got) != 3 || !contains(got, sid) || !contains(got, rep.OtherSession) || !contains(got, rep.McpSession) {
			t.Fatalf("session/list: %+v", rep.ListAll)
		}
		var kinds []string
		var user, agent []string
		for _, u := range rep.Replay {
			if u.SessionID != sid {
				t.Fatalf("replayed update of session %q", u.SessionID)
			}
			kinds = append(kinds, u.Update.SessionUpdate)
			switch u.Update.SessionUpdate {
			case "user_message_chunk":
				user = append(user, u.text())
			case "agent_message_chunk":
				agent = append(agent, u.text())
			}
		}
		if len(user) != 9 || user[0] != "hello editor" || agent[0] != "PONG hello editor" || !contains(kinds, "tool_call") || !contains(kinds, "tool_call_update") {
			t.Fatalf("session/load replay: kinds %v, user %q, agent %q", kinds, user, agent)
		}
	})
}

// fsThroughTheEditor is checked by TestACPEditorEndToEnd (below the report's other checks).
func fsThroughTheEditor(t *testing.T, rep acpReport, project string, fake *fakeOpenAI) {
	if got := rep.NoFs.message(); got != "NOTOOL editor_read_file" {
		t.Fatalf("an editor without fs capabilities got the editor tools: %q", got)
	}
	if got := rep.FsRead.message(); got != "DONE // unsaved edit in the editor" {
		t.Fatalf("read through the editor: %q (%+v)", got, rep.FsRead.Updates)
	}
	if ups := rep.FsRead.of("tool_call_update"); len(ups) != 1 || ups[0].Update.Status != "completed" {
		t.Fatalf("read's tool_call_update: %+v", ups)
	}
	tools := fake.offered(t, `CALL editor_read_file {"path":"main.go","line":2,"limit":1}`)
	if !contains(tools, "editor_read_file") || !contains(tools, "editor_write_file") {
		t.Fatalf("the tools offered with fs: %v", tools)
	}
	want := filepath.Join(project, "out", "new.txt")
	if rep.Files[want] != "written by the agent" || !strings.HasPrefix(rep.FsWrite.message(), "DONE wrote 20 bytes to "+want) {
		t.Fatalf("write through the editor: files %v, reply %q", rep.Files, rep.FsWrite.message())
	}
	if len(rep.FsCalls) != 2 || rep.FsCalls[0].Method != "read" || rep.FsCalls[0].Path != filepath.Join(project, "main.go") || rep.FsCalls[1].Method != "write" {
		t.Fatalf("the editor's fs requests: %+v", rep.FsCalls)
	}
	if ups := rep.FsOutside.of("tool_call_update"); len(ups) != 1 || ups[0].Update.Status != "failed" || !strings.Contains(ups[0].text(), "outside the project") {
		t.Fatalf("a path outside the project: %+v", rep.FsOutside.Updates)
	}
}

// sessions lists the kernel's sessions by id (over the socket, as waiter does).
func (e *env) sessions() map[string]client.Session {
	e.t.Helper()
	out, errOut, code := e.waiter("", nil, "session", "list", "--json")
	if code != 0 {
		e.t.Fatalf("session list: %d %s", code, errOut)
	}
	var list []client.Session
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		e.t.Fatalf("session list: %v\n%s", err, out)
	}
	m := map[string]client.Session{}
	for _, s := range list {
		m[s.ID] = s
	}
	return m
}
