// Package kerneltest is the conformance suite of client.Service (the restic backend-test
// pattern): every implementation — the kernel in-process and the HTTP client talking to the
// kernel's API — must pass the same tests, which is how remote mode stays at parity.
//
// Import it only from _test.go files.
package kerneltest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// Setup returns a fresh Service over an empty data dir (no providers, only the default session
// "main"); the suite configures providers itself.
type Setup func(t *testing.T) client.Service

// Run runs the conformance suite against the Service setup returns.
func Run(t *testing.T, setup Setup) {
	for _, r := range Roles {
		t.Run(r, func(t *testing.T) { RunRole(t, r, setup) })
	}
}

// Roles are the parts of client.Service the suite checks, one group of tests each.
var Roles = []string{"System", "Providers", "Chat", "Sessions", "Plugins", "Memory", "Models"}

// roleTests are each role's tests. A test may use other roles to set up (a chat before a
// window), but what it checks belongs to its role.
var roleTests = map[string][]struct {
	name string
	fn   func(t *testing.T, s client.Service)
}{
	"System":    {{"HealthAndStatus", testHealthAndStatus}, {"Pause", testPause}},
	"Providers": {{"Providers", testProviders}, {"TestProvider", testTestProvider}, {"DetectProviders", testDetectProviders}},
	"Chat": {{"ChatWithoutProvider", testChatWithoutProvider}, {"ChatStreamsAndStores", testChatStreamsAndStores},
		{"ToolTurn", testToolTurn}, {"Cancel", testCancel}, {"ServerErrorSurfaces", testServerErrorSurfaces},
		{"Uploads", testUploads}},
	"Sessions": {{"Sessions", testSessions}, {"SessionAdmin", testSessionAdmin}, {"Branches", testBranches},
		{"BasePrompt", testBasePrompt}, {"Assistants", testAssistants}},
	"Plugins": {{"Tools", testTools}, {"Plugins", testPlugins}},
	"Memory": {{"Window", testWindow}, {"SearchMemory", testSearchMemory}, {"GraphEdits", testGraphEdits},
		{"GraphPaging", testGraphPaging}, {"MergeAndDelete", testMergeAndDelete}, {"Forget", testForget},
		{"ScenesAndGC", testScenesAndGC}, {"Export", testExport}, {"ChatImport", testChatImport}, {"Thumbnails", testThumbnails}},
	"Models": {{"Embedding", testEmbedding}},
}

// RunRole runs the tests of one role (see [Roles]) against fresh services from setup.
func RunRole(t *testing.T, role string, setup Setup) {
	tests, ok := roleTests[role]
	if !ok {
		t.Fatalf("kerneltest: unknown role %q (roles: %v)", role, Roles)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, setup(t)) })
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func addFake(t *testing.T, s client.Service) *llmtest.Server {
	t.Helper()
	fake := llmtest.NewServer(t)
	if _, err := s.AddProvider(ctxT(t), client.ProviderConfig{Name: "fake", BaseURL: fake.URL(), Model: "fake-1", APIKey: "sk-suite"}); err != nil {
		t.Fatalf("AddProvider: %v", err)
	}
	return fake
}

func testHealthAndStatus(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	h, err := s.Health(ctx)
	if err != nil || !h.OK || !h.Ready || h.Version == "" {
		t.Fatalf("Health = %+v, %v", h, err)
	}
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Pending may only hold lazily loaded assets (jieba loads on the first Chinese text, the
	// WordNet lexicon with the first memory text).
	if st.Version == "" || st.PID == 0 || st.Sessions < 1 || st.Tools < 1 || len(st.Ready) < 3 || slices.ContainsFunc(st.Pending, func(p string) bool { return p != "jieba" && p != "lexicon" }) {
		t.Fatalf("Status = %+v", st)
	}
}

func testProviders(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	ps, err := s.Providers(ctx)
	if err != nil || len(ps) != 0 {
		t.Fatalf("Providers on a fresh kernel = %v, %v", ps, err)
	}
	bad := []client.ProviderConfig{
		{Name: "", BaseURL: "http://x/v1", Model: "m"},
		{Name: "p", BaseURL: "ftp://x", Model: "m"},
		{Name: "p", BaseURL: "http://x/v1", Model: ""},
		{Name: "has space", BaseURL: "http://x/v1", Model: "m"},
	}
	for _, p := range bad {
		if _, err := s.AddProvider(ctx, p); !errors.Is(err, client.ErrInvalid) {
			t.Errorf("AddProvider(%+v) = %v, want ErrInvalid", p, err)
		}
	}
	got, err := s.AddProvider(ctx, client.ProviderConfig{Name: "b", BaseURL: "http://127.0.0.1:9/v1/", Model: "m1", APIKey: "sk-x", Priority: 2})
	if err != nil || got.Name != "b" || !got.HasKey || got.BaseURL != "http://127.0.0.1:9/v1" {
		t.Fatalf("AddProvider = %+v, %v", got, err)
	}
	if _, err := s.AddProvider(ctx, client.ProviderConfig{Name: "a", BaseURL: "http://127.0.0.1:9/v1", Model: "m2", Priority: 1}); err != nil {
		t.Fatal(err)
	}
	ps, err = s.Providers(ctx)
	if err != nil || len(ps) != 2 || ps[0].Name != "a" || ps[1].Name != "b" || ps[0].HasKey {
		t.Fatalf("Providers = %+v, %v (want a then b, by priority)", ps, err)
	}
	// An edit that keeps the key (the desktop's priority change) and one that drops it.
	if got, err := s.AddProvider(ctx, client.ProviderConfig{Name: "b", BaseURL: "http://127.0.0.1:9/v1", Model: "m1", Priority: 3, KeepKey: true}); err != nil || !got.HasKey || got.Priority != 3 {
		t.Fatalf("AddProvider with KeepKey = %+v, %v; want the key kept", got, err)
	}
	if got, err := s.AddProvider(ctx, client.ProviderConfig{Name: "b", BaseURL: "http://127.0.0.1:9/v1", Model: "m1", Priority: 2}); err != nil || got.HasKey {
		t.Fatalf("AddProvider without a key = %+v, %v; want no key", got, err)
	}
	if err := s.RemoveProvider(ctx, "nope"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("RemoveProvider(unknown) = %v", err)
	}
	if err := s.RemoveProvider(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if ps, _ = s.Providers(ctx); len(ps) != 1 {
		t.Fatalf("after remove: %+v", ps)
	}
}

func testChatWithoutProvider(t *testing.T, s client.Service) {
	_, err := s.Chat(ctxT(t), client.ChatRequest{Input: "hello"}, nil)
	if !errors.Is(err, client.ErrUnavailable) || !strings.Contains(err.Error(), "no LLM provider") {
		t.Fatalf("Chat without provider = %v", err)
	}
	if _, err := s.Chat(ctxT(t), client.ChatRequest{Input: "  "}, nil); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("empty input = %v", err)
	}
}

// collect records events; emit is called from one goroutine but tests read after Chat returns.
type collect struct {
	mu  sync.Mutex
	evs []client.ChatEvent
}

func (c *collect) emit(ev client.ChatEvent) { c.mu.Lock(); c.evs = append(c.evs, ev); c.mu.Unlock() }
func (c *collect) types() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, e := range c.evs {
		if len(out) == 0 || out[len(out)-1] != e.Type {
			out = append(out, e.Type)
		}
	}
	return out
}

func testChatStreamsAndStores(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	fake := addFake(t, s)
	var c collect
	res, err := s.Chat(ctx, client.ChatRequest{Input: "hello kernel"}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "PONG hello kernel" || res.Session != "main" || res.TurnID == "" {
		t.Fatalf("result %+v", res)
	}
	if got := strings.Join(c.types(), ","); got != "turn,delta,final" {
		t.Fatalf("event types %s, want turn,delta,final", got)
	}
	var text string
	for _, e := range c.evs {
		if e.Type == client.EventDelta {
			text += e.Text
		}
		if e.Type == client.EventFinal && e.Text != res.Text {
			t.Fatalf("final event %q != result %q", e.Text, res.Text)
		}
		if e.TurnID != res.TurnID {
			t.Fatalf("event %+v has another turn id than %s", e, res.TurnID)
		}
	}
	if text != res.Text {
		t.Fatalf("deltas %q != final %q", text, res.Text)
	}
	if reqs := fake.Requests(); len(reqs) != 1 || reqs[0].Auth != "Bearer sk-suite" {
		t.Fatalf("LLM requests %+v", reqs)
	}
	hist, err := s.History(ctx, "main", 0)
	if err != nil || len(hist) != 2 || hist[0].Role != "user" || hist[1].Content != "PONG hello kernel" || hist[1].TurnID != res.TurnID {
		t.Fatalf("History = %+v, %v", hist, err)
	}
	// The question opens in context: itself and the answer after it.
	around, err := s.EventContext(ctx, hist[0].ID, 1)
	if err != nil || len(around) != 2 || around[0].ID != hist[0].ID || around[1].ID != hist[1].ID || around[1].Content != "PONG hello kernel" {
		t.Fatalf("EventContext(%d, 1) = %+v, %v", hist[0].ID, around, err)
	}
	if _, err := s.EventContext(ctx, hist[1].ID+1000, 0); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("EventContext of an unknown event = %v, want ErrNotFound", err)
	}
	// A second turn sees the first in its prompt.
	if _, err := s.Chat(ctx, client.ChatRequest{Input: "again"}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	last := reqs[len(reqs)-1].Messages
	if len(last) < 3 || last[len(last)-3].Content != "hello kernel" {
		t.Fatalf("second prompt lacks the first turn: %+v", last)
	}
	if h, _ := s.History(ctx, "main", 1); len(h) != 1 || h[0].Content != "PONG again" {
		t.Fatalf("History(limit 1) = %+v", h)
	}
}

func testToolTurn(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	addFake(t, s)
	var c collect
	res, err := s.Chat(ctx, client.ChatRequest{Input: "what time is it?"}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Text, "DONE ") {
		t.Fatalf("reply %q", res.Text)
	}
	var call, result *client.ToolEvent
	for _, e := range c.evs {
		switch e.Type {
		case client.EventToolCall:
			call = e.Tool
		case client.EventToolResult:
			result = e.Tool
		}
	}
	if call == nil || call.Name != "time_now" || result == nil || result.Status != "ok" || result.ID != call.ID || result.Result == "" {
		t.Fatalf("tool events call=%+v result=%+v", call, result)
	}
	hist, _ := s.History(ctx, "main", 0)
	var calls, results int
	for _, m := range hist {
		calls += len(m.ToolCalls)
		if m.Role == "tool" {
			results++
			if m.ToolCallID != call.ID || m.ToolStatus != "ok" {
				t.Fatalf("stored result %+v", m)
			}
		}
	}
	if calls != 1 || results != 1 {
		t.Fatalf("history has %d calls and %d results: %+v", calls, results, hist)
	}
}

func testSessions(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	fake := addFake(t, s)
	ss, err := s.CreateSession(ctx, client.Session{ID: "work", Title: "Work", SystemPrompt: "You are terse."})
	if err != nil || ss.ID != "work" || ss.SystemPrompt != "You are terse." {
		t.Fatalf("CreateSession = %+v, %v", ss, err)
	}
	if _, err := s.CreateSession(ctx, client.Session{ID: "work"}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("duplicate CreateSession = %v", err)
	}
	if _, err := s.CreateSession(ctx, client.Session{ID: "bad id!"}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("bad id = %v", err)
	}
	gen, err := s.CreateSession(ctx, client.Session{})
	if err != nil || gen.ID == "" {
		t.Fatalf("generated id: %+v %v", gen, err)
	}
	if _, err := s.Chat(ctx, client.ChatRequest{Session: "work", Input: "hi"}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if m := reqs[len(reqs)-1].Messages; len(m) == 0 || m[0].Role != "system" || !strings.Contains(m[0].Content, "You are terse.") {
		t.Fatalf("session system prompt not sent: %+v", m)
	}
	up, err := s.SetInstructions(ctx, "work", client.Instructions{SystemPrompt: "Be kind.", Model: "fake-2"})
	if err != nil || up.SystemPrompt != "Be kind." || up.Model != "fake-2" {
		t.Fatalf("SetInstructions = %+v, %v", up, err)
	}
	if _, err := s.Chat(ctx, client.ChatRequest{Session: "work", Input: "hi again"}, nil); err != nil {
		t.Fatal(err)
	}
	reqs = fake.Requests()
	if r := reqs[len(reqs)-1]; r.Model != "fake-2" || !strings.Contains(r.Messages[0].Content, "Be kind.") {
		t.Fatalf("instructions not applied: model %q, %+v", r.Model, r.Messages[0])
	}
	if _, err := s.SetInstructions(ctx, "nope", client.Instructions{}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("SetInstructions(unknown) = %v", err)
	}
	if _, err := s.Chat(ctx, client.ChatRequest{Session: "nope", Input: "x"}, nil); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("Chat(unknown session) = %v", err)
	}
	if _, err := s.History(ctx, "nope", 0); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("History(unknown) = %v", err)
	}
	list, err := s.Sessions(ctx)
	if err != nil || len(list) != 3 || list[0].ID != "work" {
		t.Fatalf("Sessions = %+v, %v (want 3, the busiest first)", list, err)
	}
}

func testCancel(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	fake := addFake(t, s)
	if err := s.Cancel(ctx, "t-unknown"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("Cancel(unknown) = %v", err)
	}
	fake.Script(llmtest.Reply{Text: "never ends", Hang: true})
	turnID := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		_, err := s.Chat(ctx, client.ChatRequest{Input: "hang please"}, func(ev client.ChatEvent) {
			if ev.Type == client.EventTurn {
				turnID <- ev.TurnID
			}
		})
		done <- err
	}()
	id := <-turnID
	if err := fake.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx, id); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "cancel") {
			t.Fatalf("cancelled turn returned %v", err)
		}
	case <-ctx.Done():
		t.Fatal("cancelled turn did not return")
	}
	hist, _ := s.History(ctx, "main", 0)
	if len(hist) == 0 || hist[0].Content != "hang please" {
		t.Fatalf("the user's message is lost after cancel: %+v", hist)
	}
	// The session still works and the history the LLM sees is well paired.
	if res, err := s.Chat(ctx, client.ChatRequest{Input: "after cancel"}, nil); err != nil || res.Text != "PONG after cancel" {
		for _, r := range fake.Requests() { // which request took which scripted reply
			t.Logf("provider request %s, %d messages: %+v", r.Path, len(r.Messages), r.Messages)
		}
		t.Fatalf("after cancel: %+v %v", res, err)
	}
}

func testServerErrorSurfaces(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	fake := addFake(t, s)
	fake.Script(llmtest.Reply{Status: 400, Message: "insufficient tool messages following tool_calls message"})
	_, err := s.Chat(ctx, client.ChatRequest{Input: "x"}, nil)
	if err == nil || !strings.Contains(err.Error(), "insufficient tool messages") {
		t.Fatalf("server message lost: %v", err)
	}
	fake.Script(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c9", Name: "missing_tool", Arguments: "{}"}}})
	res, err := s.Chat(ctx, client.ChatRequest{Input: "y"}, nil)
	if err != nil || !strings.Contains(res.Text, "unknown tool") {
		t.Fatalf("unknown tool: %+v %v", res, err)
	}
}

func testTools(t *testing.T, s client.Service) {
	ts, err := s.Tools(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range ts {
		if tool.Name == "time_now" && tool.ParallelSafe && tool.Source == "builtin" && tool.Description != "" && tool.Parameters != nil {
			return
		}
	}
	t.Fatalf("time_now missing or incomplete: %+v", ts)
}

// NPMPeer returns the absolute path of the entry script (package.json "bin") of a pinned npm
// package in plugins/testdata/npm (installed by `make npm-peers`), e.g.
// "@modelcontextprotocol/server-everything". A missing package or node fails the test with the
// command that installs it: the plugin tests never skip.
func NPMPeer(t testing.TB, pkg string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not installed: the plugin tests run npm MCP servers (make deps installs nodejs and npm)")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod above the working directory: cannot find plugins/testdata/npm")
		}
		dir = parent
	}
	pkgDir := filepath.Join(dir, "plugins", "testdata", "npm", "node_modules", filepath.FromSlash(pkg))
	raw, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		t.Fatalf("npm peer %s is not installed (%v): run `make npm-peers` (HOLOGRAM_CI=%q)", pkg, err, os.Getenv("HOLOGRAM_CI"))
	}
	var meta struct {
		Bin json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatalf("npm peer %s: package.json: %v", pkg, err)
	}
	var entry string
	var bins map[string]string
	if json.Unmarshal(meta.Bin, &entry) != nil {
		if err := json.Unmarshal(meta.Bin, &bins); err != nil || len(bins) != 1 {
			t.Fatalf("npm peer %s: want one bin entry, got %s", pkg, meta.Bin)
		}
		for _, v := range bins {
			entry = v
		}
	}
	path := filepath.Join(pkgDir, filepath.FromSlash(entry))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("npm peer %s: %v: run `make npm-peers`", pkg, err)
	}
	return path
}

// testPlugins runs the everything server (a real npm MCP server) as a plugin: add, list, tools,
// a call by the model, logs, restart, disable, enable, remove, and the errors.
func testPlugins(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	entry := NPMPeer(t, "@modelcontextprotocol/server-everything")
	if _, err := s.AddPlugin(ctx, client.PluginConfig{Name: "bad name!", Command: []string{"node"}}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("AddPlugin with a bad name = %v, want ErrInvalid", err)
	}
	if _, err := s.PluginAction(ctx, "ghost", client.PluginRestart); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("restart of an unknown plugin = %v, want ErrNotFound", err)
	}
	if _, err := s.PluginLogs(ctx, "ghost", 0); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("logs of an unknown plugin = %v, want ErrNotFound", err)
	}
	p, err := s.AddPlugin(ctx, client.PluginConfig{Name: "everything", Command: []string{"node", entry, "stdio"}})
	if err != nil {
		t.Fatalf("AddPlugin: %v", err)
	}
	if p.Kind != "mcp" || p.State != "running" || p.PID == 0 || !slices.Contains(p.Tools, "echo") || !slices.Contains(p.Tools, "get-sum") {
		t.Fatalf("added plugin %+v", p)
	}
	if _, err := s.AddPlugin(ctx, client.PluginConfig{Name: "everything", Command: []string{"node", entry}}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("second AddPlugin = %v, want ErrInvalid", err)
	}
	ps, err := s.Plugins(ctx)
	if err != nil || len(ps) != 1 || ps[0].Name != "everything" || ps[0].PID != p.PID {
		t.Fatalf("Plugins = %+v, %v", ps, err)
	}
	ts, err := s.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]string{}
	for _, tl := range ts {
		sources[tl.Name] = tl.Source
	}
	if sources["echo"] != "everything" || sources["get-sum"] != "everything" || sources["time_now"] != "builtin" {
		t.Fatalf("tool sources %v", sources)
	}

	fake := addFake(t, s)
	fake.Script(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "get-sum", Arguments: `{"a":19,"b":23}`}}},
		llmtest.Reply{Text: "done"},
	)
	var c collect
	if _, err := s.Chat(ctx, client.ChatRequest{Input: "add 19 and 23"}, c.emit); err != nil {
		t.Fatal(err)
	}
	var result *client.ToolEvent
	for _, e := range c.evs {
		if e.Type == client.EventToolResult {
			result = e.Tool
		}
	}
	if result == nil || result.Status != "ok" || !strings.Contains(result.Result, "42") {
		t.Fatalf("get-sum result %+v", result)
	}

	if _, err := s.PluginLogs(ctx, "everything", 5); err != nil {
		t.Fatalf("PluginLogs: %v", err)
	}
	if p2, err := s.PluginAction(ctx, "everything", client.PluginRestart); err != nil || p2.Name != "everything" {
		t.Fatalf("restart = %+v, %v", p2, err)
	}
	if p2, err := s.PluginAction(ctx, "everything", client.PluginDisable); err != nil || p2.State != "disabled" || len(p2.Tools) != 0 {
		t.Fatalf("disable = %+v, %v", p2, err)
	}
	if ts, _ := s.Tools(ctx); slices.ContainsFunc(ts, func(tl client.Tool) bool { return tl.Source == "everything" }) {
		t.Fatalf("a disabled plugin's tools are still offered: %+v", ts)
	}
	if p2, err := s.PluginAction(ctx, "everything", client.PluginEnable); err != nil || p2.Name != "everything" {
		t.Fatalf("enable = %+v, %v", p2, err)
	}
	if _, err := s.PluginAction(ctx, "everything", client.PluginRemove); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if ps, _ := s.Plugins(ctx); len(ps) != 0 {
		t.Fatalf("after remove: %+v", ps)
	}
	if ts, _ := s.Tools(ctx); slices.ContainsFunc(ts, func(tl client.Tool) bool { return tl.Source == "everything" }) {
		t.Fatalf("a removed plugin's tools are still offered: %+v", ts)
	}
}
