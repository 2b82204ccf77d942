package kernel_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/memory"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// factsReply is an extraction reply of the LLM.
func factsReply(facts ...map[string]any) llmtest.Reply {
	for _, f := range facts {
		for _, k := range []string{"subject_kind", "object_kind"} {
			if _, ok := f[k]; !ok {
				f[k] = "thing"
			}
		}
		if _, ok := f["replaces"]; !ok {
			f["replaces"] = false
		}
		if _, ok := f["valid_from"]; !ok {
			f["valid_from"] = ""
		}
	}
	b, _ := json.Marshal(map[string]any{"facts": facts})
	return llmtest.Reply{Text: "```json\n" + string(b) + "\n```"}
}

// ingest stores owner messages in the main session and returns their ids.
func ingest(t *testing.T, k memKernel, texts ...string) []int64 {
	t.Helper()
	evs := make([]kernel.IngestEvent, len(texts))
	for i, s := range texts {
		evs[i] = kernel.IngestEvent{Session: "main", Content: s}
	}
	out, err := k.Ingest(testCtx(t), evs)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(out))
	for i, e := range out {
		ids[i] = e.ID
	}
	return ids
}

// currentFacts renders the graph's current triples as "subject predicate object" lines.
func currentFacts(t *testing.T, k memKernel) []string {
	t.Helper()
	page, err := k.Service().Graph(testCtx(t), client.GraphQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tr := range page.Triples {
		out = append(out, strings.ToLower(tr.SubjectName+" "+tr.Predicate+" "+tr.ObjectName))
	}
	return out
}

// TestMemoryGCDistilsRecallsCorrectsAndForgets is the graph's path through the kernel: events
// cool to L2, memgc distils them with the LLM (a real HTTP provider), the facts come back into the
// next turn's prompt, a correction supersedes, and forgetting the source deletes the fact.
func TestMemoryGCDistilsRecallsCorrectsAndForgets(t *testing.T) {
	clock := newFakeClock()
	k := newMemKernel(t, memOptions{WindowTokens: 256, Recent: 2, Clock: clock.Now, Extractor: "llm"})
	fake := withFake(t, k)
	ctx := testCtx(t)

	ids := ingest(t, k, "I live in Berlin these days.", "My sister is called Anna.", "The weather is nice.", "Ok, talk later.")

	// Not idle yet: nothing to cool or distil.
	rep, err := k.Service().MemoryGC(ctx)
	if err != nil || rep.Cooled != 0 || rep.Distilled != 0 {
		t.Fatalf("MemoryGC on a fresh memory = %+v, %v; want nothing done", rep, err)
	}
	// A day later the session cools (all but the 2 recent events sink); three days later they
	// are idle enough to distil.
	clock.Advance(73 * time.Hour)
	fake.Script(factsReply(
		map[string]any{"subject": "owner", "subject_kind": "person", "predicate": "lives in", "object": "Berlin", "object_kind": "place", "sources": []int64{ids[0]}},
		map[string]any{"subject": "Anna", "subject_kind": "person", "predicate": "sister of", "object": "owner", "object_kind": "person", "sources": []int64{ids[1]}},
	))
	rep, err = k.Service().MemoryGC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The turns' facts (the rules, right after each turn) are in the graph already: the LLM's
	// confirm or add to them.
	if rep.Cooled != 2 || rep.Distilled != 2 || rep.Triples+rep.Confirmed != 2 || rep.Extractor != "llm" {
		t.Fatalf("MemoryGC = %+v; want 2 cooled, 2 distilled, 2 triples by the llm (new or confirmed)", rep)
	}
	reqs := fake.Requests()
	if p := promptText(reqs, len(reqs)-1); !strings.Contains(p, "I live in Berlin") || !strings.Contains(p, fmt.Sprint(ids[0])) {
		t.Fatalf("the extraction prompt lacks the cold events and their ids:\n%s", p)
	}
	for _, id := range ids[:2] {
		hits, err := k.Store.Events(ctx, []int64{id})
		if err != nil || len(hits) != 1 || hits[0].Event.Layer != memory.LayerL2 || !hits[0].Event.Distilled {
			t.Fatalf("event %d after distillation = %+v, %v; want L2 and distilled", id, hits, err)
		}
	}
	if got := currentFacts(t, k); len(got) != 2 || got[0] != "owner lives in berlin" {
		t.Fatalf("graph after distillation = %q", got)
	}

	// A rerun finds nothing new: no duplicate triples.
	if rep, err := k.Service().MemoryGC(ctx); err != nil || rep.Distilled != 0 || rep.Triples != 0 {
		t.Fatalf("second MemoryGC = %+v, %v; want nothing done", rep, err)
	}

	// The facts reach the next turn's prompt through pre_action.
	fake.Script(llmtest.Reply{Text: "You live in Berlin."})
	n := len(fake.Requests())
	chat(t, k, "main", "Where do I live now?")
	if p := promptText(fake.Requests(), n); !strings.Contains(p, "Known facts") || !strings.Contains(p, "owner lives in Berlin") {
		t.Fatalf("the turn's prompt lacks the recalled fact:\n%s", p)
	}
	// The inspector sees what the turn recalled, and a fact's source opens in context.
	w, err := k.Service().Window(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if w.Recall == nil || w.Recall.Input != "Where do I live now?" || w.Recall.TurnID == "" || len(w.Recall.Facts) == 0 ||
		!strings.Contains(w.Recall.Facts[0].Text, "owner lives in Berlin") || w.Recall.Facts[0].Score <= 0 {
		t.Fatalf("window recall = %+v; want the Berlin fact recalled for the last turn", w.Recall)
	}
	around, err := k.Service().EventContext(ctx, ids[1], 1)
	if err != nil || len(around) != 3 || around[0].ID != ids[0] || around[1].ID != ids[1] || around[2].ID != ids[2] ||
		around[1].Content != "My sister is called Anna." {
		t.Fatalf("EventContext(%d, 1) = %+v, %v; want events %v in order", ids[1], around, err, ids[:3])
	}
	if _, err := k.Service().EventContext(ctx, 1<<40, 0); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("EventContext of an unknown event = %v; want ErrNotFound", err)
	}
	if _, err := k.Service().EventContext(ctx, ids[0], client.MaxContextRadius+1); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("EventContext with a radius too big = %v; want ErrInvalid", err)
	}

	// A correction supersedes the old fact; it never overwrites it.
	moved := ingest(t, k, "I moved to Munich last week.", "filler one", "filler two", "filler three")
	clock.Advance(73 * time.Hour)
	fake.Script(factsReply(map[string]any{"subject": "owner", "subject_kind": "person", "predicate": "lives in", "object": "Munich",
		"object_kind": "place", "sources": []int64{moved[0]}, "replaces": true}))
	if _, err := k.Service().MemoryGC(ctx); err != nil {
		t.Fatal(err)
	}
	page, err := k.Service().Graph(ctx, client.GraphQuery{History: true})
	if err != nil {
		t.Fatal(err)
	}
	var berlin, munich client.Triple
	for _, tr := range page.Triples {
		switch tr.ObjectName {
		case "Berlin":
			berlin = tr
		case "Munich":
			munich = tr
		}
	}
	if munich.ID == 0 || berlin.SupersededBy != munich.ID || berlin.ValidTo.IsZero() {
		t.Fatalf("after the correction: Berlin %+v, Munich %+v; want Berlin superseded by Munich", berlin, munich)
	}

	// Forgetting the only source deletes the fact, and it leaves recall.
	res, err := k.Service().Forget(ctx, []int64{moved[0]})
	if err != nil || res.Events != 1 || res.Triples != 1 {
		t.Fatalf("Forget = %+v, %v; want 1 event and 1 triple", res, err)
	}
	for _, f := range currentFacts(t, k) {
		if strings.Contains(f, "munich") {
			t.Fatalf("a forgotten fact is still current: %q", f)
		}
	}
	hits, err := k.Service().SearchMemory(ctx, client.MemoryQuery{Text: "moved to Munich"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.ID == moved[0] {
			t.Fatalf("a forgotten event is still recalled: %+v", h)
		}
	}
	if _, err := k.Service().Forget(ctx, []int64{moved[0]}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("forgetting it again = %v; want ErrNotFound", err)
	}
}

// TestMemoryGCFallsBackToRules: with a model that answers garbage, distillation still happens
// with the LLM-free extractor, and says so.
func TestMemoryGCFallsBackToRules(t *testing.T) {
	clock := newFakeClock()
	k := newMemKernel(t, memOptions{WindowTokens: 256, Recent: 1, Clock: clock.Now, Extractor: "llm"})
	fake := withFake(t, k)
	ingest(t, k, "I live in Lisbon.", "I work at Acme Corp.", "bye")
	clock.Advance(73 * time.Hour)
	fake.Script(llmtest.Reply{Text: "no JSON here"}, llmtest.Reply{Text: "still none"}, llmtest.Reply{Text: "{}"})
	rep, err := k.Service().MemoryGC(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Extractor != "llm+rules" || rep.Distilled != 2 || rep.Triples+rep.Confirmed == 0 {
		t.Fatalf("MemoryGC = %+v; want the rules to take over", rep)
	}
	facts := strings.Join(currentFacts(t, k), "\n")
	if !strings.Contains(facts, "lives in lisbon") {
		t.Fatalf("the rules extractor's facts = %q", facts)
	}
}

// TestDeclaredSceneFromChannelSession: messages of a channel session with a partner build its
// declared scene.
func TestDeclaredSceneFromChannelSession(t *testing.T) {
	k := newMemKernel(t, memOptions{})
	ctx := testCtx(t)
	mustCreate(t, k, client.Session{ID: "qq-g1", Channel: "qq", Partner: "group_1", Scope: "group:1"})
	if _, err := k.Ingest(ctx, []kernel.IngestEvent{{Session: "qq-g1", Content: "hello all", Partner: "alice"}, {Session: "qq-g1", Content: "hi alice", Partner: "bob"}}); err != nil {
		t.Fatal(err)
	}
	k.SettleMemory()
	scenes, err := k.Service().Scenes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got *client.Scene
	for i := range scenes {
		if scenes[i].Key == "chan:qq/peer:group_1" {
			got = &scenes[i]
		}
	}
	if got == nil || !got.Declared || got.Occurrences != 2 || got.Features["channel:qq"] != 1 {
		t.Fatalf("scenes = %+v; want the declared chan:qq/peer:group_1 seen twice", scenes)
	}
	hist, err := k.Store.History(ctx, "qq-g1", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range hist {
		if e.Scene != got.Key {
			t.Fatalf("event %d has scene %q; want %q", e.ID, e.Scene, got.Key)
		}
	}
}

// TestGraphSceneFilter: a graph query with a scene keeps the triples whose sources happened in
// that scene.
func TestGraphSceneFilter(t *testing.T) {
	clock := newFakeClock()
	k := newMemKernel(t, memOptions{WindowTokens: 64, Recent: 1, Clock: clock.Now, Extractor: "rules"})
	ctx := testCtx(t)
	mustCreate(t, k, client.Session{ID: "qq-g1", Channel: "qq", Partner: "group_1", Scope: "group:1"})
	if _, err := k.Ingest(ctx, []kernel.IngestEvent{{Session: "qq-g1", Content: "I live in Lisbon.", Partner: "alice"},
		{Session: "qq-g1", Content: "ok", Partner: "bob"}}); err != nil {
		t.Fatal(err)
	}
	ingest(t, k, "I work at Acme Corp.", "bye")
	k.SettleMemory()
	clock.Advance(73 * time.Hour)
	if rep, err := k.Service().MemoryGC(ctx); err != nil || rep.Triples+rep.Confirmed == 0 {
		t.Fatalf("MemoryGC = %+v, %v", rep, err)
	}
	all, err := k.Service().Graph(ctx, client.GraphQuery{})
	if err != nil {
		t.Fatal(err)
	}
	scene, err := k.Service().Graph(ctx, client.GraphQuery{Scene: "chan:qq/peer:group_1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range scene.Triples {
		got = append(got, strings.ToLower(tr.SubjectName+" "+tr.Predicate+" "+tr.ObjectName))
	}
	if len(scene.Triples) == 0 || len(scene.Triples) >= len(all.Triples) || !strings.Contains(strings.Join(got, "\n"), "lisbon") ||
		strings.Contains(strings.Join(got, "\n"), "acme") {
		t.Fatalf("scene triples = %q of %d; want the Lisbon fact without the Acme one", got, len(all.Triples))
	}
	if len(scene.Entities) != len(all.Entities) {
		t.Errorf("a scene query lists %d entities, want all %d", len(scene.Entities), len(all.Entities))
	}
	if none, err := k.Service().Graph(ctx, client.GraphQuery{Scene: "no such scene"}); err != nil || len(none.Triples) != 0 {
		t.Fatalf("unknown scene = %d triples, %v; want none", len(none.Triples), err)
	}
}

// TestSceneBoostPrefersTheAskersScene: the same words said in two conversations rank first
// where the question is asked.
func TestSceneBoostPrefersTheAskersScene(t *testing.T) {
	k := newMemKernel(t, memOptions{})
	ctx := testCtx(t)
	mustCreate(t, k, client.Session{ID: "qq-bob", Channel: "qq", Partner: "bob"})
	mustCreate(t, k, client.Session{ID: "mail-carol", Channel: "mail", Partner: "carol"})
	ids := map[string]int64{}
	for _, s := range []string{"qq-bob", "mail-carol"} {
		out, err := k.Ingest(ctx, []kernel.IngestEvent{{Session: s, Content: "the boat trip is on the third of June"}})
		if err != nil {
			t.Fatal(err)
		}
		ids[s] = out[0].ID
	}
	k.SettleMemory()
	for _, asker := range []string{"qq-bob", "mail-carol"} {
		hits, err := k.Service().SearchMemory(ctx, client.MemoryQuery{Text: "when is the boat trip?", Session: asker, K: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 2 || hits[0].ID != ids[asker] || !strings.Contains(hits[0].Reason, "scene") || hits[0].Score <= hits[1].Score {
			t.Fatalf("asked in %s: %+v; want its own event first, lifted by its scene", asker, hits)
		}
	}
}

// TestBackupSecretsOnlyWhenAsked: a full backup leaves provider keys out unless asked; with
// them, a restore into another installation (another codec key) seals them again and the
// provider works there.
func TestBackupSecretsOnlyWhenAsked(t *testing.T) {
	const key = "sk-very-secret-4711"
	k := newMemKernel(t, memOptions{})
	ctx := testCtx(t)
	fake := llmtest.NewServer(t)
	if _, err := k.Service().AddProvider(ctx, client.ProviderConfig{Name: "fake", BaseURL: fake.URL(), Model: "fake-1", APIKey: key}); err != nil {
		t.Fatal(err)
	}
	chat(t, k, "main", "remember the blue door")

	var plain, withKeys strings.Builder
	if err := k.Service().ExportMemory(ctx, client.ExportRequest{Format: client.FormatJSON}, &plain); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), key) || strings.Contains(plain.String(), "api_key_sealed") {
		t.Fatalf("a backup without --include-secrets holds the key:\n%s", plain.String())
	}
	if !strings.Contains(plain.String(), "blue door") || !strings.Contains(plain.String(), fake.URL()) {
		t.Fatalf("the backup lacks the conversation or the provider:\n%.2000s", plain.String())
	}
	if err := k.Service().ExportMemory(ctx, client.ExportRequest{Format: client.FormatJSON, IncludeSecrets: true}, &withKeys); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(withKeys.String(), key) {
		t.Fatal("a backup with secrets lacks the provider key")
	}

	k2 := newMemKernel(t, memOptions{})
	rep, err := k2.Service().ImportMemory(ctx, client.FormatJSON, strings.NewReader(withKeys.String()))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Events == 0 || rep.Settings == 0 {
		t.Fatalf("import report %+v", rep)
	}
	n := len(fake.Requests())
	chat(t, k2, "main", "which door?")
	reqs := fake.Requests()
	if len(reqs) <= n || reqs[n].Auth != "Bearer "+key {
		t.Fatalf("the restored provider sent %+v; want the key re-sealed and used", reqs[n:])
	}
	if p := promptText(reqs, n); !strings.Contains(p, "blue door") {
		t.Fatalf("the restored memory is not in the prompt:\n%s", p)
	}
	// Into a memory that is not empty: refused, nothing changes.
	if _, err := k2.Service().ImportMemory(ctx, client.FormatJSON, strings.NewReader(plain.String())); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("a second restore = %v; want ErrInvalid (needs an empty memory)", err)
	}
}

// TestChatAttachmentsRefused: bad attachments get clear errors and nothing is stored.
func TestChatAttachmentsRefused(t *testing.T) {
	k := newMemKernel(t, memOptions{})
	withFake(t, k)
	ctx := testCtx(t)
	many := make([]client.Attachment, client.MaxAttachments+1)
	for i := range many {
		many[i] = client.Attachment{Kind: "text", Text: "x"}
	}
	for _, tc := range []struct {
		name string
		atts []client.Attachment
		want string
	}{
		{"unknown kind", []client.Attachment{{Kind: "pdf", Data: []byte{1}}}, `kind must be "text", "image", "audio" or "video"`},
		{"video without data", []client.Attachment{{Kind: "video", Name: "clip.mp4"}}, "without data"},
		{"text with data", []client.Attachment{{Kind: "text", Text: "a", Data: []byte{1}}}, "carries its text, not data"},
		{"empty text", []client.Attachment{{Kind: "text", Name: "a.txt"}}, "carries its text"},
		{"image without data", []client.Attachment{{Kind: "image", Name: "p.png"}}, "without data"},
		{"too many", many, "at most 16 attachments"},
		{"too big", []client.Attachment{{Kind: "audio", Data: make([]byte, client.MaxAttachmentBytes+1)}}, "at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := k.Service().Chat(ctx, client.ChatRequest{Input: "hello", Attachments: tc.atts}, nil)
			if !errors.Is(err, client.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Chat = %v; want ErrInvalid naming %q", err, tc.want)
			}
		})
	}
	if n, err := k.Store.CountEvents(ctx, "main"); err != nil || n != 0 {
		t.Fatalf("events stored after refusals: %d, %v", n, err)
	}
}

// TestRulesDistilChinese: with no model, Chinese messages give their first-person facts and no
// function words as topics (jieba's parts of speech: 很多, 看到 name nothing).
func TestRulesDistilChinese(t *testing.T) {
	clock := newFakeClock()
	k := newMemKernel(t, memOptions{WindowTokens: 256, Recent: 1, Clock: clock.Now, Extractor: "rules"})
	ingest(t, k, "我住在杭州。", "周末我们去西湖划船，看到了很多白鹭。", "好的")
	clock.Advance(73 * time.Hour)
	rep, err := k.Service().MemoryGC(testCtx(t))
	if err != nil || rep.Distilled != 2 || rep.Extractor != "rules" {
		t.Fatalf("MemoryGC = %+v, %v", rep, err)
	}
	facts := strings.Join(currentFacts(t, k), "\n")
	if !strings.Contains(facts, "owner lives in 杭州") {
		t.Errorf("facts lack owner lives in 杭州:\n%s", facts)
	}
	for _, junk := range []string{"很多", "看到", "我们", "周末"} {
		if strings.Contains(facts, "talks about "+junk) {
			t.Errorf("a function word is a topic: %q in\n%s", junk, facts)
		}
	}
}
