package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/memory"
)

// The memory tests drive the kernel through its real paths: a SQLite file indexed with homed's
// tokenizer (jieba, stemming, WordNet), the agent loop, and llmtest as the LLM. The Service
// conformance suite (kerneltest) checks Window and SearchMemory in-process and over HTTP; these
// tests check what only the kernel can: scopes across every recall path, the L1/L2 movement,
// and bad input. A store from an older schema is memory/sqlite's TestMigrateFromVersion1 (and
// TestSchemaTooNew for the other direction); kill -9 during a burst of turns is
// cmd/homed's TestKill9DuringTurnBurstKeepsAcknowledgedTurns.

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// withFake adds an llmtest provider to k.
func withFake(t *testing.T, k memKernel) *llmtest.Server {
	t.Helper()
	fake := llmtest.NewServer(t)
	if _, err := k.Service().AddProvider(testCtx(t), client.ProviderConfig{Name: "fake", BaseURL: fake.URL(), Model: "fake-1"}); err != nil {
		t.Fatal(err)
	}
	return fake
}

// chat runs one turn and fails the test on error.
func chat(t *testing.T, k memKernel, session, input string) client.ChatResult {
	t.Helper()
	res, err := k.Service().Chat(testCtx(t), client.ChatRequest{Session: session, Input: input}, nil)
	if err != nil {
		t.Fatalf("Chat(%s, %.40q): %v", session, input, err)
	}
	return res
}

// promptText is every message (and tool call) of the LLM requests from index from on, joined.
func promptText(reqs []llmtest.Recorded, from int) string {
	var b strings.Builder
	for _, r := range reqs[from:] {
		for _, m := range r.Messages {
			b.WriteString(m.Role + ": " + m.Content + "\n")
			for _, c := range m.ToolCalls {
				b.WriteString(c.Name + " " + c.Arguments + "\n")
			}
		}
	}
	return b.String()
}

func mustCreate(t *testing.T, k memKernel, s client.Session) {
	t.Helper()
	if _, err := k.Service().CreateSession(testCtx(t), s); err != nil {
		t.Fatal(err)
	}
}

func coldQuery(query string) llmtest.Reply {
	args, _ := json.Marshal(map[string]string{"query": query})
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "coldcontext_query", Arguments: string(args)}}}
}

// TestPrivateSecretNeverSurfacesInGroup is the scope test: the owner tells the agent a
// secret in a private chat, and no recall path — window, auto-recall into pre_action,
// coldcontext_query, API search — surfaces it in a group session, while the owner's views do
// (so the test can fail), a public session sees only public things and one group never sees
// another's.
func TestPrivateSecretNeverSurfacesInGroup(t *testing.T) {
	k := newMemKernel(t, memOptions{WindowTokens: 256, Recent: 4})
	fake := withFake(t, k)
	ctx := testCtx(t)
	const (
		secret    = "my locker code is zebra-4711 PINEAPPLE"
		marker    = "4711" // in nothing but the secret and what repeats it
		friends   = "the friends locker room opens at noon"
		other     = "other group locker combination is walrus-99"
		public    = "public notice: lockers are repainted on monday"
		question  = "which locker code had the zebra and pineapple?"
		roomMark  = "room opens at noon"
		otherMark = "walrus-99"
		pubMark   = "repainted"
	)
	for _, s := range []client.Session{
		{ID: "qq-friends", Channel: "qq", Scope: "group:friends"},
		{ID: "qq-friends-2", Channel: "qq", Partner: "bob", Scope: "group:friends"},
		{ID: "qq-other", Channel: "qq", Scope: "group:other"},
		{ID: "news", Channel: "blog", Scope: "public"},
		{ID: "blog", Channel: "blog", Scope: "public"},
		{ID: "notes"}, // another private session of the owner's
	} {
		mustCreate(t, k, s)
	}

	// The secret, then one more turn: the main session's window holds it (the window's positive
	// control), then unrelated turns sink it to L2, where only coldcontext_query looks.
	chat(t, k, "main", secret)
	chat(t, k, "main", "harbour lighthouse photos")
	w, err := k.Service().Window(ctx, "main")
	if err != nil || !strings.Contains(itemsText(w), marker) {
		t.Fatalf("the main session's window lacks the secret: %+v, %v", w, err)
	}
	chatUntilSunk(t, k, "main", secret)
	// The group's own thing, also sunk to L2 (so the group's coldcontext_query has something
	// to find); another group's; a public one.
	chat(t, k, "qq-friends-2", friends)
	chatUntilSunk(t, k, "qq-friends-2", friends)
	chat(t, k, "qq-other", other)
	chat(t, k, "news", public)

	type viewer struct {
		session string
		see     map[string]string // path → text it must surface ("" = nothing in particular)
		never   []string
	}
	owner := viewer{"notes", map[string]string{"auto-recall": marker, "coldcontext_query": marker, "API search": marker}, nil}
	groupFriends := viewer{"qq-friends", map[string]string{"auto-recall": roomMark, "coldcontext_query": roomMark, "API search": roomMark},
		[]string{marker, otherMark}}
	groupOther := viewer{"qq-other", map[string]string{"auto-recall": pubMark, "API search": otherMark}, []string{marker, roomMark}}
	public2 := viewer{"blog", map[string]string{"auto-recall": pubMark, "API search": pubMark}, []string{marker, roomMark, otherMark}}

	paths := []struct {
		name string
		// viewers in order: the owner's auto-recall runs before the groups ask the same
		// question (their questions would crowd the top k), and the owner's coldcontext_query
		// runs last (it brings the secret back to L1, out of the groups' reach).
		viewers  []viewer
		surfaced func(t *testing.T, session string) string
	}{
		{"auto-recall", []viewer{owner, groupFriends, groupOther, public2}, func(t *testing.T, session string) string {
			n := len(fake.Requests())
			res := chat(t, k, session, question)
			return promptText(fake.Requests(), n) + res.Text
		}},
		{"API search", []viewer{owner, groupFriends, groupOther, public2}, func(t *testing.T, session string) string {
			hits, err := k.Service().SearchMemory(ctx, client.MemoryQuery{Text: question, Session: session, K: client.MaxMemoryK})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, h := range hits {
				b.WriteString(h.Content + "\n")
			}
			return b.String()
		}},
		{"coldcontext_query", []viewer{groupFriends, groupOther, public2, owner}, func(t *testing.T, session string) string {
			n := len(fake.Requests())
			fake.Script(coldQuery(question))
			res := chat(t, k, session, "please search the cold memory")
			hist, err := k.Service().History(ctx, session, 0)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			tools := 0
			for _, m := range hist {
				if m.TurnID == res.TurnID && m.Role == "tool" {
					tools++
					if m.ToolName != "coldcontext_query" || m.ToolStatus != "ok" {
						t.Fatalf("tool result %+v", m)
					}
				}
				if m.TurnID == res.TurnID {
					b.WriteString(m.Content + "\n")
				}
			}
			if tools != 1 {
				t.Fatalf("turn %s stored %d tool results, want 1: %+v", res.TurnID, tools, hist)
			}
			return b.String() + promptText(fake.Requests(), n)
		}},
		{"window", []viewer{owner, groupFriends, groupOther, public2}, func(t *testing.T, session string) string {
			w, err := k.Service().Window(ctx, session)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(itemsText(w), question) {
				t.Fatalf("the window of %s lacks its own earlier question: %+v", session, w)
			}
			return itemsText(w)
		}},
	}
	for _, p := range paths {
		for _, v := range p.viewers {
			t.Run(p.name+"/"+v.session, func(t *testing.T) {
				got := p.surfaced(t, v.session)
				if want := v.see[p.name]; want != "" && !strings.Contains(got, want) {
					t.Errorf("%s in %s does not surface %q:\n%s", p.name, v.session, want, got)
				}
				for _, no := range v.never {
					if strings.Contains(got, no) {
						t.Errorf("%s in %s surfaces %q:\n%s", p.name, v.session, no, got)
					}
				}
			})
		}
	}
	// The owner's own clients (no session) see every scope.
	hits, err := k.Service().SearchMemory(ctx, client.MemoryQuery{Text: "locker", K: client.MaxMemoryK})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{secret, friends, other, public} {
		if !slices.ContainsFunc(hits, func(h client.MemoryHit) bool { return h.Content == want }) {
			t.Errorf("the owner's search misses %q", want)
		}
	}
}

// chatUntilSunk chats unrelated turns in session until the event whose content is content has
// sunk to L2: the window fills its budget with earlier turns, so it sinks once the session
// holds more than the budget (at most 80 turns).
func chatUntilSunk(t *testing.T, k memKernel, session, content string) {
	t.Helper()
	for i := range 80 {
		l2, err := k.Store.LayerEvents(context.Background(), session, memory.LayerL2)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(l2, func(e memory.Event) bool { return e.Content == content }) {
			return
		}
		chat(t, k, session, fmt.Sprintf("filler turn %d about quartz meadows and copper kettles", i))
	}
	t.Fatalf("%q did not sink to L2 of %s in 80 turns", content, session)
}

func itemsText(w client.Window) string {
	var b strings.Builder
	for _, it := range w.Items {
		b.WriteString(it.Content + "\n")
	}
	return b.String()
}

// TestWindowSinksToL2AndColdQueryBringsBack follows one event from L1 to L2 and back: a small
// window sinks old turns, the window explains every item, and coldcontext_query Peeks (one
// access) and moves the event back into L1 at its original time, where the window marks it
// "recalled".
func TestWindowSinksToL2AndColdQueryBringsBack(t *testing.T) {
	k := newMemKernel(t, memOptions{WindowTokens: 256, Recent: 4})
	fake := withFake(t, k)
	ctx := testCtx(t)
	const first = "ultramarine tulips bloom near the pond"
	chat(t, k, "main", first)
	chatUntilSunk(t, k, "main", first)
	l2, err := k.Store.LayerEvents(ctx, "main", memory.LayerL2)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(l2, func(e memory.Event) bool { return e.Content == first })
	if i < 0 {
		t.Fatalf("the first message did not sink to L2: %+v", l2)
	}
	sunk := l2[i]
	if sunk.Accesses != 0 {
		t.Fatalf("a sunk event starts with %d accesses", sunk.Accesses)
	}
	searches := []struct {
		name  string
		layer int
		found bool
	}{
		{"layer 2 has it", 2, true},
		{"layer 1 has not", 1, false},
		{"both layers", 0, true},
	}
	for _, tc := range searches {
		t.Run("search/"+tc.name, func(t *testing.T) {
			hits, err := k.Service().SearchMemory(ctx, client.MemoryQuery{Text: "ultramarine tulips", Layer: tc.layer})
			if err != nil {
				t.Fatal(err)
			}
			j := slices.IndexFunc(hits, func(h client.MemoryHit) bool { return h.ID == sunk.ID })
			if (j >= 0) != tc.found || j >= 0 && hits[j].Layer != 2 {
				t.Fatalf("layer %d: hit of event %d found=%v, want %v: %+v", tc.layer, sunk.ID, j >= 0, tc.found, hits)
			}
		})
	}

	// The oldest L1 event is the next to leave the pinned set: an input sharing its words keeps
	// it by score.
	l1, err := k.Store.LayerEvents(ctx, "main", memory.LayerL1)
	if err != nil || len(l1) == 0 {
		t.Fatalf("L1: %+v, %v", l1, err)
	}
	oldest := l1[0]
	chat(t, k, "main", "tell me more about "+oldest.Content)
	w, err := k.Service().Window(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if w.Budget != 256 || w.Used > w.Budget || w.Pinned == 0 || w.Pinned > 4 {
		t.Fatalf("window %+v", w)
	}
	sources := map[string]int{}
	for j, it := range w.Items {
		sources[it.Source]++
		switch it.Source {
		case "pinned":
			if it.Reason != "recent" {
				t.Errorf("pinned item %+v", it)
			}
		case "scored":
			if it.Score <= 0 || it.Reason != "relevant to the input" {
				t.Errorf("scored item %+v", it)
			}
		default:
			t.Errorf("item %+v has source %q", it, it.Source)
		}
		if j > 0 && it.Time.Before(w.Items[j-1].Time) {
			t.Errorf("items not chronological: %+v", w.Items)
		}
	}
	if !slices.ContainsFunc(w.Items, func(it client.WindowItem) bool { return it.ID == oldest.ID && it.Source == "scored" }) {
		t.Fatalf("the oldest L1 event %q is not kept by score: %+v", oldest.Content, w.Items)
	}
	if sources["pinned"] != w.Pinned {
		t.Fatalf("%d pinned items, window says %d", sources["pinned"], w.Pinned)
	}

	// coldcontext_query: Peek, then back into L1 at the original time.
	n := len(fake.Requests())
	fake.Script(coldQuery("ultramarine tulips"))
	chat(t, k, "main", "which flowers did I mention?")
	if p := promptText(fake.Requests(), n); !strings.Contains(p, "tool: ") || !strings.Contains(p, first) {
		t.Fatalf("the tool result sent to the LLM lacks the recalled event:\n%s", p)
	}
	got, err := k.Store.Events(ctx, []int64{sunk.ID})
	if err != nil || len(got) != 1 {
		t.Fatalf("Events(%d) = %+v, %v", sunk.ID, got, err)
	}
	back := got[0].Event
	if back.Layer != memory.LayerL1 || back.Accesses != 1 || back.LastAccess.IsZero() || !back.Time.Equal(sunk.Time) || back.Content != first {
		t.Fatalf("after coldcontext_query: layer %d, accesses %d, last access %v, time %v (was %v)",
			back.Layer, back.Accesses, back.LastAccess, back.Time, sunk.Time)
	}
	// The next turn about it keeps it, marked recalled, first (its original time) in the window
	// and in the prompt.
	n = len(fake.Requests())
	chat(t, k, "main", "ultramarine tulips again")
	w, err = k.Service().Window(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	j := slices.IndexFunc(w.Items, func(it client.WindowItem) bool { return it.ID == sunk.ID })
	if j != 0 || w.Items[j].Source != "recalled" || !strings.HasPrefix(w.Items[j].Reason, "recalled from cold context") {
		t.Fatalf("the recalled event is not the window's first item, marked recalled: %+v", w.Items)
	}
	reqs := fake.Requests()
	msgs := reqs[n].Messages
	if k := slices.IndexFunc(msgs, func(m llm.Message) bool { return m.Content == first }); k < 0 || msgs[k].Role != "user" {
		t.Fatalf("the recalled event is not in the prompt as the user's message: %+v", msgs)
	}
}

// TestBadInput feeds the memory empty, huge, binary, invalid-UTF-8 and mixed-script messages
// through the agent's turn (Chat) and the channel path (Ingest): nothing panics, empty input is
// refused, everything else is stored as valid UTF-8 and found again, and the tokenizer (jieba)
// only ever sees valid UTF-8.
func TestBadInput(t *testing.T) {
	var (
		mu      sync.Mutex
		invalid []string
	)
	k := newMemKernel(t, memOptions{Seen: func(text string) {
		if !utf8.ValidString(text) || strings.ContainsRune(text, 0) {
			mu.Lock()
			invalid = append(invalid, text)
			mu.Unlock()
		}
	}})
	fake := withFake(t, k)
	ctx := testCtx(t)

	t.Run("empty", func(t *testing.T) {
		for _, in := range []string{"", "   ", "\n\t "} {
			if _, err := k.Service().Chat(ctx, client.ChatRequest{Input: in}, nil); !errors.Is(err, client.ErrInvalid) {
				t.Errorf("Chat(%q) = %v, want ErrInvalid", in, err)
			}
		}
		if hist, _ := k.Service().History(ctx, "main", 0); len(hist) != 0 {
			t.Fatalf("empty input stored: %+v", hist)
		}
	})

	var big strings.Builder
	for i := 0; big.Len() < 1<<20; i++ {
		if i == 5000 {
			big.WriteString("quetzal ")
		}
		big.WriteString("lorem ipsum dolor sit amet consectetur ")
	}
	big.WriteString("finis") // Chat trims the input's outer white space
	cases := []struct {
		name    string
		input   string
		want    string   // stored content ("" = input)
		queries []string // each finds the stored event
	}{
		{"1 MB", big.String(), "", []string{"quetzal"}},
		{"binary garbage", "\x00\x01\x02\xff\xfe okapi \x00\x9c\x1b[31m 海豹 \x00\x80", "\x01\x02\uFFFD okapi \uFFFD\x1b[31m 海豹 \uFFFD",
			[]string{"okapi", "海豹"}},
		{"invalid UTF-8 inside Chinese", "我喜欢\xe4\xb8吃饺子\xc3\x28 dumplings", "我喜欢\uFFFD吃饺子\uFFFD( dumplings",
			[]string{"饺子", "dumplings"}},
		{"mixed Chinese English emoji", "周末我们去Shanghai看熊猫🐼 and ate xiaolongbao 🥟!", "", []string{"熊猫", "Shanghai pandas", "xiaolongbao"}},
	}
	paths := []struct {
		name  string
		store func(t *testing.T, session, input string) int64 // the stored event's id
	}{
		{"Chat", func(t *testing.T, session, input string) int64 {
			res := chat(t, k, session, input)
			hist, err := k.Service().History(ctx, session, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range hist {
				if m.TurnID == res.TurnID && m.Role == "user" {
					return m.ID
				}
			}
			t.Fatalf("turn %s stored no user event: %+v", res.TurnID, hist)
			return 0
		}},
		{"Ingest", func(t *testing.T, session, input string) int64 {
			evs, err := k.Ingest(ctx, []kernel.IngestEvent{{Session: session, Content: input, Partner: "carol"}})
			if err != nil || len(evs) != 1 {
				t.Fatalf("Ingest = %+v, %v", evs, err)
			}
			return evs[0].ID
		}},
	}
	for _, p := range paths {
		for _, tc := range cases {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				session := strings.ToLower(p.name) + "-" + strings.ReplaceAll(tc.name, " ", "-")
				mustCreate(t, k, client.Session{ID: session})
				n := len(fake.Requests())
				id := p.store(t, session, tc.input)
				want := tc.want
				if want == "" {
					want = tc.input
				}
				got, err := k.Store.Events(ctx, []int64{id})
				if err != nil || len(got) != 1 {
					t.Fatalf("Events(%d) = %+v, %v", id, got, err)
				}
				if c := got[0].Event.Content; c != want {
					t.Fatalf("stored %d bytes %.80q, want %d bytes %.80q", len(c), c, len(want), want)
				}
				if got[0].Indexed == "" {
					t.Fatal("the event has no index terms")
				}
				for _, r := range fake.Requests()[n:] {
					for _, m := range r.Messages {
						if !utf8.ValidString(m.Content) {
							t.Fatalf("the LLM got invalid UTF-8: %.80q", m.Content)
						}
					}
				}
				for _, q := range tc.queries {
					hits, err := k.Service().SearchMemory(ctx, client.MemoryQuery{Text: q, Session: session, K: client.MaxMemoryK})
					if err != nil {
						t.Fatal(err)
					}
					if !slices.ContainsFunc(hits, func(h client.MemoryHit) bool { return h.ID == id }) {
						t.Errorf("query %q does not find event %d: %+v", q, id, hits)
					}
				}
			})
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(invalid) > 0 {
		t.Fatalf("the tokenizer got %d invalid texts, e.g. %.80q", len(invalid), invalid[0])
	}
}

// TestWindowFillsItsBudgetOverTurns is the new user's case: thirty short turns, nothing in
// the 30th input matching an earlier one. The 30th prompt carries the whole conversation (it
// fits the default budget of 8,000 tokens), not only the dozen pinned recent events; with a
// budget it cannot fill, the window uses most of it and the oldest turns sink to L2.
func TestWindowFillsItsBudgetOverTurns(t *testing.T) {
	for _, tc := range []struct {
		name      string
		o         memOptions
		allTurns  bool // the last prompt holds every earlier user turn
		firstSunk bool
	}{
		{"default budget", memOptions{}, true, false},
		{"a 256-token budget", memOptions{WindowTokens: 256, Recent: 4}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newMemKernel(t, tc.o)
			fake := withFake(t, k)
			ctx := testCtx(t)
			for i := range 29 {
				chat(t, k, "main", fmt.Sprintf("note %d: the %s shelf needs sorting", i, []string{"red", "green", "blue"}[i%3]))
			}
			n := len(fake.Requests())
			chat(t, k, "main", "ok, thanks")
			prompt := promptText(fake.Requests(), n)
			users := strings.Count(prompt, "user: note ")
			if tc.allTurns && users != 29 {
				t.Fatalf("the 30th prompt holds %d of the 29 earlier user turns:\n%s", users, prompt)
			}
			if !tc.allTurns && (users < 4 || users >= 29) {
				t.Fatalf("the 30th prompt holds %d of 29 earlier user turns with a 256-token budget:\n%s", users, prompt)
			}
			w, err := k.Service().Window(ctx, "main")
			if err != nil {
				t.Fatal(err)
			}
			if !tc.allTurns && w.Used < w.Budget*3/4 {
				t.Errorf("window used %d of %d tokens", w.Used, w.Budget)
			}
			l2, err := k.Store.LayerEvents(ctx, "main", memory.LayerL2)
			if err != nil {
				t.Fatal(err)
			}
			sunk := slices.ContainsFunc(l2, func(e memory.Event) bool { return strings.HasPrefix(e.Content, "note 0:") })
			if sunk != tc.firstSunk {
				t.Errorf("the first turn in L2: %v, want %v (L2 holds %d events)", sunk, tc.firstSunk, len(l2))
			}
		})
	}
}
