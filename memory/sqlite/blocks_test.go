package sqlite_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// blkSession creates a session and returns its id.
func blkSession(t *testing.T, s *sqlite.Store, id string, sc memory.Scope) string {
	t.Helper()
	if _, err := s.CreateSession(context.Background(), memory.Session{ID: id, Scope: sc}); err != nil {
		t.Fatalf("CreateSession(%q): %v", id, err)
	}
	return id
}

// blkAppend appends one event with blocks and returns it as stored.
func blkAppend(t *testing.T, s *sqlite.Store, e memory.Event) memory.Event {
	t.Helper()
	out, err := s.AppendEvents(context.Background(), []memory.Event{e})
	if err != nil {
		t.Fatalf("AppendEvents: %v", err)
	}
	return out[0]
}

var hexID = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestAppendEventsStoresBlocks(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openAt(t, path)
	group := memory.Scope{Kind: memory.ScopeGroup, Group: "g1"}
	blkSession(t, s, "a", group)
	png := []byte("\x89PNG\r\n\x1a\n fake image bytes")
	ev := blkAppend(t, s, memory.Event{Session: "a", Role: memory.RoleUser, Content: "look at these", Scope: group,
		Blocks: []memory.Block{
			{Kind: memory.BlockText, Name: "notes.txt", MIME: "text/plain", Text: "buy milk\nand bread",
				Scope: memory.Scope{Kind: memory.ScopePublic}}, // the event's scope wins
			{Kind: memory.BlockImage, MIME: "image/png", Data: png, Text: "OCR line",
				Holder: memory.BlockHolder{Layer: memory.LayerL3, Entity: 9}}, // set by the store
			{ID: "my-audio-1", Kind: memory.BlockAudio, MIME: "audio/ogg", Data: []byte{1, 2, 3}},
		}})
	if len(ev.Blocks) != 3 {
		t.Fatalf("returned %d blocks, want 3", len(ev.Blocks))
	}
	wantSize := []int64{int64(len("buy milk\nand bread")), int64(len(png)), 3}
	for i, b := range ev.Blocks {
		if i < 2 && !hexID.MatchString(b.ID) {
			t.Errorf("block %d id %q: want 32 hex digits", i, b.ID)
		}
		if b.Holder != (memory.BlockHolder{Layer: memory.LayerL1, Event: ev.ID}) || b.Scope != group ||
			!b.Created.Equal(ev.Time) || b.Data != nil || b.Size != wantSize[i] {
			t.Errorf("block %d = %+v; want held by event %d in L1, scope %v, created %v, size %d, no data",
				i, b, ev.ID, group, ev.Time, wantSize[i])
		}
	}
	if ev.Blocks[2].ID != "my-audio-1" {
		t.Errorf("given id became %q", ev.Blocks[2].ID)
	}
	if ev.Blocks[0].ID == ev.Blocks[1].ID {
		t.Errorf("two blocks got the same id %q", ev.Blocks[0].ID)
	}

	got, err := s.Block(ctx, ev.Blocks[1].ID)
	if err != nil {
		t.Fatalf("Block: %v", err)
	}
	want := ev.Blocks[1]
	want.Data = png
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Block = %+v\nwant    %+v", got, want)
	}
	if got, err := s.Block(ctx, ev.Blocks[0].ID); err != nil || got.Data != nil || got.Text != "buy milk\nand bread" {
		t.Errorf("text Block = %+v, %v; want its text and no data", got, err)
	}
	if _, err := s.Block(ctx, "nope"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Block(unknown) = %v, want ErrNotFound", err)
	}
	held, err := s.Blocks(ctx, memory.BlockHolder{Layer: memory.LayerL1, Event: ev.ID})
	if err != nil || !reflect.DeepEqual(held, ev.Blocks) {
		t.Errorf("Blocks(event) = %+v, %v\nwant %+v", held, err, ev.Blocks)
	}

	// Every read path carries the references, the same as AppendEvents returned them; after a
	// reopen too (no cache).
	for _, st := range []*sqlite.Store{s, openAt(t, path)} {
		hist, err := st.History(ctx, "a", 0)
		if err != nil || len(hist) != 1 || !reflect.DeepEqual(hist[0], ev) {
			t.Fatalf("History = %+v, %v\nwant [%+v]", hist, err, ev)
		}
		l1, err := st.LayerEvents(ctx, "a", memory.LayerL1)
		if err != nil || len(l1) != 1 || !reflect.DeepEqual(l1[0].Blocks, ev.Blocks) {
			t.Errorf("LayerEvents = %+v, %v", l1, err)
		}
		hits, err := st.Events(ctx, []int64{ev.ID})
		if err != nil || len(hits) != 1 || !reflect.DeepEqual(hits[0].Event.Blocks, ev.Blocks) {
			t.Errorf("Events = %+v, %v", hits, err)
		}
	}
}

func TestAppendEventsRefusesBadBlocks(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	blkSession(t, s, "a", memory.Scope{})
	taken := blkAppend(t, s, memory.Event{Session: "a", Role: memory.RoleUser,
		Blocks: []memory.Block{{ID: "taken", Kind: memory.BlockText, Text: "first"}}})

	tests := []struct {
		name   string
		blocks []memory.Block
		want   error
		msg    string
	}{
		{"unknown kind", []memory.Block{{Kind: "video", Data: []byte{1}}}, memory.ErrInvalid, `block kind "video"`},
		{"empty kind", []memory.Block{{Text: "x"}}, memory.ErrInvalid, "not text, image or audio"},
		{"text with data", []memory.Block{{Kind: memory.BlockText, Data: []byte("x")}}, memory.ErrInvalid, "keeps its content in Text"},
		{"data over 64 MiB", []memory.Block{{Kind: memory.BlockImage, Data: make([]byte, sqlite.MaxBlockData+1)}}, memory.ErrInvalid, "64 MiB"},
		{"id with a space", []memory.Block{{ID: "a b", Kind: memory.BlockText}}, memory.ErrInvalid, "block id"},
		{"id too long", []memory.Block{{ID: strings.Repeat("x", 129), Kind: memory.BlockText}}, memory.ErrInvalid, "block id"},
		{"id taken", []memory.Block{{Kind: memory.BlockText, Text: "new"}, {ID: "taken", Kind: memory.BlockText}}, memory.ErrExists, `"taken"`},
		{"id twice in one call", []memory.Block{{ID: "twice", Kind: memory.BlockText}, {ID: "twice", Kind: memory.BlockAudio}}, memory.ErrExists, `"twice"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.AppendEvents(ctx, []memory.Event{
				{Session: "a", Role: memory.RoleUser, Content: "before"},
				{Session: "a", Role: memory.RoleUser, Blocks: tc.blocks},
			})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("AppendEvents = %v, want %v mentioning %q", err, tc.want, tc.msg)
			}
			if n, err := s.CountEvents(ctx, "a"); err != nil || n != 1 {
				t.Errorf("CountEvents = %d, %v; want 1 (nothing stored)", n, err)
			}
			if _, err := s.Block(ctx, "twice"); !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("a block of the failed call was stored: %v", err)
			}
		})
	}
	if got, err := s.Block(ctx, "taken"); err != nil || got.Text != "first" || got.Holder.Event != taken.ID {
		t.Errorf("the taken block changed: %+v, %v", got, err)
	}
	if hits, err := s.SearchTerms(ctx, memory.TextQuery{Terms: []string{"new"}, Viewer: memory.OwnerViewer}); err != nil || len(hits) != 0 {
		t.Errorf("a failed call left index rows: %+v, %v", hits, err)
	}
}

func TestBlockTextIsIndexedWithTheEvent(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	blkSession(t, s, "a", memory.Scope{})
	// A long text is indexed up to MaxIndexedBlockText (and kept whole): a word past it is not
	// found.
	long := "Quarterly ZEBRA report " + strings.Repeat("filler words ", sqlite.MaxIndexedBlockText/13) + " narwhal"
	ev := blkAppend(t, s, memory.Event{Session: "a", Role: memory.RoleUser, Content: "see attached",
		Blocks: []memory.Block{
			{Kind: memory.BlockText, Text: long},
			{Kind: memory.BlockImage, Data: []byte{1}, Text: "giraffe on a sign"},
			{Kind: memory.BlockAudio, Name: "okapi.ogg", Data: []byte{2}}, // names are not indexed
		}})
	blkAppend(t, s, memory.Event{Session: "a", Role: memory.RoleUser, Content: "nothing attached here"})
	tests := []struct {
		term string
		want []int64
	}{
		{"zebra", []int64{ev.ID}},
		{"giraffe", []int64{ev.ID}},
		{"attached", []int64{ev.ID, ev.ID + 1}},
		{"okapi", nil},
		{"narwhal", nil},
	}
	for _, tc := range tests {
		hits, err := s.SearchTerms(ctx, memory.TextQuery{Terms: []string{tc.term}, Viewer: memory.OwnerViewer})
		if err != nil {
			t.Fatalf("SearchTerms(%q): %v", tc.term, err)
		}
		var ids []int64
		for _, h := range hits {
			ids = append(ids, h.Event.ID)
			if h.Event.ID == ev.ID && (len(h.Event.Blocks) != 3 || !strings.Contains(h.Indexed, "zebra")) {
				t.Errorf("hit %+v: want its 3 blocks and the block tokens in Indexed", h)
			}
		}
		if len(ids) > 1 && ids[0] > ids[1] {
			ids[0], ids[1] = ids[1], ids[0]
		}
		if !reflect.DeepEqual(ids, tc.want) {
			t.Errorf("SearchTerms(%q) = %v, want %v", tc.term, ids, tc.want)
		}
	}
	if evs, err := s.SearchText(ctx, "giraffe sign", 0); err != nil || len(evs) != 1 || len(evs[0].Blocks) != 3 {
		t.Errorf("SearchText = %+v, %v", evs, err)
	}
	if b, err := s.Block(ctx, ev.Blocks[0].ID); err != nil || b.Text != long {
		t.Errorf("the long block is not kept whole: %d bytes, %v", len(b.Text), err)
	}
	// Listed with its event, a long text block brings its first ListedBlockText characters.
	hist, err := s.History(ctx, "a", 0)
	if err != nil || len(hist) != 2 || len(hist[0].Blocks) != 3 {
		t.Fatalf("history %+v %v", hist, err)
	}
	if b := hist[0].Blocks[0]; b.Text != long[:sqlite.ListedBlockText] || b.Size != int64(len(long)) {
		t.Errorf("listed long block: %d bytes of text, size %d; want %d and %d", len(b.Text), b.Size, sqlite.ListedBlockText, len(long))
	}
	if b := hist[0].Blocks[1]; b.Text != "giraffe on a sign" {
		t.Errorf("listed short block text %q", b.Text)
	}
}

// TestBlockMovesL1L2L3 follows one block from L1 to L2 to L3 and the event back to L1: the id
// never changes, the event keeps its reference, and an L3 block stays in L3. Every state is
// checked through the cached store, a store without a cache, and after a reopen.
func TestBlockMovesL1L2L3(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openAt(t, path)
	blkSession(t, s, "a", memory.Scope{})
	ev := blkAppend(t, s, memory.Event{Session: "a", Role: memory.RoleUser, Content: "two attachments",
		Blocks: []memory.Block{
			{Kind: memory.BlockText, Name: "Trip Plan", Text: "Oslo in May"},
			{Kind: memory.BlockImage, Data: []byte("img"), Text: "map"},
		}})
	other := blkAppend(t, s, memory.Event{Session: "a", Role: memory.RoleAssistant, Content: "noted"})
	textID, imgID := ev.Blocks[0].ID, ev.Blocks[1].ID
	if _, err := s.History(ctx, "a", 0); err != nil { // fill the tail cache
		t.Fatal(err)
	}

	// check compares what every reader says about the two blocks with want (holder of each).
	check := func(step string, want ...memory.BlockHolder) {
		t.Helper()
		fresh, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer fresh.Close()
		for name, st := range map[string]*sqlite.Store{"cached": s, "fresh": fresh} {
			hist, err := st.History(ctx, "a", 0)
			if err != nil || len(hist) != 2 {
				t.Fatalf("%s: %s History = %+v, %v", step, name, hist, err)
			}
			if len(hist[1].Blocks) != 0 {
				t.Errorf("%s: %s: event without blocks got %+v", step, name, hist[1].Blocks)
			}
			refs := hist[0].Blocks
			if len(refs) != 2 || refs[0].ID != textID || refs[1].ID != imgID {
				t.Fatalf("%s: %s: event references %+v, want blocks %s, %s", step, name, refs, textID, imgID)
			}
			for i, h := range want {
				if refs[i].Holder != h {
					t.Errorf("%s: %s: History block %d holder %+v, want %+v", step, name, i, refs[i].Holder, h)
				}
				b, err := st.Block(ctx, refs[i].ID)
				if err != nil || b.Holder != h {
					t.Errorf("%s: %s: Block(%s) holder %+v, %v; want %+v", step, name, refs[i].ID, b.Holder, err, h)
				}
			}
			if hits, err := st.Events(ctx, []int64{ev.ID}); err != nil || len(hits) != 1 || !reflect.DeepEqual(hits[0].Event.Blocks, refs) {
				t.Errorf("%s: %s: Events blocks = %+v, %v; want %+v", step, name, hits, err, refs)
			}
			if nb, err := st.Neighbours(ctx, []int64{other.ID}, 1, memory.OwnerViewer); err != nil || len(nb) != 1 || !reflect.DeepEqual(nb[0].Blocks, refs) {
				t.Errorf("%s: %s: Neighbours = %+v, %v", step, name, nb, err)
			}
		}
	}
	l1 := memory.BlockHolder{Layer: memory.LayerL1, Event: ev.ID}
	l2 := memory.BlockHolder{Layer: memory.LayerL2, Event: ev.ID}
	check("appended", l1, l1)

	if err := s.SetLayer(ctx, []int64{ev.ID}, memory.LayerL2); err != nil {
		t.Fatal(err)
	}
	check("in L2", l2, l2)
	if l2evs, err := s.LayerEvents(ctx, "a", memory.LayerL2); err != nil || len(l2evs) != 1 || l2evs[0].Blocks[1].Holder != l2 {
		t.Errorf("LayerEvents(L2) = %+v, %v", l2evs, err)
	}

	ent, err := s.PinBlock(ctx, textID, 0)
	if err != nil {
		t.Fatalf("PinBlock: %v", err)
	}
	if ent.Name != "Trip Plan" || ent.Kind != "note" || ent.Origin != "owner" || ent.BlockID != textID ||
		ent.Text != "Oslo in May" || ent.ID <= 0 || ent.Pinned || ent.Scope != (memory.Scope{}) {
		t.Errorf("PinBlock entity = %+v", ent)
	}
	l3 := memory.BlockHolder{Layer: memory.LayerL3, Entity: ent.ID}
	check("text block pinned", l3, l2)
	if held, err := s.Blocks(ctx, l3); err != nil || len(held) != 1 || held[0].ID != textID {
		t.Errorf("Blocks(entity) = %+v, %v", held, err)
	}
	if held, err := s.Blocks(ctx, l2); err != nil || len(held) != 1 || held[0].ID != imgID {
		t.Errorf("Blocks(event) after the pin = %+v, %v", held, err)
	}

	if err := s.SetLayer(ctx, []int64{ev.ID}, memory.LayerL1); err != nil {
		t.Fatal(err)
	}
	check("back in L1", l3, l1)
	if err := s.SetLayer(ctx, []int64{ev.ID}, memory.LayerL2); err != nil {
		t.Fatal(err)
	}
	check("L2 again", l3, l2)
	if err := s.SetLayer(ctx, []int64{ev.ID, 999}, memory.LayerL1); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("SetLayer with an unknown id = %v", err)
	}
	check("failed SetLayer changed nothing", l3, l2)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	check("reopened", l3, l2)
}

// TestHistoryBlocksAreCopies: changing what History returned does not change the cache.
func TestHistoryBlocksAreCopies(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	blkSession(t, s, "a", memory.Scope{})
	blkAppend(t, s, memory.Event{Session: "a", Role: memory.RoleUser, Blocks: []memory.Block{{Kind: memory.BlockText, Text: "x"}}})
	for range 2 {
		hist, err := s.History(ctx, "a", 5)
		if err != nil || len(hist) != 1 || len(hist[0].Blocks) != 1 {
			t.Fatalf("History = %+v, %v", hist, err)
		}
		if hist[0].Blocks[0].Text != "x" {
			t.Fatalf("cached block changed through a returned event: %+v", hist[0].Blocks[0])
		}
		hist[0].Blocks[0].Text = "changed"
	}
}

func TestPinBlock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openAt(t, path)
	group := memory.Scope{Kind: memory.ScopeGroup, Group: "g"}
	blkSession(t, s, "a", group)
	long := strings.Repeat("长", 100) + " tail"
	ev := blkAppend(t, s, memory.Event{Session: "a", Role: memory.RoleUser, Scope: group, Blocks: []memory.Block{
		{Kind: memory.BlockText, Name: "  Shopping\t List ", Text: "milk"},  // 0: named
		{Kind: memory.BlockText, Text: "\n\n  first   line \nsecond line"},  // 1: first non-blank line
		{Kind: memory.BlockText, Text: long},                                // 2: cut to 80 runes
		{ID: "abcdef0123456789", Kind: memory.BlockImage, Data: []byte{1}},  // 3: no name, no text
		{Kind: memory.BlockText, Name: "shopping list", Text: "eggs"},       // 4: same key as 0
		{Kind: memory.BlockImage, Name: "photo.jpg", Data: []byte{2}},       // 5: media, named
		{Kind: memory.BlockText, Name: "moved note", Text: "from A to B"},   // 6: re-pinned
		{Kind: memory.BlockText, Name: "target", Text: "the target's text"}, // 7
	}})
	id := func(i int) string { return ev.Blocks[i].ID }

	tests := []struct {
		name      string
		block     int
		entity    func() int64
		wantName  string
		wantText  string // the entity's text block's text
		wantBlock int    // index of the entity's text block; -1: none
	}{
		{"named block", 0, nil, "Shopping List", "milk", 0},
		{"first line of the text", 1, nil, "first line", "\n\n  first   line \nsecond line", 1},
		{"long text cut to 80 runes", 2, nil, strings.Repeat("长", 80), long, 2},
		{"no name no text", 3, nil, "note abcdef01", "", -1},
		{"same name key reuses the note", 4, nil, "Shopping List", "milk", 0},
		{"media block is no text block", 5, nil, "photo.jpg", "", -1},
	}
	byName := map[string]int64{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ent, err := s.PinBlock(ctx, id(tc.block), 0)
			if err != nil {
				t.Fatalf("PinBlock: %v", err)
			}
			wantBlockID := ""
			if tc.wantBlock >= 0 {
				wantBlockID = id(tc.wantBlock)
			}
			if ent.Name != tc.wantName || ent.Kind != "note" || ent.Origin != "owner" || ent.Scope != group ||
				ent.Text != tc.wantText || ent.BlockID != wantBlockID || ent.Created.IsZero() || ent.Updated.Before(ent.Created) {
				t.Errorf("entity = %+v\nwant name %q, text %q, block %q, scope %v", ent, tc.wantName, tc.wantText, wantBlockID, group)
			}
			if prev, ok := byName[ent.Name]; ok && prev != ent.ID {
				t.Errorf("entity %d for %q, earlier %d", ent.ID, ent.Name, prev)
			}
			byName[ent.Name] = ent.ID
			b, err := s.Block(ctx, id(tc.block))
			if err != nil || b.Holder != (memory.BlockHolder{Layer: memory.LayerL3, Entity: ent.ID}) {
				t.Errorf("Block after pin = %+v, %v", b, err)
			}
		})
	}
	if n := len(byName); n != 5 {
		t.Errorf("%d note entities, want 5: %v", n, byName)
	}

	// Pinning to a given entity, moving a block from one entity to another, and pinning twice.
	a, err := s.PinBlock(ctx, id(6), 0)
	if err != nil || a.BlockID != id(6) {
		t.Fatalf("PinBlock(6) = %+v, %v", a, err)
	}
	target := byName["photo.jpg"] // has no text block yet
	b, err := s.PinBlock(ctx, id(6), target)
	if err != nil || b.ID != target || b.BlockID != id(6) || b.Text != "from A to B" || b.Name != "photo.jpg" {
		t.Fatalf("PinBlock(6, %d) = %+v, %v", target, b, err)
	}
	if held, err := s.Blocks(ctx, memory.BlockHolder{Layer: memory.LayerL3, Entity: a.ID}); err != nil || len(held) != 0 {
		t.Errorf("entity A still holds %+v, %v", held, err)
	}
	again, err := s.PinBlock(ctx, id(6), target)
	if err != nil || again.ID != b.ID || !again.Updated.Equal(b.Updated) {
		t.Errorf("pinning to the holder again = %+v, %v; want unchanged %+v", again, err, b)
	}
	// A text block pinned to an entity that has one already does not replace it.
	c, err := s.PinBlock(ctx, id(7), target)
	if err != nil || c.BlockID != id(6) {
		t.Errorf("PinBlock(7) = %+v, %v; want text block %s kept", c, err, id(6))
	}
	if held, err := s.Blocks(ctx, memory.BlockHolder{Layer: memory.LayerL3, Entity: target}); err != nil || len(held) != 3 {
		t.Errorf("Blocks(target) = %+v, %v; want photo, moved note and target", held, err)
	}

	// Errors change nothing.
	errTests := []struct {
		name   string
		block  string
		entity int64
		want   error
	}{
		{"unknown block", "nope", 0, memory.ErrNotFound},
		{"unknown entity", id(7), 9999, memory.ErrNotFound},
		{"negative entity", id(7), -1, memory.ErrInvalid},
	}
	for _, tc := range errTests {
		if _, err := s.PinBlock(ctx, tc.block, tc.entity); !errors.Is(err, tc.want) {
			t.Errorf("%s: PinBlock = %v, want %v", tc.name, err, tc.want)
		}
	}
	if got, err := s.Block(ctx, id(7)); err != nil || got.Holder.Entity != target {
		t.Errorf("a failed pin moved the block: %+v, %v", got, err)
	}

	// Persisted, and the event still references all its blocks.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	hist, err := s.History(ctx, "a", 0)
	if err != nil || len(hist) != 1 || len(hist[0].Blocks) != 8 {
		t.Fatalf("History after reopen = %+v, %v", hist, err)
	}
	for i, bl := range hist[0].Blocks {
		if bl.ID != id(i) || bl.Holder.Layer != memory.LayerL3 || bl.Holder.Event != 0 {
			t.Errorf("reference %d = %+v, want block %s in L3", i, bl, id(i))
		}
	}
	if got, err := s.PinBlock(ctx, id(0), 0); err != nil || got.ID != byName["Shopping List"] || got.Text != "milk" {
		t.Errorf("PinBlock after reopen = %+v, %v", got, err)
	}
}

func TestBlocksHolder(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	blkSession(t, s, "a", memory.Scope{})
	ev := blkAppend(t, s, memory.Event{Session: "a", Role: memory.RoleUser, Blocks: []memory.Block{
		{Kind: memory.BlockAudio, Data: []byte{1}}, {Kind: memory.BlockText, Text: "t"}, {Kind: memory.BlockImage, Data: []byte{2}},
	}})
	plain := blkAppend(t, s, memory.Event{Session: "a", Role: memory.RoleUser, Content: "no blocks"})
	ent, err := s.PinBlock(ctx, ev.Blocks[1].ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		h    memory.BlockHolder
		want []string
		err  error
	}{
		{"event, in position order", memory.BlockHolder{Layer: memory.LayerL1, Event: ev.ID}, []string{ev.Blocks[0].ID, ev.Blocks[2].ID}, nil},
		{"event asked as L2", memory.BlockHolder{Layer: memory.LayerL2, Event: ev.ID}, []string{ev.Blocks[0].ID, ev.Blocks[2].ID}, nil},
		{"entity", memory.BlockHolder{Layer: memory.LayerL3, Entity: ent.ID}, []string{ev.Blocks[1].ID}, nil},
		{"event without blocks", memory.BlockHolder{Layer: memory.LayerL1, Event: plain.ID}, nil, nil},
		{"unknown event", memory.BlockHolder{Layer: memory.LayerL1, Event: 999}, nil, memory.ErrNotFound},
		{"unknown entity", memory.BlockHolder{Layer: memory.LayerL3, Entity: 999}, nil, memory.ErrNotFound},
		{"no layer", memory.BlockHolder{Event: ev.ID}, nil, memory.ErrInvalid},
		{"L1 with an entity", memory.BlockHolder{Layer: memory.LayerL1, Entity: ent.ID}, nil, memory.ErrInvalid},
		{"L3 with an event", memory.BlockHolder{Layer: memory.LayerL3, Event: ev.ID, Entity: ent.ID}, nil, memory.ErrInvalid},
		{"layer 4", memory.BlockHolder{Layer: 4, Entity: ent.ID}, nil, memory.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Blocks(ctx, tc.h)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Blocks(%+v) = %v, want %v", tc.h, err, tc.err)
			}
			var ids []string
			for _, b := range got {
				ids = append(ids, b.ID)
				if b.Data != nil {
					t.Errorf("Blocks returned data for %s", b.ID)
				}
			}
			if !reflect.DeepEqual(ids, tc.want) {
				t.Errorf("Blocks(%+v) = %v, want %v", tc.h, ids, tc.want)
			}
		})
	}
	if b, err := s.Block(ctx, ev.Blocks[2].ID); err != nil || !bytes.Equal(b.Data, []byte{2}) {
		t.Errorf("Block = %+v, %v", b, err)
	}
}
