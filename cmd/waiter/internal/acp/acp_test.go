package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/hologramagent/hologram/kernel/client"
)

func TestPermissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hologram", "acp-permissions.json")
	p := OpenPermissions(path)
	if d, err := p.Lookup("/p", "shell: Run a command"); err != nil || d != "" {
		t.Fatalf("empty store: %q %v", d, err)
	}
	steps := []struct {
		project, kind, decision string
		wantErr                 string
	}{
		{"/p", "shell: Run a command", Allow, ""},
		{"/p", "web: Fetch", Reject, ""},
		{"/q", "shell: Run a command", Reject, ""},
		{"/p", "x", "maybe", "neither"},
		{"", "x", Allow, "empty"},
	}
	for _, s := range steps {
		err := p.Set(s.project, s.kind, s.decision)
		if (err != nil) != (s.wantErr != "") || (err != nil && !strings.Contains(err.Error(), s.wantErr)) {
			t.Fatalf("Set(%q, %q, %q) = %v, want %q", s.project, s.kind, s.decision, err, s.wantErr)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("file mode: %v %v", st, err)
	}
	// A second handle (another waiter acp) sees the same rules.
	q := OpenPermissions(path)
	for _, c := range []struct{ project, kind, want string }{
		{"/p", "shell: Run a command", Allow}, {"/q", "shell: Run a command", Reject}, {"/p", "web: Fetch", Reject}, {"/r", "web: Fetch", ""},
	} {
		if d, err := q.Lookup(c.project, c.kind); err != nil || d != c.want {
			t.Errorf("Lookup(%q, %q) = %q %v, want %q", c.project, c.kind, d, err, c.want)
		}
	}
	rules, err := q.List()
	if err != nil || len(rules) != 3 || rules[0] != (Rule{"/p", "shell: Run a command", Allow}) || rules[2].Project != "/q" {
		t.Fatalf("List = %+v %v", rules, err)
	}
	for _, c := range []struct {
		project, kind string
		want          int
	}{{"/p", "web: Fetch", 1}, {"/p", "web: Fetch", 0}, {"/q", "", 1}, {"/nowhere", "", 0}} {
		if n, err := q.Revoke(c.project, c.kind); err != nil || n != c.want {
			t.Errorf("Revoke(%q, %q) = %d %v, want %d", c.project, c.kind, n, err, c.want)
		}
	}
	if rules, _ := q.List(); len(rules) != 1 {
		t.Fatalf("after revoke: %+v", rules)
	}
	// A broken file is a clear error, never a silent reset.
	for name, content := range map[string]string{"not json": "{", "newer version": `{"version":2,"projects":{}}`} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Lookup("/p", "x"); err == nil {
			t.Errorf("%s: no error", name)
		}
		if err := q.Set("/p", "x", Allow); err == nil {
			t.Errorf("%s: Set overwrote the file", name)
		}
	}
}

func TestProjectPath(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{"main.go", "/proj/main.go", ""},
		{"sub/../a.txt", "/proj/a.txt", ""},
		{"/proj/x/y", "/proj/x/y", ""},
		{"/proj", "/proj", ""},
		{"../etc/passwd", "", "outside the project"},
		{"/etc/passwd", "", "outside the project"},
		{"/projector/a", "", "outside the project"},
		{"", "", "empty"},
		{"a\x00b", "", "NUL"},
	}
	for _, c := range cases {
		got, err := projectPath("/proj", c.in)
		if got != c.want || (err != nil) != (c.err != "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("projectPath(%q) = %q, %v; want %q, %q", c.in, got, err, c.want, c.err)
		}
	}
}

func TestPromptInput(t *testing.T) {
	text := func(s string) sdk.ContentBlock { return sdk.TextBlock(s) }
	cases := []struct {
		name      string
		blocks    []sdk.ContentBlock
		wantInput string
		wantAtts  int
		wantErr   string
	}{
		{"text", []sdk.ContentBlock{text("fix "), text("the bug")}, "fix \nthe bug", 0, ""},
		{"link", []sdk.ContentBlock{text("see"), sdk.ResourceLinkBlock("a.go", "file:///p/a.go")}, "see\n[a.go](file:///p/a.go)", 0, ""},
		{"embedded", []sdk.ContentBlock{sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///p/a.go", Text: "package a"}})}, "(see the attached context)", 1, ""},
		{"image", []sdk.ContentBlock{text("what is it"), sdk.ImageBlock("iVBORw0KGgo=", "image/png")}, "what is it", 1, ""},
		{"bad image", []sdk.ContentBlock{sdk.ImageBlock("%%%", "image/png")}, "", 0, "not base64"},
		{"audio", []sdk.ContentBlock{sdk.AudioBlock("AAAA", "audio/wav")}, "", 0, "this agent takes"},
		{"empty", []sdk.ContentBlock{text("  ")}, "", 0, "empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, atts, err := promptInput(c.blocks)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(errText(err), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || in != c.wantInput || len(atts) != c.wantAtts {
				t.Fatalf("= %q, %d attachments, %v", in, len(atts), err)
			}
		})
	}
}

// errText is an error's message with its data (the SDK's RequestError keeps the reason there).
func errText(err error) string {
	if re, ok := err.(*sdk.RequestError); ok {
		raw, _ := json.Marshal(re.Data)
		return re.Message + " " + string(raw)
	}
	return err.Error()
}

func TestStopReason(t *testing.T) {
	for in, want := range map[string]sdk.StopReason{
		"done": sdk.StopReasonEndTurn, "short_circuit": sdk.StopReasonEndTurn, "all_denied": sdk.StopReasonEndTurn, "": sdk.StopReasonEndTurn,
		"cancelled": sdk.StopReasonCancelled, "max_rounds": sdk.StopReasonMaxTurnRequests, "max_wall": sdk.StopReasonMaxTurnRequests,
		"token_budget": sdk.StopReasonMaxTokens,
	} {
		if got := stopReason(in); got != want {
			t.Errorf("stopReason(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReplay(t *testing.T) {
	hist := []client.Message{
		{Role: "user", Content: "list files"},
		{Role: "assistant", ToolCalls: []client.ToolCall{{ID: "c1", Name: "files_list", Arguments: `{"dir":"."}`}}},
		{Role: "tool", ToolCallID: "c1", Content: "a.go", ToolStatus: "ok"},
		{Role: "assistant", Content: "there is a.go"},
		{Role: "user", Content: "run it"},
		{Role: "assistant", ToolCalls: []client.ToolCall{{ID: "c2", Name: "shell_run", Arguments: `{}`}}},
		{Role: "tool", ToolCallID: "c2", Content: "not run: denied", ToolStatus: "denied"},
	}
	var got []string
	for _, u := range replay(hist) {
		raw, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			SessionUpdate, Status, Title, ToolCallID string
		}
		_ = json.Unmarshal(raw, &v)
		got = append(got, strings.Join([]string{v.SessionUpdate, v.ToolCallID, v.Title, v.Status}, "/"))
	}
	want := []string{
		"user_message_chunk///", "tool_call/c1/files_list/in_progress", "tool_call_update/c1//completed", "agent_message_chunk///",
		"user_message_chunk///", "tool_call/c2/shell_run/in_progress", "tool_call_update/c2//failed",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("replay:\n got %v\nwant %v", got, want)
	}
}

func TestEditorTools(t *testing.T) {
	cases := []struct {
		caps      sdk.ClientCapabilities
		remote    bool
		wantTools string
		wantHide  string
	}{
		{sdk.ClientCapabilities{}, false, "", ""},
		{sdk.ClientCapabilities{}, true, "", "files_read,files_write,files_list,files_search,shell_run,shell_allowed"},
		{sdk.ClientCapabilities{Terminal: true}, false, toolRun, "shell_run,shell_allowed"},
		{sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true}}, false, toolReadFile, "files_read,files_write,files_list,files_search"},
		{sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}, false, toolReadFile + "," + toolWriteFile, "files_read,files_write,files_list,files_search"},
		{sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{WriteTextFile: true}, Terminal: true}, true, toolWriteFile + "," + toolRun, "files_read,files_write,files_list,files_search,shell_run,shell_allowed"},
	}
	for _, c := range cases {
		tools, hide := editorTools(c.caps, c.remote)
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Name)
			if !json.Valid(tl.Parameters) {
				t.Errorf("%s: parameters are not JSON", tl.Name)
			}
		}
		if strings.Join(names, ",") != c.wantTools || strings.Join(hide, ",") != c.wantHide {
			t.Errorf("editorTools(%+v) = %v, hide %v", c.caps, names, hide)
		}
	}
}

func TestCheckMCP(t *testing.T) {
	stdio := sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: "fs", Command: "npx", Args: []string{"-y", "x"}}}
	cases := []struct {
		name    string
		remote  bool
		servers []sdk.McpServer
		wantErr string
	}{
		{"none", false, nil, ""},
		{"stdio", false, []sdk.McpServer{stdio}, ""},
		{"remote", true, []sdk.McpServer{stdio}, "cannot run on a remote kernel"},
		{"http", false, []sdk.McpServer{{Http: &sdk.McpServerHttpInline{Name: "w", Url: "http://x"}}}, "only stdio servers"},
		{"empty command", false, []sdk.McpServer{{Stdio: &sdk.McpServerStdio{Name: "e"}}}, "the command is empty"},
		{"too many", false, make17(stdio), "at most 16"},
	}
	for _, c := range cases {
		a := New(nil, nil, Options{Remote: c.remote})
		err := a.checkMCP(c.servers)
		if (err != nil) != (c.wantErr != "") || (err != nil && !strings.Contains(errText(err), c.wantErr)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.wantErr)
		}
	}
	a := New(nil, nil, Options{})
	for in, want := range map[string]string{"everything": "acp-" + a.connID + "-everything", "my server/1": "acp-" + a.connID + "-my-server-1", "..": "acp-" + a.connID + "-mcp"} {
		if got := a.pluginName(in); got != want {
			t.Errorf("pluginName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := a.pluginName(strings.Repeat("x", 100)); len(got) != 64 {
		t.Errorf("a long name: %d bytes", len(got))
	}
}

func make17(s sdk.McpServer) []sdk.McpServer {
	out := make([]sdk.McpServer, 17)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestInitialize(t *testing.T) {
	for _, remote := range []bool{false, true} {
		a := New(nil, nil, Options{Remote: remote, Version: "1.2.3"})
		resp, err := a.Initialize(t.Context(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
			ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true}}})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(resp)
		if resp.ProtocolVersion != 1 || !resp.AgentCapabilities.LoadSession || resp.AgentCapabilities.SessionCapabilities.List == nil || resp.AgentInfo.Version != "1.2.3" {
			t.Fatalf("remote %v: %s", remote, raw)
		}
		if got := len(resp.AuthMethods); (got == 1) != remote || (remote && !strings.Contains(string(raw), `"HOLOGRAM_TOKEN"`)) {
			t.Fatalf("remote %v: auth methods %s", remote, raw)
		}
		if !a.caps.Fs.ReadTextFile {
			t.Fatal("the client's capabilities were not kept")
		}
	}
}
