//go:build integration

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// The /v1 end-to-end tests drive homed's OpenAI-compatible API with the official OpenAI
// JavaScript SDK (openai, pinned in testdata/openai-js, installed by `make openai-peers`) through
// testdata/openai-js/v1.mjs, and from a page in Debian's chromium through page.mjs.

// openAIJS runs a node script of testdata/openai-js and returns its JSON answer.
func openAIJS(t *testing.T, script string, args ...string) map[string]any {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "openai-js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		t.Fatalf("the openai npm client is not installed (%v): run `make openai-peers`", err)
	}
	cmd := exec.Command("node", append([]string{filepath.Join(dir, script)}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s %v: %v\n%s%s", script, args, err, stdout.String(), stderr.String())
	}
	var v map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &v); err != nil {
		t.Fatalf("node %s: %v: %q %s", script, err, stdout.String(), stderr.String())
	}
	return v
}

// v1Chat is one chat completion through the SDK.
func v1Chat(t *testing.T, base, token string, req map[string]any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(req)
	return openAIJS(t, "v1.mjs", base, token, "chat", string(raw))
}

func userMsgs(texts ...string) []map[string]string {
	var out []map[string]string
	for i, s := range texts {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		out = append(out, map[string]string{"role": role, "content": s})
	}
	return out
}

// v1Homed starts homed on a loopback listener with a token and the given config file text.
func v1Homed(t *testing.T, e *env, config string) (base, token string) {
	t.Helper()
	if config != "" {
		dir := filepath.Join(e.config, "hologram")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tokFile := filepath.Join(e.root, "token")
	h := e.start("--listen", "127.0.0.1:0", "--token-file", tokFile)
	addr, _ := h.listening(t)
	tok, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + addr, strings.TrimSpace(string(tok))
}

// sessionEvents counts the stored messages of session id by their text.
func (e *env) sessionEvents(id string) map[string]int {
	e.t.Helper()
	var hist []client.Message
	e.waiterJSON(&hist, "history", "--session", id, "--json")
	n := map[string]int{}
	for _, m := range hist {
		n[m.Role+": "+m.Content]++
	}
	return n
}

// TestV1WithTheOfficialOpenAIClient: end users named by `user` never see each other's memories
// (the owner's neither); a conversation without `user` is its own session, and resending it
// (as clients do on every call) stores nothing twice; models.retrieve; a page on an allowed
// origin calls /v1 from chromium, a page on another origin cannot.
func TestV1WithTheOfficialOpenAIClient(t *testing.T) {
	fake := startFakeOpenAI(t)
	var script atomic.Pointer[string] // the page, written once homed's address is known
	page := func() *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			if s := script.Load(); s != nil {
				fmt.Fprint(w, *s)
			}
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	allowed, other := page(), page()
	e := newEnv(t)
	base, token := v1Homed(t, e, fmt.Sprintf("[api]\nallowed_origins = [%q]\n", allowed.URL))
	e.addProvider(fake.url, "sk-v1")

	// Two end users: alice's PIN never reaches bob's prompt; alice's own does (positive control).
	const pin = "PIN-93172"
	if r := v1Chat(t, base, token, map[string]any{"user": "alice", "messages": userMsgs("remember that my bank " + pin + " is secret")}); r["error"] != nil {
		t.Fatalf("alice: %v", r)
	}
	for _, who := range []string{"bob", "alice"} {
		q := "what is my bank PIN? asks " + who
		if r := v1Chat(t, base, token, map[string]any{"user": who, "messages": userMsgs(q)}); r["error"] != nil {
			t.Fatalf("%s: %v", who, r)
		}
		seen := strings.Contains(fake.lastRequestWith(t, q), pin)
		if seen != (who == "alice") {
			t.Fatalf("%s's prompt holds alice's PIN: %v", who, seen)
		}
	}

	// A conversation without `user`: its own session; resending it stores nothing twice.
	r1 := v1Chat(t, base, token, map[string]any{"messages": userMsgs("plan a day in Porto")})
	reply1, _ := r1["reply"].(string)
	if reply1 == "" {
		t.Fatalf("first turn: %v", r1)
	}
	if r := v1Chat(t, base, token, map[string]any{"messages": userMsgs("plan a day in Porto", reply1, "and the evening?")}); r["error"] != nil {
		t.Fatalf("second turn: %v", r)
	}
	var sessions []client.Session
	e.waiterJSON(&sessions, "session", "list", "--json")
	conv := ""
	for _, s := range sessions {
		if strings.HasPrefix(s.ID, "v1-") {
			if conv != "" {
				t.Fatalf("two sessions for one conversation: %s and %s", conv, s.ID)
			}
			conv = s.ID
		}
	}
	if conv == "" {
		t.Fatalf("no session for the conversation: %+v", sessions)
	}
	if n := e.sessionEvents(conv); n["user: plan a day in Porto"] != 1 || n["assistant: "+reply1] != 1 {
		t.Fatalf("the conversation as stored: %v", n)
	}
	// Regenerate (the same messages resent) and edit (the last question changed): new branches of
	// the stored conversation, nothing stored twice; the current branch holds the newest.
	if r := v1Chat(t, base, token, map[string]any{"messages": userMsgs("plan a day in Porto", reply1, "and the evening?")}); r["error"] != nil {
		t.Fatalf("regenerate: %v", r)
	}
	if n := e.sessionEvents(conv); n["user: plan a day in Porto"] != 1 || n["user: and the evening?"] != 1 || len(n) != 4 {
		t.Fatalf("after a regenerate: %v", n)
	}
	if r := v1Chat(t, base, token, map[string]any{"messages": userMsgs("plan a day in Porto", reply1, "and the night?")}); r["error"] != nil {
		t.Fatalf("edit: %v", r)
	}
	if n := e.sessionEvents(conv); n["user: plan a day in Porto"] != 1 || n["user: and the evening?"] != 0 || n["user: and the night?"] != 1 || len(n) != 4 {
		t.Fatalf("after an edit: %v", n)
	}
	var hist []client.Message
	e.waiterJSON(&hist, "history", "--session", conv, "--json")
	if last := hist[len(hist)-1]; last.Branch == nil && hist[len(hist)-2].Branch == nil {
		t.Fatalf("the edited turn is not a branch: %+v", hist[len(hist)-2:])
	}
	if r := v1Chat(t, base, token, map[string]any{"messages": userMsgs("plan a day in Lisbon")}); r["error"] != nil {
		t.Fatalf("new chat: %v", r)
	}
	e.waiterJSON(&sessions, "session", "list", "--json")
	n := 0
	for _, s := range sessions {
		if strings.HasPrefix(s.ID, "v1-") {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("a new chat is not a new session: %d v1 sessions", n)
	}

	// The client's model parameters reach the provider.
	q := "a short answer please"
	if r := v1Chat(t, base, token, map[string]any{"user": "dave", "messages": userMsgs(q), "stream": true,
		"params": map[string]any{"max_tokens": 77, "temperature": 0.3, "top_p": 0.9, "stop": []string{"END"}}}); r["error"] != nil {
		t.Fatalf("parameters: %v", r)
	}
	var sent struct {
		Body struct {
			MaxTokens   int      `json:"max_tokens"`
			Temperature float64  `json:"temperature"`
			TopP        float64  `json:"top_p"`
			Stop        []string `json:"stop"`
		} `json:"body"`
	}
	if err := json.Unmarshal([]byte(fake.lastRequestWith(t, q)), &sent); err != nil || sent.Body.MaxTokens != 77 || sent.Body.Temperature != 0.3 || sent.Body.TopP != 0.9 || len(sent.Body.Stop) != 1 {
		t.Fatalf("the provider got %+v (%v)", sent.Body, err)
	}

	// Client tools: the model's call of the client's tool comes back to the client, which answers
	// it in its next request; the same turn then finishes (streamed and not).
	for _, stream := range []bool{false, true} {
		q := fmt.Sprintf(`CALL get_weather {"city":"Porto %v"}`, stream)
		raw, _ := json.Marshal(map[string]any{"text": q, "result": "sunny, 21 C", "stream": stream})
		r := openAIJS(t, "v1.mjs", base, token, "tools", string(raw))
		if r["finish"] != "tool_calls" || r["name"] != "get_weather" || !strings.Contains(fmt.Sprint(r["args"]), "Porto") ||
			r["final_finish"] != "stop" || !strings.Contains(fmt.Sprint(r["reply"]), "sunny, 21 C") {
			t.Fatalf("client tool round trip (stream %v): %v", stream, r)
		}
	}

	// models.retrieve.
	if m := openAIJS(t, "v1.mjs", base, token, "model", `{"id":"fake-1"}`); m["id"] != "fake-1" {
		t.Fatalf("models.retrieve fake-1: %v", m)
	}
	if m := openAIJS(t, "v1.mjs", base, token, "model", `{"id":"no-such-model"}`); m["status"] != float64(404) {
		t.Fatalf("models.retrieve of an unknown model: %v", m)
	}

	// A page on the allowed origin calls /v1 from chromium; one on another origin cannot.
	html := fmt.Sprintf(`<!doctype html><title>v1</title><script>
fetch(%q + "/v1/chat/completions", {method: "POST", headers: {"Authorization": "Bearer %s", "Content-Type": "application/json", "X-Stainless-Retry-Count": "0"},
  body: JSON.stringify({model: "fake-1", user: "webpage", messages: [{role: "user", content: "hello from a page"}]})})
  .then(async r => { window.result = {status: r.status, reply: (await r.json()).choices[0].message.content} })
  .catch(e => { window.result = {error: String(e)} });
</script>`, base, token)
	script.Store(&html)
	if got := openAIJS(t, "page.mjs", allowed.URL); got["status"] != float64(200) || !strings.Contains(fmt.Sprint(got["reply"]), "hello from a page") {
		t.Fatalf("the allowed page: %v", got)
	}
	if got := openAIJS(t, "page.mjs", other.URL); got["error"] == nil {
		t.Fatalf("a page on an origin not allowed reached /v1: %v", got)
	}
}

// lastRequestWith returns the body of the last request the fake provider logged whose text
// holds marker.
func (f *fakeOpenAI) lastRequestWith(t *testing.T, marker string) string {
	t.Helper()
	raw, err := os.ReadFile(f.log)
	if err != nil {
		t.Fatal(err)
	}
	last := ""
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(line, marker) {
			last = line
		}
	}
	if last == "" {
		t.Fatalf("the fake provider saw no request with %q", marker)
	}
	return last
}

// TestV1RetriesRunTheTurnOnce: usage is counted, streamed or not; the provider is overloaded (HTTP 503); homed answers 503 with
// Retry-After, the SDK retries twice with its default settings, and the retries are answered
// from the first attempt: the turn ran once (one user message stored, the provider asked only by
// the first attempt's own retries).
func TestV1RetriesRunTheTurnOnce(t *testing.T) {
	fake := llmtest.NewServer(t)
	e := newEnv(t)
	base, token := v1Homed(t, e, "")
	e.addProvider(fake.URL(), "sk-v1")
	// Usage is the provider's (llmtest reports 10 + 5 per call), streamed or not.
	for _, stream := range []bool{false, true} {
		r := v1Chat(t, base, token, map[string]any{"user": "erin", "stream": stream, "messages": userMsgs(fmt.Sprint("count my tokens ", stream))})
		u, _ := r["usage"].(map[string]any)
		if r["error"] != nil || u["prompt_tokens"] != float64(10) || u["completion_tokens"] != float64(5) || u["total_tokens"] != float64(15) {
			t.Fatalf("stream %v: usage %v (%v)", stream, u, r)
		}
	}
	before := len(fake.Requests())
	for range 12 { // the first attempt and the kernel's own retries of it; never the SDK's
		fake.Script(llmtest.Reply{Status: 503, Message: "overloaded", RetryAfter: "1"})
	}
	r := v1Chat(t, base, token, map[string]any{"user": "carol", "messages": userMsgs("book a table for two")})
	if r["status"] != float64(503) {
		t.Fatalf("the SDK's answer: %v", r)
	}
	if n := e.sessionEvents("carol")["user: book a table for two"]; n != 1 {
		t.Fatalf("the turn ran %d times", n)
	}
	chats := 0
	for _, q := range fake.Requests()[before:] {
		if strings.HasSuffix(q.Path, "/chat/completions") {
			chats++
		}
	}
	if chats > 3 { // 1 + the kernel client's 2 retries
		t.Fatalf("the provider was asked %d times: the SDK's retries ran the turn again", chats)
	}
	t.Logf("provider asked %d times for one /v1 request retried twice by the SDK", chats)
}
