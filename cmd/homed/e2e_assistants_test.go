//go:build integration

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// TestAssistantCommands: `waiter assistant add/list/start/rm` over the real homed, the real
// files plugin and ../shared/tools/fake_openai.py: a chat started from a preset has its
// instructions and its model, and offers only its tools (the fake answers NOTOOL for a tool it
// was not offered); the main chat offers every tool; bad input is a clear error.
func TestAssistantCommands(t *testing.T) {
	e := newEnv(t)
	bp := t.TempDir()
	buildBuiltins(t, bp, "files")
	t.Setenv("HOLOGRAM_PLUGINS_DIR", bp)
	fake := startFakeOpenAI(t)
	e.start()
	e.addProvider(fake.url, "sk-assistants")
	if out, errOut, code := e.waiter("", []string{"HOLOGRAM_API_KEY=sk-2"}, "provider", "add", "reader", "--base-url", fake.url, "--model", "fake-reader", "--priority", "5"); code != 0 {
		t.Fatalf("provider add reader: %d\n%s%s", code, out, errOut)
	}
	e.waitPlugin("files", "running", func(p client.Plugin) bool { return p.State == "running" && contains(p.Tools, "files_read") })

	for _, tc := range []struct {
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{[]string{"list"}, 0, "no assistants yet", ""},
		{[]string{"add", "Reader", "--instructions", "You are the reading helper.", "--model", "fake-reader", "--tool", "files"}, 0, "assistant reader (Reader) saved", ""},
		{[]string{"add", "Chatter", "--instructions", "Only chat.", "--tool", "notes"}, 0, "assistant chatter (Chatter) saved", ""},
		{[]string{"add", "Bad", "--tool", "rm -rf"}, 1, "", `tool "rm -rf"`},
		{[]string{"add"}, 2, "", "usage: waiter assistant add NAME"},
		{[]string{"start", "ghost"}, 1, "", `no assistant "ghost"`},
		{[]string{"rm", "ghost"}, 1, "", `no assistant "ghost"`},
		{[]string{"list"}, 0, "chatter  Chatter  (default)    notes  Only chat.", ""},
		{[]string{"frobnicate"}, 2, "", `unknown assistant subcommand "frobnicate"`},
	} {
		out, errOut, code := e.waiter("", nil, append([]string{"assistant"}, tc.args...)...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.err) {
			t.Errorf("assistant %v: exit %d, want %d\n%s%s", tc.args, code, tc.code, out, errOut)
		}
	}
	var list []client.Assistant
	e.waiterJSON(&list, "assistant", "list", "--json")
	if len(list) != 2 || list[1].ID != "reader" || list[1].Model != "fake-reader" || !contains(list[1].Tools, "files") {
		t.Fatalf("assistant list --json = %+v", list)
	}

	start := func(id string) string {
		out, errOut, code := e.waiter("", nil, "assistant", "start", id)
		if code != 0 || !strings.Contains(errOut, "waiter chat --session "+strings.TrimSpace(out)) {
			t.Fatalf("assistant start %s: %d\n%s%s", id, code, out, errOut)
		}
		return strings.TrimSpace(out)
	}
	ask := func(session, text string) string {
		out, errOut, code := e.waiter("", nil, "ask", "--session", session, text)
		if code != 0 {
			t.Fatalf("ask in %s: %d\n%s%s", session, code, out, errOut)
		}
		return out
	}
	reader, chatter := start("reader"), start("chatter")
	call := `CALL files_read {"path":"/etc/hostname"} marker-`
	if got := ask(reader, call+"reader"); !strings.HasPrefix(got, "DONE") {
		t.Errorf("the reader's chat: %q, want files_read called (DONE …)", got)
	}
	var logged struct {
		Body struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		} `json:"body"`
	}
	if err := json.Unmarshal([]byte(fake.lastRequestWith(t, "marker-reader")), &logged); err != nil {
		t.Fatal(err)
	}
	body := logged.Body
	if len(body.Messages) == 0 {
		t.Fatalf("the reader's request has no messages: %+v", logged)
	}
	if body.Model != "fake-reader" || len(body.Messages) == 0 || body.Messages[0].Role != "system" ||
		!strings.HasSuffix(body.Messages[0].Content.(string), "You are the reading helper.") {
		t.Errorf("the reader's request: model %q, first message %+v", body.Model, body.Messages[:1])
	}
	if got := ask(chatter, call+"chatter"); !strings.HasPrefix(got, "NOTOOL files_read") {
		t.Errorf("the chatter's chat: %q, want files_read withheld (NOTOOL)", got)
	}
	if got := e.ask(call + "main"); !strings.HasPrefix(got, "DONE") {
		t.Errorf("the main chat: %q, want files_read called", got)
	}
	// Removing a preset keeps its chats (and their tool filter).
	if out, errOut, code := e.waiter("", nil, "assistant", "rm", "chatter"); code != 0 || !strings.Contains(out, "assistant chatter removed") {
		t.Fatalf("assistant rm: %d\n%s%s", code, out, errOut)
	}
	if got := ask(chatter, call+"chatter-2"); !strings.HasPrefix(got, "NOTOOL files_read") {
		t.Errorf("the chatter's chat after rm: %q, want files_read still withheld", got)
	}
}
