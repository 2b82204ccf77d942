//go:build integration

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// TestWaiterSessionRenameDelete: `waiter session rename` and `waiter session delete [--forget]`
// against a real homed: a deleted chat leaves `session list`, its memory stays (recalled by
// `memory search`) unless --forget; an OpenAI API session is listed as a system one.
func TestWaiterSessionRenameDelete(t *testing.T) {
	e := newEnv(t)
	fake := llmtest.NewServer(t)
	e.start()
	e.addProvider(fake.URL(), "k")
	must := func(args ...string) string {
		t.Helper()
		out, errOut, code := e.waiter("", nil, args...)
		if code != 0 {
			t.Fatalf("waiter %v: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	list := func() map[string]client.Session {
		t.Helper()
		var ss []client.Session
		if err := json.Unmarshal([]byte(must("session", "list", "--json")), &ss); err != nil {
			t.Fatal(err)
		}
		out := map[string]client.Session{}
		for _, s := range ss {
			out[s.ID] = s
		}
		return out
	}
	must("session", "new", "--title", "trip", "trip")
	must("session", "new", "--title", "sail", "sail")
	must("ask", "--session", "trip", "we plan hiking near Porto in May")
	must("ask", "--session", "sail", "we go sailing around Lisbon in June")

	if out := must("session", "rename", "trip", "Trip", "to", "Porto"); !strings.Contains(out, `renamed to "Trip to Porto"`) {
		t.Errorf("rename said %q", out)
	}
	if got := list()["trip"].Title; got != "Trip to Porto" {
		t.Errorf("title after rename %q", got)
	}

	out := must("session", "delete", "trip")
	if !strings.Contains(out, "session trip deleted; its memory (2 events) is kept") {
		t.Errorf("delete said %q", out)
	}
	if _, ok := list()["trip"]; ok {
		t.Error("session list still has trip")
	}
	if out := must("memory", "search", "hiking Porto"); !strings.Contains(out, "Porto") {
		t.Errorf("the deleted chat's memory is gone:\n%s", out)
	}
	if out := must("session", "delete", "sail", "--forget"); !strings.Contains(out, "forgot 2 events") {
		t.Errorf("delete --forget said %q", out)
	}
	if out := must("memory", "search", "sailing Lisbon"); strings.Contains(out, "Lisbon") {
		t.Errorf("the forgotten chat is still recalled:\n%s", out)
	}

	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"session", "delete", "main"}, 1, "main session cannot be deleted"},
		{[]string{"session", "delete", "trip"}, 1, "not found"},
		{[]string{"session", "delete"}, 2, "usage: waiter session delete ID [--forget]"},
		{[]string{"session", "rename", "sail2"}, 2, "usage: waiter session rename ID TITLE"},
		{[]string{"session", "rename", "main", " "}, 1, "title must not be empty"},
	} {
		out, errOut, code := e.waiter("", nil, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.err) {
			t.Errorf("waiter %v: exit %d, stderr %q; want %d and %q (stdout %q)", tc.args, code, errOut, tc.code, tc.err, out)
		}
	}

	// The OpenAI-compatible API's session is the kernel's own: a client can tell.
	if code, body := e.postJSON("/v1/chat/completions", map[string]any{"model": "fake-1", "user": "apitest",
		"messages": []map[string]string{{"role": "user", "content": "hi"}}}); code != 200 {
		t.Fatalf("completions: HTTP %d %s", code, body)
	}
	ss := list()
	if s, ok := ss["apitest"]; !ok || !s.System() || s.Channel != client.ChannelOpenAI {
		t.Errorf("the OpenAI API session %+v (listed %v) is not a system one", s, ok)
	}
	if ss["main"].System() {
		t.Error("main is listed as a system session")
	}
}
