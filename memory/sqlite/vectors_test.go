package sqlite_test

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// scanAll returns the vectors of space by event id.
func scanAll(t *testing.T, f *grFix, space string) map[int64]memory.VectorEntry {
	t.Helper()
	out := map[int64]memory.VectorEntry{}
	var last int64
	err := f.s.ScanVectors(f.ctx, space, func(e memory.VectorEntry) error {
		if e.Event <= last {
			t.Errorf("ScanVectors out of order: %d after %d", e.Event, last)
		}
		last = e.Event
		out[e.Event] = e
		return nil
	})
	if err != nil {
		t.Fatalf("ScanVectors(%q): %v", space, err)
	}
	return out
}

func TestVectorsRoundTripAndReplace(t *testing.T) {
	f := newGrFix(t)
	e1 := f.ev("one", grPub, grT0)
	e2 := f.ev("two", grA, grT0.Add(time.Minute))
	e3 := f.ev("", grPriv, grT0.Add(2*time.Minute))
	// Values that a lossy encoding would change.
	v1 := []float32{1, -0.5, float32(math.SmallestNonzeroFloat32), math.MaxFloat32, -0}
	v2 := []float32{0.25, 0.5, 0.75, 1, 1.25}
	n, err := f.s.PutVectors(f.ctx, "m:a", []memory.EventVector{{Event: e1, Vec: v1}, {Event: e2, Vec: v2}, {Event: e3}, {Event: 999}})
	if err != nil || n != 3 {
		t.Fatalf("PutVectors = %d, %v; want 3 stored (the unknown event 999 skipped)", n, err)
	}
	got := scanAll(t, f, "m:a")
	if len(got) != 2 || !reflect.DeepEqual(got[e1].Vec, v1) || !reflect.DeepEqual(got[e2].Vec, v2) {
		t.Fatalf("ScanVectors = %+v (the empty vector of %d is embedded but never scanned)", got, e3)
	}
	if got[e2].Session != "chat" || got[e2].Scope != grA || got[e1].Scope != grPub {
		t.Errorf("entries carry session and scope: %+v", got)
	}
	if have, total, err := f.s.VectorCounts(f.ctx, "m:a"); err != nil || have != 3 || total != 3 {
		t.Errorf("VectorCounts = %d, %d, %v; want 3 of 3 (the empty vector counts)", have, total, err)
	}
	// Replacing keeps one row per (event, space); another space is separate.
	v1b := []float32{9, 8, 7, 6, 5}
	if _, err := f.s.PutVectors(f.ctx, "m:a", []memory.EventVector{{Event: e1, Vec: v1b}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.PutVectors(f.ctx, "m:b", []memory.EventVector{{Event: e2, Vec: []float32{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	if got := scanAll(t, f, "m:a"); !reflect.DeepEqual(got[e1].Vec, v1b) || len(got) != 2 {
		t.Errorf("after replace: %+v", got)
	}
	if sp, err := f.s.VectorSpaces(f.ctx); err != nil || !reflect.DeepEqual(sp, map[string]int{"m:a": 3, "m:b": 1}) {
		t.Errorf("VectorSpaces = %v, %v", sp, err)
	}
	f.reopen()
	if got := scanAll(t, f, "m:b"); len(got) != 1 || !reflect.DeepEqual(got[e2].Vec, []float32{1, 2}) {
		t.Errorf("after reopen: %+v", got)
	}
	if n, err := f.s.DeleteVectorsExcept(f.ctx, "m:b"); err != nil || n != 3 {
		t.Errorf("DeleteVectorsExcept = %d, %v; want 3", n, err)
	}
	if sp, _ := f.s.VectorSpaces(f.ctx); !reflect.DeepEqual(sp, map[string]int{"m:b": 1}) {
		t.Errorf("spaces left: %v", sp)
	}
	if n, err := f.s.DeleteVectorsExcept(f.ctx, ""); err != nil || n != 1 {
		t.Errorf(`DeleteVectorsExcept("") = %d, %v; want 1`, n, err)
	}
}

func TestPutVectorsRefusesBadInput(t *testing.T) {
	f := newGrFix(t)
	e1 := f.ev("one", grPub, grT0)
	e2 := f.ev("two", grPub, grT0)
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name  string
		space string
		vecs  []memory.EventVector
	}{
		{"no space", "", []memory.EventVector{{Event: e1, Vec: []float32{1}}}},
		{"mixed lengths", "s", []memory.EventVector{{Event: e1, Vec: []float32{1, 2}}, {Event: e2, Vec: []float32{1, 2, 3}}}},
		{"NaN", "s", []memory.EventVector{{Event: e1, Vec: []float32{1, nan}}}},
		{"infinity", "s", []memory.EventVector{{Event: e1, Vec: []float32{float32(math.Inf(-1))}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := f.s.PutVectors(f.ctx, tc.space, tc.vecs); !errors.Is(err, memory.ErrInvalid) {
				t.Fatalf("PutVectors = %v, want ErrInvalid", err)
			}
			if sp, _ := f.s.VectorSpaces(f.ctx); len(sp) != 0 {
				t.Fatalf("a refused call stored vectors: %v", sp)
			}
		})
	}
	for _, fn := range []func() error{
		func() error { return f.s.ScanVectors(f.ctx, "", func(memory.VectorEntry) error { return nil }) },
		func() error { _, err := f.s.Unembedded(f.ctx, "", 0, 1); return err },
	} {
		if err := fn(); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("empty space: %v, want ErrInvalid", err)
		}
	}
}

func TestUnembeddedPages(t *testing.T) {
	f := newGrFix(t)
	var ids []int64
	for i := range 7 {
		ids = append(ids, f.event(memory.Event{Content: "event", Time: grT0.Add(time.Duration(i) * time.Minute),
			Blocks: []memory.Block{{Kind: memory.BlockText, Name: "n.txt", Text: "block text"}}}).ID)
	}
	if _, err := f.s.PutVectors(f.ctx, "s", []memory.EventVector{{Event: ids[1], Vec: []float32{1}}, {Event: ids[4], Vec: []float32{1}}}); err != nil {
		t.Fatal(err)
	}
	var got []int64
	after := int64(0)
	for {
		evs, err := f.s.Unembedded(f.ctx, "s", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		if len(evs) > 2 {
			t.Fatalf("page of %d, limit 2", len(evs))
		}
		for _, e := range evs {
			got = append(got, e.ID)
			if memory.EmbeddingText(e) != "event\nblock text" {
				t.Errorf("event %d embeds as %q, want its content and its block's text", e.ID, memory.EmbeddingText(e))
			}
		}
		after = evs[len(evs)-1].ID
	}
	want := []int64{ids[0], ids[2], ids[3], ids[5], ids[6]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Unembedded pages = %v, want %v", got, want)
	}
	if evs, _ := f.s.Unembedded(f.ctx, "other", 0, 0); len(evs) != 7 {
		t.Errorf("another space lacks every vector: %d events", len(evs))
	}
}

func TestForgetDeletesVectors(t *testing.T) {
	f := newGrFix(t)
	e1 := f.ev("keep me", grPub, grT0)
	e2 := f.ev("forget me", grPub, grT0)
	for _, space := range []string{"s1", "s2"} {
		if _, err := f.s.PutVectors(f.ctx, space, []memory.EventVector{{Event: e1, Vec: []float32{1, 0}}, {Event: e2, Vec: []float32{0, 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.s.Forget(f.ctx, []int64{e2}); err != nil {
		t.Fatal(err)
	}
	for _, space := range []string{"s1", "s2"} {
		got := scanAll(t, f, space)
		if _, ok := got[e2]; ok || len(got) != 1 {
			t.Errorf("space %s after Forget: %+v; want only event %d", space, got, e1)
		}
		if have, total, _ := f.s.VectorCounts(f.ctx, space); have != 1 || total != 1 {
			t.Errorf("VectorCounts(%s) = %d of %d after Forget", space, have, total)
		}
	}
	grIntegrity(t, f.path)
}
