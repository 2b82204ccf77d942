package backup_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// day1 is the first day of the fixture's events.
var day1 = time.Date(2024, 5, 6, 9, 30, 0, 0, time.UTC)

// tickClock starts in 2024 and advances 1 ms per call.
func tickClock() func() time.Time {
	var mu sync.Mutex
	now := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Millisecond)
		return now
	}
}

func openStore(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), sqlite.Options{Clock: tickClock()})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// fixture is what fill stored.
type fixture struct {
	ev      map[string]int64 // event ids by name
	imageID string           // an image block with binary data, pinned to L3
	adopted string           // a text block adopted as Alice's text
	alice   int64
}

// pngish is binary data with every byte value.
func pngish() []byte {
	b := make([]byte, 512)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

// fill gives s a bit of everything: sessions of three scopes, events in L1 and L2 with tool
// calls, meta, reasoning and blocks (binary data too), distilled events, entities with text
// blocks (one adopted from an event, one pinned image), triples with sources, a superseded
// chain, pins, an owner-made triple, scenes and settings (one a sealed secret).
func fill(t testing.TB, s *sqlite.Store) fixture {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	group := memory.Scope{Kind: memory.ScopeGroup, Group: "g1"}
	public := memory.Scope{Kind: memory.ScopePublic}
	for _, sess := range []memory.Session{
		{ID: "owner", Title: "Owner chat", SystemPrompt: "You are helpful.", Model: "m1", Channel: "gui"},
		{ID: "qq-g1", Title: "QQ group", Channel: "qq", Partner: "group_1", Scope: group},
		{ID: "pub", Title: "Public", Channel: "api", Scope: public},
	} {
		_, err := s.CreateSession(ctx, sess)
		must(err)
	}
	h := time.Hour
	evs, err := s.AppendEvents(ctx, []memory.Event{
		{Session: "owner", TurnID: "t1", Time: day1, Role: memory.RoleUser, Content: "I moved to London last year",
			Channel: "gui", Tokens: 7, Meta: map[string]string{"src": "import", "turn": "1"},
			Blocks: []memory.Block{
				{Kind: memory.BlockText, Name: "trip.txt", MIME: "text/plain", Text: "notes about the Thames walk"},
				{Kind: memory.BlockImage, Name: "photo.png", MIME: "image/png", Text: "OCR: Big Ben", Data: pngish()},
			}},
		{Session: "owner", TurnID: "t1", Time: day1.Add(time.Minute), Role: memory.RoleAssistant, Content: "Let me check the weather.",
			Reasoning: "the user wants weather", Tokens: 12,
			ToolCalls: []memory.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"London"}`}}},
		{Session: "owner", TurnID: "t1", Time: day1.Add(2 * time.Minute), Role: memory.RoleTool, Content: "rainy, 12 °C",
			ToolCallID: "c1", ToolName: "weather", ToolStatus: "ok", Tokens: 4},
		{Session: "owner", TurnID: "t2", Time: day1.Add(25 * h), Role: memory.RoleUser, Content: "Now I live in Paris",
			Blocks: []memory.Block{{Kind: memory.BlockText, Name: "lease", Text: "Alice's Paris apartment lease, rue Oberkampf"}}},
		{Session: "owner", TurnID: "t3", Time: day1.Add(49 * h), Role: memory.RoleUser, Content: "Actually I moved on to Berlin"},
		{Session: "qq-g1", Time: day1.Add(50 * h), Role: memory.RoleUser, Content: "Bob likes hiking in the Alps",
			Channel: "qq", Partner: "bob", Scope: group},
		{Session: "qq-g1", Time: day1.Add(50*h + time.Minute), Role: memory.RoleAssistant, Content: "Nice, hiking is fun",
			Channel: "qq", Partner: "group_1", Scope: group},
		{Session: "pub", Time: day1.Add(51 * h), Role: memory.RoleUser, Content: "public hello", Scope: public},
	})
	must(err)
	f := fixture{ev: map[string]int64{}}
	for i, name := range []string{"london", "weather", "result", "paris", "berlin", "hiking", "nice", "hello"} {
		f.ev[name] = evs[i].ID
	}
	f.imageID = evs[0].Blocks[1].ID
	f.adopted = evs[3].Blocks[0].ID

	ids := func(names ...string) []int64 {
		var out []int64
		for _, n := range names {
			out = append(out, f.ev[n])
		}
		return out
	}
	must(s.SetLayer(ctx, ids("london", "weather", "result", "paris", "berlin", "hiking"), memory.LayerL2))
	must(s.Touch(ctx, ids("london", "paris"), day1.Add(60*h)))
	must(s.SetScene(ctx, ids("hiking", "nice"), "chan:qq/peer:group_1"))

	_, err = s.ApplyDistillation(ctx, memory.Distillation{
		Events: ids("london", "weather", "result", "paris"),
		Facts: []memory.Fact{
			{Subject: "Alice", SubjectKind: "person", Predicate: "lives in", Object: "London", ObjectKind: "place", Sources: ids("london")},
			{Subject: "Alice", SubjectKind: "person", Predicate: "likes", Object: "tea", ObjectKind: "thing", Sources: ids("weather", "london")},
			{Subject: "Alice", SubjectKind: "person", Predicate: "lives in", Object: "Paris", ObjectKind: "place", Sources: ids("paris")},
		},
		Adopt:  []memory.Adoption{{Block: f.adopted, Entity: "Alice"}},
		Origin: "llm", At: day1.Add(70 * h),
	})
	must(err)
	_, err = s.ApplyDistillation(ctx, memory.Distillation{
		Events: ids("berlin"),
		Facts: []memory.Fact{{Subject: "Alice", SubjectKind: "person", Predicate: "lives in", Object: "Berlin",
			ObjectKind: "place", Sources: ids("berlin")}},
		At: day1.Add(71 * h),
	})
	must(err)
	_, err = s.ApplyDistillation(ctx, memory.Distillation{
		Events: ids("hiking"),
		Facts: []memory.Fact{{Subject: "Bob", SubjectKind: "person", Predicate: "likes", Object: "hiking",
			ObjectKind: "activity", Sources: ids("hiking")}},
		At: day1.Add(72 * h),
	})
	must(err)
	owned, err := s.AddTriple(ctx, memory.Fact{Subject: "Alice", SubjectKind: "person", Predicate: "knows", Object: "Bob",
		ObjectKind: "person", ValidFrom: day1}, "owner", memory.Scope{})
	must(err)
	must(s.Pin(ctx, "triple", owned.ID, true))
	alice, err := s.Entities(ctx, memory.EntityQuery{Viewer: memory.OwnerViewer, Name: "alice"})
	must(err)
	if len(alice) != 1 || !strings.Contains(alice[0].Text, "Oberkampf") {
		t.Fatalf("fixture: Alice = %+v, want one entity with the adopted lease text", alice)
	}
	f.alice = alice[0].ID
	must(s.Pin(ctx, "entity", f.alice, true))
	proj, err := s.PutEntity(ctx, memory.Entity{Name: "Project X", Kind: "project", Text: "first line\n\nsecond line\n",
		Scope: group})
	must(err)
	must(s.Recalled(ctx, []int64{proj.ID, f.alice}, day1.Add(80*h)))
	_, err = s.PinBlock(ctx, f.imageID, 0)
	must(err)

	_, err = s.PutScene(ctx, memory.Scene{Key: "chan:qq/peer:group_1", Declared: true,
		Features: map[string]float64{"channel:qq": 1, "partner:group_1": 1}, Strength: 2.5, Occurrences: 3,
		Seen: day1.Add(50 * h), Created: day1})
	must(err)
	_, err = s.PutScene(ctx, memory.Scene{Key: "emergent-weather",
		Features: map[string]float64{"tool:weather": 0.8, "topic:weather": 0.4, "tod:morning": 0.2},
		Strength: 1.2345678901234567, Occurrences: 1, Seen: day1, Created: day1})
	must(err)
	must(s.SetSetting(ctx, "ui.lang", "zh-CN"))
	must(s.SetSetting(ctx, "secret.provider.openai", "sealed:sk-123"))
	return f
}

// testSecrets seals settings under "secret." by prefixing "sealed:", as the kernel's codec
// would seal them.
type testSecrets struct{}

func (testSecrets) Export(key, value string, include bool) (string, bool, bool, error) {
	if !strings.HasPrefix(key, "secret.") {
		return value, false, true, nil
	}
	if !include {
		return "", false, false, nil
	}
	return strings.TrimPrefix(value, "sealed:"), true, true, nil
}

func (testSecrets) Import(key, value string, secret bool) (string, error) {
	if secret {
		return "sealed:" + value, nil
	}
	return value, nil
}
