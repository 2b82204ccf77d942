//go:build integration

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/kerneltest"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// The security issue's end-to-end tests (ARCHITECTURE.md §4, §5): the real homed, real built-in
// plugins and MCP servers, and ../shared/tools/fake_openai.py, the project's independent fake
// provider, which calls tool NAME when the last user message holds "CALL NAME {json}" and NAME is
// offered (else it answers "NOTOOL NAME"), and answers "DONE <result>" after a tool result.

// secret is the owner's data: in a note, a file, a file under an MCP server's root and the
// owner's own chat. It must never reach a group's or an end user's event, search or reply.
const secret = "SECRET-4711"

// fakeOpenAI is a running fake_openai.py.
type fakeOpenAI struct {
	url, log string
}

func startFakeOpenAI(t *testing.T) *fakeOpenAI {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "tools", "fake_openai.py"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("the shared fake provider: %v (the repository's ../shared/tools/fake_openai.py)", err)
	}
	dir := t.TempDir()
	port, log := filepath.Join(dir, "port"), filepath.Join(dir, "log")
	cmd := exec.Command("python3", script, port, log)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("python3 %s: %v", script, err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if raw, err := os.ReadFile(port); err == nil && len(raw) > 0 {
			return &fakeOpenAI{url: "http://127.0.0.1:" + strings.TrimSpace(string(raw)) + "/v1", log: log}
		}
		if time.Now().After(deadline) {
			t.Fatal("fake_openai.py wrote no port in 10 s")
		}
	}
}

// offered returns the tools of the last request whose last message is the user message text.
func (f *fakeOpenAI) offered(t *testing.T, text string) []string {
	t.Helper()
	fh, err := os.Open(f.log)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var tools []string
	found := false
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var rec struct {
			Body struct {
				Messages []struct {
					Role    string `json:"role"`
					Content any    `json:"content"`
				} `json:"messages"`
				Tools []struct {
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				} `json:"tools"`
			} `json:"body"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || len(rec.Body.Messages) == 0 {
			continue
		}
		last := rec.Body.Messages[len(rec.Body.Messages)-1]
		if s, _ := last.Content.(string); last.Role != "user" || !strings.Contains(s, text) {
			continue
		}
		found, tools = true, nil
		for _, tl := range rec.Body.Tools {
			tools = append(tools, tl.Function.Name)
		}
	}
	if !found {
		t.Fatalf("the fake provider saw no request ending with %q", text)
	}
	return tools
}

// buildBuiltins builds the named built-in plugins (binary + plugin.json) into dir/<name>.
func buildBuiltins(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, name := range names {
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join("..", "..", "plugins", "builtin", name)
		cmd := exec.Command(goTool(t), "build", "-trimpath", "-tags=sqlite_fts5", "-o", filepath.Join(dst, name), ".")
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, out)
		}
		raw, err := os.ReadFile(filepath.Join(src, "plugin.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, "plugin.json"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// scopeEnv is one homed with the owner's data, a group session and an end user's /v1 session.
type scopeEnv struct {
	*env
	h    *homed
	fake *fakeOpenAI
	fsd  string // the filesystem MCP server's root
}

func newScopeEnv(t *testing.T) *scopeEnv {
	t.Helper()
	everything := kerneltest.NPMPeer(t, "@modelcontextprotocol/server-everything")
	fsPeer := kerneltest.NPMPeer(t, "@modelcontextprotocol/server-filesystem")
	e := newEnv(t)
	bp := filepath.Join(e.root, "builtin")
	buildBuiltins(t, bp, "files", "notes", "shell")
	t.Setenv("HOLOGRAM_PLUGINS_DIR", bp)
	shellConf := filepath.Join(e.config, "hologram", "plugins")
	if err := os.MkdirAll(shellConf, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shellConf, "shell.toml"), []byte("[[allow]]\nprogram = \"echo\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &scopeEnv{env: e, fake: startFakeOpenAI(t), fsd: filepath.Join(e.root, "fsroot")}
	s.h = e.start()
	e.addProvider(s.fake.url, "sk-scopes")
	for _, p := range []string{"files", "notes"} {
		e.waitPlugin(p, "running", func(p client.Plugin) bool { return p.State == "running" && len(p.Tools) > 0 })
	}
	if err := os.MkdirAll(s.fsd, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.fsd, "diary.txt"), []byte("dear diary, the code is "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.fsd, _ = filepath.EvalSymlinks(s.fsd)
	for _, add := range [][]string{
		{"everything", "--command", "node '" + everything + "' stdio", "--visibility", "any"},
		{"fs", "--command", "node '" + fsPeer + "' " + s.fsd},
	} {
		if out, errOut, code := e.waiter("", nil, append([]string{"plugin", "add"}, add...)...); code != 0 {
			t.Fatalf("plugin add %v: %d %s%s", add, code, out, errOut)
		}
	}
	e.waitPlugin("everything", "running", func(p client.Plugin) bool { return p.State == "running" && contains(p.Tools, "echo") })
	e.waitPlugin("fs", "running", func(p client.Plugin) bool { return p.State == "running" && contains(p.Tools, "read_text_file") })
	if err := os.WriteFile(filepath.Join(e.data, "files", "bank.txt"), []byte("the bank code is "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The owner's note and chat (owner-private), cooled to L2 so coldcontext_query could reach them.
	if got := e.ask(`CALL notes_create {"title":"Locker","body":"my locker PIN is ` + secret + `"}`); !strings.HasPrefix(got, "DONE ") {
		t.Fatalf("the owner's note: %q", got)
	}
	if got := e.ask("remember my bank PIN " + secret); !strings.Contains(got, secret) {
		t.Fatalf("the owner's chat: %q", got)
	}
	if code, out := e.postJSON("/api/v1/memory/cool-all", ""); code != 200 {
		t.Fatalf("cool-all: %d %s", code, out)
	}
	if code, out := e.postJSON("/api/v1/sessions", client.Session{ID: "grp", Title: "QQ group 1", Channel: "qq", Partner: "group_1", Scope: "group:qq/group_1"}); code/100 != 2 {
		t.Fatalf("create the group session: %d %s", code, out)
	}
	return s
}

// say sends text in a session as its people would and returns the reply: the owner through
// waiter, the group's session (as its channel turns run) through waiter --session, an end user
// through /v1/chat/completions with "user".
func (s *scopeEnv) say(t *testing.T, session, text string) string {
	t.Helper()
	switch session {
	case "owner":
		return s.ask(text)
	case "group":
		out, errOut, code := s.waiter("", nil, "ask", "--session", "grp", text)
		if code != 0 {
			t.Fatalf("waiter ask --session grp: %d %s", code, errOut)
		}
		return strings.TrimSpace(out)
	case "user":
		code, out := s.postJSON("/v1/chat/completions", map[string]any{"user": "alice", "messages": []map[string]string{{"role": "user", "content": text}}})
		if code != 200 {
			t.Fatalf("/v1 as alice: %d %s", code, out)
		}
		var r struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(out, &r); err != nil || len(r.Choices) != 1 {
			t.Fatalf("/v1 answer %s: %v", out, err)
		}
		return r.Choices[0].Message.Content
	}
	t.Fatalf("unknown session %s", session)
	return ""
}

// TestToolsObeyScopes: for each tool × session (a QQ group's, a /v1 end user's, the owner's),
// whether the tool is offered, whether it ran, and that no owner data reaches a group's or a
// user's reply, event or search. The owner's rows are the positive controls: the same calls
// return the owner's data there, so a missing gate would show up in the others.
func TestToolsObeyScopes(t *testing.T) {
	s := newScopeEnv(t)
	type row struct {
		tool, args string
		any        bool // offered to everyone
		leaks      bool // returns the owner's data when run by the owner
	}
	rows := []row{
		{"notes_search", `{"query":"locker"}`, false, true},
		{"notes_list", `{}`, false, false},
		{"files_read", `{"path":"bank.txt"}`, false, true},
		{"files_write", `{"path":"pwned.txt","content":"written by %s"}`, false, false},
		{"read_text_file", `{"path":"` + filepath.Join(s.fsd, "diary.txt") + `"}`, false, true}, // an MCP server added without --visibility
		{"echo", `{"message":"hello from %s"}`, true, false},                                    // an MCP server added with --visibility any
		{"coldcontext_query", `{"query":"my bank PIN"}`, true, true},                            // in the session's scope
		{"time_now", `{}`, true, false},
	}
	for _, session := range []string{"group", "user", "owner"} {
		for _, r := range rows {
			t.Run(session+"/"+r.tool, func(t *testing.T) {
				args := r.args
				if strings.Contains(args, "%s") {
					args = fmt.Sprintf(args, session)
				}
				text := "CALL " + r.tool + " " + args
				reply := s.say(t, session, text)
				if session != "owner" && strings.Contains(reply, secret) {
					t.Errorf("owner data in the %s's reply: %q", session, reply)
				}
				offered := contains(s.fake.offered(t, text), r.tool)
				wantOffered := r.any || session == "owner"
				if offered != wantOffered {
					t.Fatalf("offered %v, want %v", offered, wantOffered)
				}
				switch {
				case wantOffered && !strings.HasPrefix(reply, "DONE "):
					t.Fatalf("offered but not run: %q", reply)
				case !wantOffered && reply != "NOTOOL "+r.tool:
					t.Fatalf("not offered, yet the reply is %q", reply)
				}
				if leaked := strings.Contains(reply, secret); session == "owner" && r.leaks && !leaked {
					t.Fatalf("positive control: the owner's %s did not return the owner's data: %q", r.tool, reply)
				}
				t.Logf("%-6s %-17s offered=%-5v reply=%.70q", session, r.tool, offered, reply)
			})
		}
		if session == "user" {
			if _, err := os.Stat(filepath.Join(s.data, "files", "pwned.txt")); err == nil {
				t.Fatal("a group or an end user wrote into the owner's files")
			}
		}
	}
	if raw, err := os.ReadFile(filepath.Join(s.data, "files", "pwned.txt")); err != nil || string(raw) != "written by owner" {
		t.Fatalf("positive control: the owner's files_write: %q %v", raw, err)
	}

	// Recall: the group's and the user's sessions find nothing of the owner's; the owner does.
	search := func(session string) []client.MemoryHit {
		t.Helper()
		q := url.Values{"q": {"PIN " + secret}}
		if session != "" {
			q.Set("session", session)
		}
		resp, err := s.unixHTTP().Get("http://hologram/api/v1/memory/search?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Hits []client.MemoryHit `json:"hits"`
		}
		if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&out) != nil {
			t.Fatalf("search %s: HTTP %d", session, resp.StatusCode)
		}
		return out.Hits
	}
	for _, sess := range []string{"grp", "alice"} {
		for _, h := range search(sess) {
			if strings.Contains(h.Content, secret) {
				t.Errorf("session %s's recall finds the owner's data: %+v", sess, h)
			}
		}
	}
	found := false
	for _, h := range search("") {
		found = found || strings.Contains(h.Content, secret)
	}
	if !found {
		t.Error("positive control: the owner's own search does not find the owner's data")
	}

	// Every stored event: none outside the owner's scope holds the owner's data, and the group's
	// and the user's tool results (of the tools they may call) are stored in their scopes.
	s.h.stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := sqlite.Open(ctx, filepath.Join(s.data, "hologram.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sessions, err := st.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, ss := range sessions {
		evs, err := st.History(ctx, ss.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Scope.Kind != memory.ScopePrivate && strings.Contains(ev.Content+ev.Reasoning, secret) {
				t.Errorf("owner data in an event of scope %s (session %s): %+v", ev.Scope, ss.ID, ev)
			}
			if ev.Role == memory.RoleTool {
				counts[ss.ID+" "+ev.Scope.String()+" "+ev.ToolStatus]++
			}
		}
	}
	t.Logf("tool results stored (session scope status: n): %v", counts)
	if counts["grp group:qq/group_1 ok"] != 3 || counts["alice group:user:alice ok"] != 3 {
		t.Errorf("the group's and the user's three `any` tools' results are not stored in their scopes: %v", counts)
	}
	if counts["grp private ok"]+counts["alice private ok"] != 0 {
		t.Errorf("a group's or a user's tool result is owner-private, so it ran an owner-only tool: %v", counts)
	}
}

// TestPluginsAreNeverTheOwner: a hostile MCP server that finds the kernel's socket gets 403 for
// everything it tries (approvals, memory search and export, /v1), from its own process and from
// an orphaned grandchild (re-parented to the kernel, a child subreaper); meanwhile the owner's
// waiter answers the pending approval. The same requests from the test (not a plugin) succeed.
func TestPluginsAreNeverTheOwner(t *testing.T) {
	s := newScopeEnv(t)
	probe, err := filepath.Abs(filepath.Join("testdata", "probe_mcp.py"))
	if err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := s.waiter("", nil, "plugin", "add", "probe", "--command", "python3 "+probe); code != 0 {
		t.Fatalf("plugin add probe: %d %s%s", code, out, errOut)
	}
	s.waitPlugin("probe", "running", func(p client.Plugin) bool { return p.State == "running" && contains(p.Tools, "probe") })
	if out, errOut, code := s.waiter("", nil, "plugin", "enable", "shell"); code != 0 {
		t.Fatalf("enable shell: %d %s%s", code, out, errOut)
	}
	s.waitPlugin("shell", "running", func(p client.Plugin) bool { return p.State == "running" })

	// The owner asks for a command: the shell plugin waits for the owner's approval.
	asked := make(chan string, 1)
	go func() {
		out, _, _ := s.waiter("", nil, "ask", `CALL shell_run {"argv":["echo","approved by the owner"]}`)
		asked <- strings.TrimSpace(out)
	}()
	var ap client.Approval
	for deadline := time.Now().Add(30 * time.Second); ap.ID == ""; time.Sleep(50 * time.Millisecond) {
		var list []client.Approval
		s.waiterJSON(&list, "approvals", "--json")
		if len(list) == 1 {
			ap = list[0]
		}
		if time.Now().After(deadline) {
			t.Fatal("no pending approval in 30 s")
		}
	}

	// The probe, in another owner session, tries to act as the owner.
	if code, out := s.postJSON("/api/v1/sessions", client.Session{ID: "probe-chat", Title: "probe"}); code/100 != 2 {
		t.Fatalf("session: %d %s", code, out)
	}
	text := `CALL probe {"socket":"` + s.sock + `","approval":"` + ap.ID + `"}`
	if out, errOut, code := s.waiter("", nil, "ask", "--session", "probe-chat", text); code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "DONE ") {
		t.Fatalf("probe turn: %d %q %s", code, out, errOut)
	}
	var msgs []client.Message
	s.waiterJSON(&msgs, "history", "--session", "probe-chat", "--json")
	var res struct {
		PID    int `json:"pid"`
		Self   []attempt
		Orphan struct {
			PPID     int       `json:"ppid"`
			Attempts []attempt `json:"attempts"`
		}
	}
	for _, m := range msgs {
		if m.Role == "tool" && m.ToolName == "probe" {
			if err := json.Unmarshal([]byte(m.Content), &res); err != nil {
				t.Fatalf("probe result %q: %v", m.Content, err)
			}
		}
	}
	if len(res.Self) == 0 || len(res.Orphan.Attempts) == 0 {
		t.Fatalf("the probe reported nothing: %+v", res)
	}
	homedPID := s.h.cmd.Process.Pid
	if res.Orphan.PPID != homedPID {
		t.Errorf("the orphan's parent is %d, not homed (%d): homed is no child subreaper", res.Orphan.PPID, homedPID)
	}
	for who, list := range map[string][]attempt{"the plugin": res.Self, "the plugin's orphan": res.Orphan.Attempts} {
		for _, a := range list {
			if a.Status != 403 || !strings.Contains(a.Body, "plugins are never the owner") {
				t.Errorf("%s: %s: HTTP %d %s", who, a.What, a.Status, a.Body)
			}
			if strings.Contains(a.Body, secret) {
				t.Errorf("%s: %s: the owner's data: %s", who, a.What, a.Body)
			}
		}
	}
	if !strings.Contains(res.Self[0].Body, "is plugin probe") {
		t.Errorf("the refusal does not name the plugin: %s", res.Self[0].Body)
	}
	var list []client.Approval
	s.waiterJSON(&list, "approvals", "--json")
	if len(list) != 1 || list[0].ID != ap.ID || list[0].State != client.ApprovalPending {
		t.Fatalf("after the probe: %+v", list)
	}

	// A bare connection that is no plugin still cannot answer without a credential; the owner's
	// waiter (which asks for one) can.
	code, out := s.postJSON("/api/v1/approvals/"+ap.ID, map[string]bool{"approve": true})
	if code != 403 || !strings.Contains(string(out), "approval credential") {
		t.Fatalf("a bare answer: %d %s", code, out)
	}
	if out, errOut, code := s.waiter("", nil, "approve", ap.ID); code != 0 || !strings.Contains(out, "approved") {
		t.Fatalf("waiter approve: %d %s%s", code, out, errOut)
	}
	select {
	case got := <-asked:
		if !strings.HasPrefix(got, "DONE ") || !strings.Contains(got, "approved by the owner") {
			t.Fatalf("the approved turn: %q", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the approved turn did not finish")
	}

	// Positive control: the test process (no plugin) gets what the probe was refused.
	for _, path := range []string{"/api/v1/memory/search?q=PIN", "/api/v1/memory/export", "/api/v1/approvals"} {
		resp, err := s.unixHTTP().Get("http://hologram" + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("the owner's GET %s: HTTP %d", path, resp.StatusCode)
		}
	}
	if !strings.Contains(s.h.stderr.String(), "refused a plugin's request") {
		t.Error("the refusals are not logged")
	}
	t.Logf("probe pid %d, orphan re-parented to homed %d; %d + %d requests refused", res.PID, homedPID, len(res.Self), len(res.Orphan.Attempts))
}

// attempt is one request of the probe.
type attempt struct {
	What   string `json:"what"`
	Status int    `json:"status"`
	Body   string `json:"body"`
}
