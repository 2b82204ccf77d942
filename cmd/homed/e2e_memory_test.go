//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// The memory end-to-end tests run real homed and waiter processes (helpers in e2e_test.go):
// what the agent stores is shown by `waiter window` and found by `waiter memory search`, a group
// session never sees the owner's private secret, and kill -9 during a burst of turns loses no
// acknowledged turn.

// waiterJSON runs waiter with args and decodes its JSON output into out.
func (e *env) waiterJSON(out any, args ...string) {
	e.t.Helper()
	stdout, stderr, code := e.waiter("", nil, args...)
	if code != 0 {
		e.t.Fatalf("waiter %v: exit %d: %s", args, code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), out); err != nil {
		e.t.Fatalf("waiter %v: %v\n%s", args, err, stdout)
	}
}

func TestWaiterWindowAndMemorySearch(t *testing.T) {
	e := newEnv(t)
	fake := llmtest.NewServer(t)
	e.start()
	e.addProvider(fake.URL(), "k")
	const (
		secret  = "my locker code is zebra-4711 PINEAPPLE"
		marker  = "4711"
		chinese = "我昨天在西湖看到了一只白鹭"
	)
	e.ask(secret)
	e.ask(chinese)
	if _, errOut, code := e.waiter("", nil, "session", "new", "--channel", "qq", "--scope", "group:friends", "qq-friends"); code != 0 {
		t.Fatalf("session new: exit %d: %s", code, errOut)
	}
	n := len(fake.Requests())
	for _, q := range []string{"what is the locker code?", "tell me the zebra locker code"} {
		out, errOut, code := e.waiter("", nil, "ask", "--session", "qq-friends", q)
		if code != 0 || strings.Contains(out, marker) {
			t.Fatalf("ask in the group: exit %d, %q %s", code, out, errOut)
		}
	}
	for _, r := range fake.Requests()[n:] {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, marker) {
				t.Fatalf("the group's LLM request carries the private secret: %+v", m)
			}
		}
	}

	// The main session's window is the one the Chinese turn was built from: the secret's turn,
	// pinned as recent.
	var w client.Window
	e.waiterJSON(&w, "window", "--json")
	if w.Session != "main" || w.Input != chinese || len(w.Items) != 2 || w.Items[0].Content != secret || w.Items[0].Source != "pinned" {
		t.Fatalf("waiter window --json = %+v", w)
	}
	var gw client.Window
	e.waiterJSON(&gw, "window", "--session", "qq-friends", "--json")
	if gw.Session != "qq-friends" || len(gw.Items) == 0 {
		t.Fatalf("the group's window = %+v", gw)
	}
	for _, it := range gw.Items {
		if strings.Contains(it.Content, marker) {
			t.Fatalf("the group's window holds the secret: %+v", gw)
		}
	}

	searches := []struct {
		name  string
		args  []string
		want  string // content of a hit that must be there ("" = none)
		never string // text no hit may contain
	}{
		{"English", []string{"locker", "code"}, secret, ""},
		{"Chinese", []string{"白鹭"}, chinese, ""},
		{"Chinese phrase", []string{"西湖的白鹭"}, chinese, ""},
		{"layer 1", []string{"--layer", "1", "zebra"}, secret, ""},
		{"scope private", []string{"--scope", "private", "locker"}, secret, "what is the locker code?"},
		{"a group session's view", []string{"--session", "qq-friends", "locker", "code", "zebra"}, "what is the locker code?", marker},
	}
	for _, tc := range searches {
		t.Run("memory search/"+tc.name, func(t *testing.T) {
			var hits []client.MemoryHit
			e.waiterJSON(&hits, append([]string{"memory", "search", "--json"}, tc.args...)...)
			found := false
			for _, h := range hits {
				found = found || h.Content == tc.want
				if tc.never != "" && strings.Contains(h.Content, tc.never) {
					t.Errorf("hit %+v contains %q", h, tc.never)
				}
				if h.ID == 0 || h.Session == "" || h.Scope == "" || h.Layer == 0 || h.Reason == "" {
					t.Errorf("incomplete hit %+v", h)
				}
			}
			if !found {
				t.Fatalf("no hit %q in %+v", tc.want, hits)
			}
		})
	}
	// Bad input through the API: an empty message is refused.
	for _, body := range []string{`{"input":""}`, `{"input":"   "}`} {
		if code, out := e.postJSON("/api/v1/chat", body); code != 400 {
			t.Fatalf("POST /api/v1/chat %s: HTTP %d %s", body, code, out)
		}
	}
}

// burstWord is a letters-only word unique to turn i (the tokenizer keeps it whole).
func burstWord(i int) string {
	return fmt.Sprintf("zq%c%c", 'a'+i/26%26, 'a'+i%26)
}

func TestKill9DuringTurnBurstKeepsAcknowledgedTurns(t *testing.T) {
	e := newEnv(t)
	fake := llmtest.NewServer(t)
	h := e.start()
	e.addProvider(fake.URL(), "k")
	const workers, killAfter = 3, 9
	for w := 0; w < workers; w++ {
		if _, errOut, code := e.waiter("", nil, "session", "new", fmt.Sprintf("w%d", w)); code != 0 {
			t.Fatalf("session new: %s", errOut)
		}
	}
	type acked struct{ session, input string }
	var (
		mu    sync.Mutex
		done  []acked
		next  int
		wg    sync.WaitGroup
		kill  = make(chan struct{})
		stop  = make(chan struct{})
		count int
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(session string) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				input := "burst turn " + burstWord(i)
				out, _, code := e.waiter("", nil, "ask", "--session", session, input)
				if code != 0 {
					continue // in flight when homed died: not acknowledged
				}
				if strings.TrimSpace(out) != "PONG "+input {
					t.Errorf("ask %q: %q", input, out)
				}
				mu.Lock()
				done = append(done, acked{session, input})
				count++
				if count == killAfter {
					close(kill)
				}
				mu.Unlock()
			}
		}(fmt.Sprintf("w%d", w))
	}
	<-kill
	h.kill9() // other asks are in flight
	close(stop)
	wg.Wait()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := sqlite.Open(ctx, filepath.Join(e.data, "hologram.db"), sqlite.Options{})
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Fatalf("integrity check after kill -9: %v", err)
	}
	stored := map[string]bool{}
	for w := 0; w < workers; w++ {
		hist, err := st.History(ctx, fmt.Sprintf("w%d", w), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range hist {
			stored[ev.Session+"\x00"+string(ev.Role)+"\x00"+ev.Content] = true
		}
	}
	st.Close()
	if len(done) < killAfter {
		t.Fatalf("only %d turns acknowledged", len(done))
	}
	for _, a := range done {
		if !stored[a.session+"\x00user\x00"+a.input] || !stored[a.session+"\x00assistant\x00PONG "+a.input] {
			t.Errorf("acknowledged turn %q in %s lost after kill -9", a.input, a.session)
		}
	}
	// Restarted, homed finds every acknowledged turn through its full-text index.
	e.start()
	for _, a := range done {
		word := strings.TrimPrefix(a.input, "burst turn ")
		var hits []client.MemoryHit
		e.waiterJSON(&hits, "memory", "search", "--json", word)
		found := false
		for _, h := range hits {
			found = found || h.Content == a.input && h.Session == a.session
		}
		if !found {
			t.Errorf("memory search %s after restart: %+v", word, hits)
		}
	}
}
