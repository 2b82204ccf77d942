package gui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2/data/binding"

	"github.com/hologramagent/hologram/kernel/client"
)

// inspectorHits is how many cold events a search of the inspector lists.
const inspectorHits = 30

// inspectorThumbs is how many image thumbnails a search reads (the first hits' images).
const inspectorThumbs = 24

// InspectorVM is the memory inspector's state: for one session, the L1 window the next turn's
// prompt will hold (each item with its score, reason and source) and what memory recalled for
// its last turn; a search of cold memory (L2) from that session's view; and the scenes. Its
// methods block on the kernel; the view runs them off the UI goroutine. Safe for concurrent use.
type InspectorVM struct {
	vmTasks
	svc client.Service

	// Sessions lists the kernel's sessions; Session is the one inspected.
	Sessions binding.Item[[]client.Session]
	Session  binding.String
	// Window is the session's window (with Recall: the last turn's recall).
	Window binding.Item[client.Window]
	// Query is the cold search text; Hits its results.
	Query binding.String
	Hits  binding.Item[[]client.MemoryHit]
	// Thumbs are the thumbnails (PNG) of the hits' images by block id, read with each search
	// (at most inspectorThumbs; an image whose thumbnail could not be read is shown by name).
	Thumbs binding.Item[map[string][]byte]
	// Scenes are the kernel's scenes.
	Scenes binding.Item[[]client.Scene]
	Status binding.String
	Failed binding.Bool
}

// NewInspectorVM returns the inspector's view-model over svc, inspecting "main" at first.
func NewInspectorVM(svc client.Service) *InspectorVM {
	vm := &InspectorVM{svc: svc, Sessions: newSliceBinding[client.Session](), Session: binding.NewString(),
		Window: binding.NewItem(func(a, b client.Window) bool { return false }), Query: binding.NewString(),
		Hits: newSliceBinding[client.MemoryHit](), Scenes: newSliceBinding[client.Scene](),
		Thumbs: binding.NewItem(func(a, b map[string][]byte) bool { return false }),
		Status: binding.NewString(), Failed: binding.NewBool()}
	_ = vm.Session.Set("main")
	return vm
}

func (vm *InspectorVM) report(msg string, failed bool) {
	_ = vm.Failed.Set(failed)
	_ = vm.Status.Set(msg)
}

// Refresh reads the sessions, the scenes and the inspected session's window.
func (vm *InspectorVM) Refresh(ctx context.Context) error {
	ss, err := vm.svc.Sessions(ctx)
	if err != nil {
		vm.report(Tf("Could not list the sessions: %v", err), true)
		return fmt.Errorf("inspector sessions: %w", err)
	}
	_ = vm.Sessions.Set(ss)
	scenes, err := vm.svc.Scenes(ctx)
	if err != nil {
		vm.report(Tf("Could not read the scenes: %v", err), true)
		return fmt.Errorf("inspector scenes: %w", err)
	}
	_ = vm.Scenes.Set(scenes)
	if id, _ := vm.Session.Get(); id == "" && len(ss) > 0 {
		_ = vm.Session.Set(ss[0].ID)
	}
	return vm.LoadWindow(ctx)
}

// Select inspects another session.
func (vm *InspectorVM) Select(ctx context.Context, session string) error {
	_ = vm.Session.Set(session)
	_ = vm.Hits.Set(nil)
	return vm.LoadWindow(ctx)
}

// LoadWindow reads the inspected session's window.
func (vm *InspectorVM) LoadWindow(ctx context.Context) error {
	id, _ := vm.Session.Get()
	if id == "" {
		_ = vm.Window.Set(client.Window{})
		return nil
	}
	w, err := vm.svc.Window(ctx, id)
	if err != nil {
		vm.report(Tf("Could not read the context window of %s: %v", id, err), true)
		return fmt.Errorf("window %s: %w", id, err)
	}
	_ = vm.Window.Set(w)
	vm.report(Tf("%d items in the window, %d of %d tokens.", len(w.Items), w.Used, w.Budget), false)
	return nil
}

// Search recalls cold (L2) events for the query as the inspected session would see them.
func (vm *InspectorVM) Search(ctx context.Context) error {
	q, _ := vm.Query.Get()
	if strings.TrimSpace(q) == "" {
		err := errors.New(T("Type what to look for in cold memory."))
		vm.report(err.Error(), true)
		return err
	}
	id, _ := vm.Session.Get()
	hits, err := vm.svc.SearchMemory(ctx, client.MemoryQuery{Text: q, Session: id, K: inspectorHits, Layer: 2})
	if err != nil {
		vm.report(Tf("Could not search memory: %v", err), true)
		return fmt.Errorf("search memory: %w", err)
	}
	_ = vm.Thumbs.Set(vm.thumbnails(ctx, hits)) // before the hits: their cards show them
	_ = vm.Hits.Set(hits)
	vm.report(Tf("%d cold events found.", len(hits)), false)
	return nil
}

// thumbnails reads the thumbnails of the hits' images, the first inspectorThumbs of them.
func (vm *InspectorVM) thumbnails(ctx context.Context, hits []client.MemoryHit) map[string][]byte {
	return readThumbnails(ctx, vm.svc, hits, inspectorThumbs)
}

// readThumbnails reads the thumbnails (PNG) of the hits' images by block id, the first n of
// them; an image whose thumbnail cannot be read is left out (its view shows its name).
func readThumbnails(ctx context.Context, svc client.Service, hits []client.MemoryHit, n int) map[string][]byte {
	out := map[string][]byte{}
	for _, h := range hits {
		for _, im := range h.Images {
			if len(out) == n || ctx.Err() != nil {
				return out
			}
			if data, err := svc.Thumbnail(ctx, im.Block); err == nil {
				out[im.Block] = data
			}
		}
	}
	return out
}

// Forget forgets one event (and the facts that came only from it), then refreshes.
func (vm *InspectorVM) Forget(ctx context.Context, id int64) error {
	res, err := vm.svc.Forget(ctx, []int64{id})
	if err != nil {
		vm.report(Tf("Could not forget: %v", err), true)
		return fmt.Errorf("forget %d: %w", id, err)
	}
	if hits, _ := vm.Hits.Get(); len(hits) > 0 {
		kept := make([]client.MemoryHit, 0, len(hits))
		for _, h := range hits {
			if h.ID != id {
				kept = append(kept, h)
			}
		}
		_ = vm.Hits.Set(kept)
	}
	if err := vm.LoadWindow(ctx); err != nil {
		return err
	}
	vm.report(Tf("Forgot %d events and %d facts.", res.Events, res.Triples), false)
	return nil
}

// sourceText is a window item's source in the current language.
func sourceText(s string) string {
	switch s {
	case "pinned":
		return T("recent")
	case "scored":
		return T("relevant")
	case "recalled":
		return T("recalled from cold memory")
	}
	return s
}
