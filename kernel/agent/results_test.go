package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

// TestLongResultStoredAsBlock: a result over MaxResultBytes reaches the model and the stream as a
// head, a note and a tail; the tool event holds the preview and a text block with the whole
// result, which result_read pages back exactly.
func TestLongResultStoredAsBlock(t *testing.T) {
	var big strings.Builder
	for i := 0; big.Len() < 1<<20; i++ {
		fmt.Fprintf(&big, "line %06d: 海豹 okapi\n", i)
	}
	full := big.String()
	var readArgs string
	h := newHarness(t, Options{},
		calls(call("c1", "dump", `{}`)),
		func(ctx context.Context, req llm.Request, _ func(llm.Delta)) (llm.Response, error) {
			// The model reads on from where the note says the head ends.
			last := req.Messages[len(req.Messages)-1].Content
			m := regexp.MustCompile(`call result_read with (\{[^}]*\})`).FindStringSubmatch(last)
			if m == nil {
				return llm.Response{}, fmt.Errorf("no result_read hint in %.200q", last)
			}
			readArgs = m[1]
			return calls(call("c2", ResultReadTool, readArgs))(ctx, req, nil)
		},
		text("read it"),
	)
	h.addTools(t, funcTool{name: "dump", run: func(context.Context, json.RawMessage) (string, error) { return full, nil }},
		ResultRead(h.store, nil))
	if _, err := h.run(context.Background(), "dump it"); err != nil {
		t.Fatal(err)
	}
	h.checkInvariants(t)
	reqs := h.prov.requests()
	for i, r := range reqs {
		for _, m := range r.Messages {
			if len(m.Content) > DefaultMaxResultBytes+1024 {
				t.Fatalf("request %d carries a %d-byte message", i, len(m.Content))
			}
		}
	}
	tev := h.store.toolEvents()
	if len(tev) != 2 || len(tev[0].Blocks) != 1 {
		t.Fatalf("tool events %d, blocks of the first %d", len(tev), len(tev[0].Blocks))
	}
	b := tev[0].Blocks[0]
	if b.Text != full || b.Kind != memory.BlockText || !strings.HasPrefix(b.ID, "result_") {
		t.Fatalf("block %s %s holds %d bytes, want the whole %d", b.ID, b.Kind, len(b.Text), len(full))
	}
	prev := tev[0].Content
	if len(prev) > 24<<10 || !strings.HasPrefix(prev, full[:1000]) || !strings.HasSuffix(prev, full[len(full)-1000:]) || !strings.Contains(prev, b.ID) {
		t.Fatalf("preview of %d bytes: %.300q", len(prev), prev)
	}
	var a struct{ Offset, Length int }
	if err := json.Unmarshal([]byte(readArgs), &a); err != nil {
		t.Fatal(err)
	}
	page := tev[1].Content
	head, body, _ := strings.Cut(page, "\n")
	if tev[1].ToolStatus != StatusOK || body != full[a.Offset:a.Offset+a.Length] {
		t.Fatalf("page %s (%d bytes) is not bytes %d+%d of the result", head, len(body), a.Offset, a.Length)
	}
	if !strings.HasPrefix(full[:a.Offset]+body, prev[:a.Offset]) {
		t.Fatal("the page does not continue the head")
	}
	for _, e := range h.emitted() {
		if e.Tool != nil && len(e.Tool.Result) > DefaultMaxResultBytes+1024 {
			t.Fatalf("event %s streamed a %d-byte result", e.Type, len(e.Tool.Result))
		}
	}
}

func TestResultRead(t *testing.T) {
	text := strings.Repeat("ab海", 20_000) // 100,000 bytes; 海 is 3 bytes: 32768 falls inside one
	store := newMemStore(memory.Session{ID: "s1"})
	group := memory.Scope{Kind: memory.ScopeGroup, Group: "g1"}
	if _, err := store.AppendEvents(context.Background(), []memory.Event{
		{Session: "s1", Role: memory.RoleTool, Blocks: []memory.Block{{ID: "result_a", Kind: memory.BlockText, Text: text}}},
		{Session: "s1", Role: memory.RoleTool, Scope: group, Blocks: []memory.Block{{ID: "result_g", Kind: memory.BlockText, Text: "group secret"}}},
		{Session: "s1", Role: memory.RoleUser, Blocks: []memory.Block{{ID: "photo", Kind: memory.BlockText, Text: "not a result"}}},
	}); err != nil {
		t.Fatal(err)
	}
	deny := func(_ context.Context, _ TurnRequest, b memory.Block) bool { return b.ID != "result_a" }
	tests := []struct {
		name, args string
		may        MayRead
		scope      memory.Scope
		want       string // prefix of the result
		wantLen    int    // bytes after the header line (-1: not checked)
		err        string
	}{
		{"first page", `{"id":"result_a"}`, nil, memory.Scope{}, "[bytes 0–32767 of 100000 of result_a; read on from offset 32767]", 32767, ""},
		{"mid-rune offset moves on", `{"id":"result_a","offset":3,"length":10}`, nil, memory.Scope{}, "[bytes 5–15 of 100000", 10, ""},
		{"last page", `{"id":"result_a","offset":99990,"length":100}`, nil, memory.Scope{}, "[bytes 99990–100000 of 100000 of result_a]", 10, ""},
		{"past the end", `{"id":"result_a","offset":100000}`, nil, memory.Scope{}, "[offset 100000 is at or past the end", -1, ""},
		{"length over the cap", `{"id":"result_a","length":1000000}`, nil, memory.Scope{}, "[bytes 0–32767", 32767, ""},
		{"negative offset", `{"id":"result_a","offset":-1}`, nil, memory.Scope{}, "", -1, "offset must be 0 or more"},
		{"unknown", `{"id":"result_zz"}`, nil, memory.Scope{}, "", -1, `no stored result "result_zz"`},
		{"not a result block", `{"id":"photo"}`, nil, memory.Scope{}, "", -1, `no stored result "photo"`},
		{"another scope's", `{"id":"result_g"}`, nil, memory.Scope{}, "", -1, `no stored result "result_g"`},
		{"its own scope's", `{"id":"result_g"}`, nil, group, "[bytes 0–12 of 12 of result_g]", 12, ""},
		{"the caller's rule", `{"id":"result_a"}`, deny, memory.Scope{}, "", -1, `no stored result "result_a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := WithTurn(context.Background(), TurnRequest{Session: "s1", Scope: tt.scope})
			got, err := ResultRead(store, tt.may).Run(ctx, json.RawMessage(tt.args))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Fatalf("got %.120q, want prefix %q", got, tt.want)
			}
			if _, body, _ := strings.Cut(got, "\n"); tt.wantLen >= 0 && len(body) != tt.wantLen {
				t.Fatalf("body of %d bytes, want %d", len(body), tt.wantLen)
			}
		})
	}
}

func TestLongInputPreview(t *testing.T) {
	input := strings.Repeat("x", 200_000) + "THE END"
	h := newHarness(t, Options{}, text("ok"))
	if _, err := h.run(context.Background(), input); err != nil {
		t.Fatal(err)
	}
	msgs := h.prov.requests()[0].Messages
	last := msgs[len(msgs)-1].Content
	if len(last) > DefaultMaxResultBytes || !strings.HasSuffix(last, "THE END") || !strings.Contains(last, "bytes of this 200007-byte message left out") {
		t.Fatalf("the model got %d bytes: %.100q…", len(last), last)
	}
	if evs := h.store.all(); evs[0].Content != input {
		t.Fatal("the stored input is not whole")
	}
}
