package gui

import (
	"context"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client"
)

func TestInspector(t *testing.T) {
	f, c := skyKernel(t)
	at := time.Date(2026, 5, 2, 9, 0, 0, 0, time.UTC)
	f.SetWindow(client.Window{Session: "main", Input: "where does Alice live?", Budget: 4096, Used: 120, Pinned: 2, Sunk: 5,
		Items: []client.WindowItem{
			{ID: 7, Time: at, Role: "user", Content: "Alice is my neighbour.", Tokens: 60, Score: 0.83, Reason: "shares alice with the input", Source: "scored"},
			{ID: 8, Time: at.Add(time.Minute), Role: "assistant", Content: "Noted.", Tokens: 60, Score: 1, Reason: "one of the 2 most recent", Source: "pinned"},
		},
		Recall: &client.Recall{TurnID: "t1", Time: at, Input: "where does Alice live?",
			Facts:  []client.RecalledFact{{Triple: 1, Text: "Alice lives in Porto (since 2026-05-01)", Score: 1}},
			Events: []client.MemoryHit{{ID: 101, Session: "s1", Time: at, Role: "user", Scope: "private", Layer: 2, Content: "I moved to Porto with Alice.", Score: 0.7, Reason: "bm25"}}},
	})
	test.NewTempApp(t)
	vm := NewInspectorVM(c)
	w := test.NewTempWindow(t, nil)
	w.SetContent(NewInspectorView(vm, w))
	w.Resize(fyne.NewSize(900, 700))
	ctx := context.Background()
	if err := vm.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Budget 4096 tokens, 120 used · 2 recent items pinned · 5 sunk", "Scored against: where does Alice live?",
		"relevant · score 0.83 · 60 tokens", "Why: shares alice with the input", "recent · score 1.00", "Alice is my neighbour."} {
		if !uiHasText(w, want) {
			t.Errorf("the window tab lacks %q: %q", want, uiTexts(w))
		}
	}
	win, _ := vm.Window.Get()
	if win.Recall == nil || len(win.Recall.Facts) != 1 {
		t.Fatalf("recall %+v", win.Recall)
	}
	// The other tabs are built from the same bindings.
	if objs := recallObjects(win.Recall, func(int64) {}); len(objs) != 5 {
		t.Errorf("recall panel has %d parts, want head, facts heading, a fact, events heading, an event", len(objs))
	}
	if objs := recallObjects(nil, func(int64) {}); len(objs) != 1 {
		t.Errorf("an empty recall shows %d parts", len(objs))
	}
	if sc, _ := vm.Scenes.Get(); len(sc) != 1 || sc[0].Key != testScene {
		t.Errorf("scenes %+v", sc)
	}

	// Cold search from the session's view, and Forget from a hit.
	if err := vm.Search(ctx); err == nil {
		t.Error("an empty search succeeded")
	}
	_ = vm.Query.Set("porto")
	if err := vm.Search(ctx); err != nil {
		t.Fatal(err)
	}
	hits, _ := vm.Hits.Get()
	if len(hits) == 0 || hits[0].ID != 101 {
		t.Fatalf("hits %+v", hits)
	}
	last := f.Requests()[len(f.Requests())-1]
	if last.Path != "/api/v1/memory/search?k=30&layer=2&q=porto&session=main" {
		t.Errorf("search request %s", last.Path)
	}
	if err := vm.Forget(ctx, 101); err != nil {
		t.Fatal(err)
	}
	if hits, _ := vm.Hits.Get(); len(hits) != 0 {
		t.Errorf("the forgotten event is still listed: %+v", hits)
	}
	if st, _ := vm.Status.Get(); st != "Forgot 1 events and 1 facts." {
		t.Errorf("status %q", st)
	}
	if err := vm.Select(ctx, "nope"); err == nil {
		t.Error("inspecting an unknown session succeeded")
	}
}
