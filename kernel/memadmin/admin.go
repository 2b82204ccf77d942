// Package memadmin is the owner's side of the memory for the API (client.MemoryAdmin): the L3
// graph in pages for the star map and the inspector, an event in its context, entity and triple
// edits, pins, merges, forgetting and scenes. It validates requests as the HTTP API answers them
// and converts the store's types into the client's. The kernel embeds an [Admin] in its memory
// role.
package memadmin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/engine"
)

// Admin is the owner's side of the memory over a store and its engine. Safe for concurrent use.
type Admin struct {
	DB    memory.Memory
	Mem   *engine.Engine
	Log   *slog.Logger
	Clock func() time.Time

	lockMu sync.Mutex
	locks  map[string]*sync.Mutex // SessionLock's
}

// SessionLock returns the lock that serialises a session's turns and branch moves (the kernel's
// runTurn holds it for a turn, SwitchBranch takes it).
func (a *Admin) SessionLock(session string) *sync.Mutex {
	a.lockMu.Lock()
	defer a.lockMu.Unlock()
	if a.locks == nil {
		a.locks = map[string]*sync.Mutex{}
	}
	lock := a.locks[session]
	if lock == nil {
		lock = &sync.Mutex{}
		a.locks[session] = lock
	}
	return lock
}

// Usage is a turn's usage as the API shows it: the provider's token counts over its LLM calls
// (rounds) and its time; nil when no LLM call was made.
func Usage(rounds, prompt, completion int, took time.Duration) *client.Usage {
	if rounds == 0 {
		return nil
	}
	return &client.Usage{PromptTokens: prompt, CompletionTokens: completion, Millis: took.Milliseconds()}
}

// invalid is a request the caller must fix (client.ErrInvalid).
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", client.ErrInvalid, fmt.Sprintf(format, args...))
}

// mapErr translates the store's sentinels into the client's, keeping the message.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, memory.ErrNotFound) && !errors.Is(err, client.ErrNotFound):
		return fmt.Errorf("%w: %w", client.ErrNotFound, err)
	case errors.Is(err, memory.ErrExists), errors.Is(err, memory.ErrInvalid):
		return fmt.Errorf("%w: %w", client.ErrInvalid, err)
	}
	return err
}

// sanitize makes text safe to store and index: valid UTF-8 without NUL bytes.
func sanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}

// Bounds of the graph API (kernel/client).
const (
	defaultGraphPage = client.DefaultGraphLimit
	maxGraphPage     = client.MaxGraphLimit
	maxGraphEvents   = client.MaxGraphEvents
	maxForget        = client.MaxForgetEvents
)

// parseScopeFilter parses an optional scope filter ("" = none).
func parseScopeFilter(s string) (*memory.Scope, error) {
	if s == "" {
		return nil, nil
	}
	if err := client.CheckScope(s); err != nil {
		return nil, err
	}
	sc, err := memory.ParseScope(s)
	if err != nil {
		return nil, invalid("%v", err)
	}
	return &sc, nil
}

// Graph implements client.Service: a page of entities in id order, the triples whose later
// endpoint is on the page, and optionally the newest source events of those triples.
func (k *Admin) Graph(ctx context.Context, q client.GraphQuery) (client.GraphPage, error) {
	scope, err := parseScopeFilter(q.Scope)
	if err != nil {
		return client.GraphPage{}, err
	}
	switch {
	case q.Limit == 0:
		q.Limit = defaultGraphPage
	case q.Limit < 0 || q.Limit > maxGraphPage:
		return client.GraphPage{}, invalid("limit must be from 1 to %d, got %d", maxGraphPage, q.Limit)
	}
	if q.Events < 0 || q.Events > maxGraphEvents {
		return client.GraphPage{}, invalid("events must be from 0 to %d, got %d", maxGraphEvents, q.Events)
	}
	var after int64
	if q.After != "" {
		if after, err = strconv.ParseInt(q.After, 10, 64); err != nil || after < 0 {
			return client.GraphPage{}, invalid("after %q is not a cursor this API returned", q.After)
		}
	}
	ents, err := k.DB.Entities(ctx, memory.EntityQuery{Viewer: memory.OwnerViewer, Scope: scope, After: after, Limit: q.Limit})
	if err != nil {
		return client.GraphPage{}, mapErr(err)
	}
	page := client.GraphPage{Entities: []client.Entity{}, Triples: []client.Triple{}}
	if len(ents) == q.Limit { // a full page: is there more? (Limit+1 would pass the store's cap at the largest page)
		last := ents[len(ents)-1].ID
		more, err := k.DB.Entities(ctx, memory.EntityQuery{Viewer: memory.OwnerViewer, Scope: scope, After: last, Limit: 1})
		if err != nil {
			return client.GraphPage{}, mapErr(err)
		}
		if len(more) > 0 {
			page.Next = strconv.FormatInt(last, 10)
		}
	}
	if page.Total, err = k.DB.CountEntities(ctx, memory.OwnerViewer, scope); err != nil {
		return client.GraphPage{}, mapErr(err)
	}
	if len(ents) == 0 {
		return page, nil
	}
	// With a scope filter an edge is shown only when both its ends are of that scope.
	var inScope map[int64]bool
	if scope != nil {
		if inScope, err = entityIDs(ctx, k.DB, scope); err != nil {
			return client.GraphPage{}, mapErr(err)
		}
	}
	for _, e := range ents {
		page.Entities = append(page.Entities, entityOut(e))
	}
	// An edge travels with the page of its later endpoint: both ends are known by then.
	ts, err := allTriples(ctx, k.DB, memory.TripleQuery{Viewer: memory.OwnerViewer, History: q.History, Scope: scope,
		EndpointAfter: after, EndpointUpTo: ents[len(ents)-1].ID, Scene: q.Scene})
	if err != nil {
		return client.GraphPage{}, mapErr(err)
	}
	var sources []int64
	for _, t := range ts {
		if inScope != nil && (!inScope[t.Subject] || !inScope[t.Object]) {
			continue
		}
		page.Triples = append(page.Triples, tripleOut(t))
		sources = append(sources, t.Sources...)
	}
	slices.SortFunc(page.Triples, func(a, b client.Triple) int { return int(a.ID - b.ID) })
	if q.Events > 0 && len(sources) > 0 {
		if page.Events, err = graphEvents(ctx, k.DB, page.Triples, q.Events); err != nil {
			return client.GraphPage{}, mapErr(err)
		}
	}
	return page, nil
}

// EventContext implements client.MemoryAdmin: the event with up to radius events of its session
// on each side, in id (time) order, seen by the owner.
func (k *Admin) EventContext(ctx context.Context, id int64, radius int) ([]client.MemoryHit, error) {
	if id <= 0 {
		return nil, invalid("event id must be positive, got %d", id)
	}
	switch {
	case radius == 0:
		radius = client.DefaultContextRadius
	case radius < 0 || radius > client.MaxContextRadius:
		return nil, invalid("radius must be from 0 to %d, got %d", client.MaxContextRadius, radius)
	}
	got, err := k.DB.Events(ctx, []int64{id})
	if err != nil {
		return nil, mapErr(err)
	}
	if len(got) == 0 {
		return nil, fmt.Errorf("event %d: %w", id, client.ErrNotFound)
	}
	around, err := k.DB.Neighbours(ctx, []int64{id}, radius, memory.OwnerViewer)
	if err != nil {
		return nil, mapErr(err)
	}
	evs := append(around, got[0].Event)
	slices.SortFunc(evs, func(a, b memory.Event) int { return cmp.Compare(a.ID, b.ID) })
	out := make([]client.MemoryHit, 0, len(evs))
	for _, e := range evs {
		out = append(out, HitOut(e, 0, ""))
	}
	return out, nil
}

// HitOut is an event as the API lists it.
// matched are the ids of its image blocks that matched a query by their vectors (cold.Hit.Images),
// best first; they lead its Images.
func HitOut(e memory.Event, score float64, reason string, matched ...string) client.MemoryHit {
	h := client.MemoryHit{ID: e.ID, Session: e.Session, Time: e.Time, Role: string(e.Role), Channel: e.Channel,
		Partner: e.Partner, Scope: e.Scope.String(), Layer: int(e.Layer), Content: e.Content, Score: score, Reason: reason}
	images := map[string]memory.Block{}
	for _, b := range e.Blocks {
		if b.Kind == memory.BlockImage {
			images[b.ID] = b
		}
	}
	for _, id := range matched {
		if b, ok := images[id]; ok {
			h.Images = append(h.Images, client.HitImage{Block: b.ID, Name: b.Name, MIME: b.MIME, Matched: true})
			delete(images, id)
		}
	}
	for _, b := range e.Blocks {
		if _, ok := images[b.ID]; ok {
			h.Images = append(h.Images, client.HitImage{Block: b.ID, Name: b.Name, MIME: b.MIME})
		}
	}
	return h
}

// entityIDs returns the ids of the entities of a scope (nil: all), paging through them: an
// edge is shown only when both its ends are.
func entityIDs(ctx context.Context, db memory.Memory, scope *memory.Scope) (map[int64]bool, error) {
	ids := map[int64]bool{}
	var after int64
	for {
		es, err := db.Entities(ctx, memory.EntityQuery{Viewer: memory.OwnerViewer, Scope: scope, After: after, Limit: maxGraphPage})
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			ids[e.ID] = true
		}
		if len(es) < maxGraphPage {
			return ids, nil
		}
		after = es[len(es)-1].ID
	}
}

// allTriples pages through every triple matching q.
func allTriples(ctx context.Context, db memory.Memory, q memory.TripleQuery) ([]memory.Triple, error) {
	var out []memory.Triple
	q.Limit = 5000
	for {
		ts, err := db.Triples(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
		if len(ts) < q.Limit {
			return out, nil
		}
		q.After = ts[len(ts)-1].ID
	}
}

// graphEvents returns the newest n source events of triples, each linked to its triples.
func graphEvents(ctx context.Context, db memory.Memory, ts []client.Triple, n int) ([]client.GraphEvt, error) {
	links := map[int64][]int64{}
	for _, t := range ts {
		for _, id := range t.Sources {
			links[id] = append(links[id], t.ID)
		}
	}
	ids := make([]int64, 0, len(links))
	for id := range links {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if len(ids) > n {
		ids = ids[len(ids)-n:] // ids grow with time: the newest
	}
	hits, err := db.Events(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]client.GraphEvt, 0, len(hits))
	for i := len(hits) - 1; i >= 0; i-- {
		e := hits[i].Event
		out = append(out, client.GraphEvt{ID: e.ID, Time: e.Time, Session: e.Session, Role: string(e.Role), Partner: e.Partner,
			Content: truncateRunes(e.Content, 2000), Scope: e.Scope.String(), Triples: links[e.ID]})
	}
	return out, nil
}

// Entity implements client.Service.
func (k *Admin) Entity(ctx context.Context, id int64) (client.EntityDetail, error) {
	if id <= 0 {
		return client.EntityDetail{}, invalid("entity id must be positive, got %d", id)
	}
	e, err := k.DB.Entity(ctx, id)
	if err != nil {
		return client.EntityDetail{}, mapErr(err)
	}
	ts, err := allTriples(ctx, k.DB, memory.TripleQuery{Viewer: memory.OwnerViewer, Entity: id, History: true})
	if err != nil {
		return client.EntityDetail{}, mapErr(err)
	}
	bs, err := k.DB.Blocks(ctx, memory.BlockHolder{Layer: memory.LayerL3, Entity: id})
	if err != nil {
		return client.EntityDetail{}, mapErr(err)
	}
	d := client.EntityDetail{Entity: entityOut(e), Triples: make([]client.Triple, 0, len(ts)), Blocks: make([]client.Block, 0, len(bs))}
	for _, t := range ts {
		d.Triples = append(d.Triples, tripleOut(t))
	}
	for _, b := range bs {
		d.Blocks = append(d.Blocks, BlockOut(b))
	}
	return d, nil
}

// PutEntity implements client.Service.
func (k *Admin) PutEntity(ctx context.Context, e client.Entity) (client.Entity, error) {
	if e.ID < 0 {
		return client.Entity{}, invalid("entity id must not be negative, got %d", e.ID)
	}
	if strings.TrimSpace(e.Name) == "" {
		return client.Entity{}, invalid("the entity name is empty")
	}
	sc := memory.Scope{}
	var err error
	if e.Scope != "" {
		if err := client.CheckScope(e.Scope); err != nil {
			return client.Entity{}, err
		}
		if sc, err = memory.ParseScope(e.Scope); err != nil {
			return client.Entity{}, invalid("%v", err)
		}
	} else if e.ID != 0 {
		old, err := k.DB.Entity(ctx, e.ID)
		if err != nil {
			return client.Entity{}, mapErr(err)
		}
		sc = old.Scope
	}
	out, err := k.DB.PutEntity(ctx, memory.Entity{ID: e.ID, Name: sanitize(e.Name), Kind: e.Kind, Text: sanitize(e.Text), Scope: sc, Origin: "owner"})
	if err != nil {
		return client.Entity{}, mapErr(err)
	}
	return entityOut(out), nil
}

// factIn converts a TripleInput into a Fact and its scope.
func factIn(t client.TripleInput) (memory.Fact, memory.Scope, error) {
	if strings.TrimSpace(t.Subject) == "" || strings.TrimSpace(t.Predicate) == "" || strings.TrimSpace(t.Object) == "" {
		return memory.Fact{}, memory.Scope{}, invalid("a triple needs a subject, a predicate and an object")
	}
	sc := memory.Scope{}
	if t.Scope != "" {
		if err := client.CheckScope(t.Scope); err != nil {
			return memory.Fact{}, memory.Scope{}, err
		}
		var err error
		if sc, err = memory.ParseScope(t.Scope); err != nil {
			return memory.Fact{}, memory.Scope{}, invalid("%v", err)
		}
	}
	return memory.Fact{Subject: sanitize(t.Subject), SubjectKind: t.SubjectKind, Predicate: sanitize(t.Predicate), Object: sanitize(t.Object),
		ObjectKind: t.ObjectKind, ValidFrom: t.ValidFrom, Replaces: t.Replaces}, sc, nil
}

// AddTriple implements client.Service.
func (k *Admin) AddTriple(ctx context.Context, in client.TripleInput) (client.Triple, error) {
	f, sc, err := factIn(in)
	if err != nil {
		return client.Triple{}, err
	}
	if f.ValidFrom.IsZero() {
		f.ValidFrom = k.Clock()
	}
	t, err := k.DB.AddTriple(ctx, f, "owner", sc)
	if err != nil {
		return client.Triple{}, mapErr(err)
	}
	return tripleOut(t), nil
}

// EditTriple implements client.Service.
func (k *Admin) EditTriple(ctx context.Context, id int64, in client.TripleInput) (client.Triple, error) {
	if id <= 0 {
		return client.Triple{}, invalid("triple id must be positive, got %d", id)
	}
	f, _, err := factIn(in)
	if err != nil {
		return client.Triple{}, err
	}
	t, err := k.DB.EditTriple(ctx, id, f)
	if err != nil {
		return client.Triple{}, mapErr(err)
	}
	return tripleOut(t), nil
}

// Pin implements client.Service.
func (k *Admin) Pin(ctx context.Context, p client.PinRequest) error {
	switch p.Kind {
	case "entity", "triple":
		if p.ID <= 0 {
			return invalid("%s id must be positive, got %d", p.Kind, p.ID)
		}
		return mapErr(k.DB.Pin(ctx, p.Kind, p.ID, p.Pinned))
	case "block":
		if p.Block == "" {
			return invalid("pin block needs the block id")
		}
		if !p.Pinned {
			return invalid("a block in L3 stays there: unpin its entity or delete it instead")
		}
		if p.Entity < 0 {
			return invalid("entity id must not be negative, got %d", p.Entity)
		}
		_, err := k.DB.PinBlock(ctx, p.Block, p.Entity)
		return mapErr(err)
	}
	return invalid(`pin kind must be "entity", "triple" or "block", got %q`, p.Kind)
}

// MergeEntities implements client.Service.
func (k *Admin) MergeEntities(ctx context.Context, into, from int64) (client.Entity, error) {
	if into <= 0 || from <= 0 {
		return client.Entity{}, invalid("entity ids must be positive, got %d and %d", into, from)
	}
	if into == from {
		return client.Entity{}, invalid("cannot merge entity %d into itself", into)
	}
	e, err := k.DB.MergeEntities(ctx, into, from)
	if err != nil {
		return client.Entity{}, mapErr(err)
	}
	return entityOut(e), nil
}

// DeleteEntity implements client.Service.
func (k *Admin) DeleteEntity(ctx context.Context, id int64) error {
	if id <= 0 {
		return invalid("entity id must be positive, got %d", id)
	}
	return mapErr(k.DB.DeleteEntity(ctx, id))
}

// Forget implements client.Service: the events leave the store, and every window that held them.
func (k *Admin) Forget(ctx context.Context, ids []int64) (client.ForgetResult, error) {
	switch {
	case len(ids) == 0:
		return client.ForgetResult{}, invalid("forget needs at least one event id")
	case len(ids) > maxForget:
		return client.ForgetResult{}, invalid("forget takes at most %d event ids at once, got %d", maxForget, len(ids))
	}
	for _, id := range ids {
		if id <= 0 {
			return client.ForgetResult{}, invalid("event ids must be positive, got %d", id)
		}
	}
	// The engine holds its window lock across the delete, so no turn computes a window with a
	// forgotten event.
	r, err := k.Mem.Forget(ctx, ids)
	if err != nil {
		return client.ForgetResult{}, mapErr(err)
	}
	k.Log.Info("memory forgotten", "events", r.Events, "blocks", r.Blocks, "triples", r.Triples, "entities", r.Entities)
	return client.ForgetResult{Events: r.Events, Blocks: r.Blocks, Triples: r.Triples, Trimmed: r.Trimmed, Entities: r.Entities}, nil
}

// Scenes implements client.Service: scenes with their strength as of now.
func (k *Admin) Scenes(ctx context.Context) ([]client.Scene, error) {
	ss, err := k.Mem.Scenes(ctx)
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]client.Scene, 0, len(ss))
	for _, s := range ss {
		out = append(out, client.Scene{ID: s.ID, Key: s.Key, Declared: s.Declared, Features: s.Features, Strength: s.Strength,
			Occurrences: s.Occurrences, Seen: s.Seen})
	}
	return out, nil
}

func entityOut(e memory.Entity) client.Entity {
	return client.Entity{ID: e.ID, Name: e.Name, Kind: e.Kind, Text: e.Text, Scope: e.Scope.String(), Pinned: e.Pinned, Mentions: e.Mentions,
		Origin: e.Origin, Created: e.Created, Updated: e.Updated, LastRecalled: e.LastRecalled}
}

func tripleOut(t memory.Triple) client.Triple {
	src := t.Sources
	if src == nil {
		src = []int64{}
	}
	return client.Triple{ID: t.ID, Subject: t.Subject, SubjectName: t.SubjectName, Predicate: t.Predicate, Object: t.Object,
		ObjectName: t.ObjectName, ValidFrom: t.ValidFrom, ValidTo: t.ValidTo, Sources: src, Scope: t.Scope.String(), Pinned: t.Pinned,
		SupersededBy: t.SupersededBy, Origin: t.Origin, Created: t.Created}
}

// BlockOut is a block as the API lists it (without its data).
func BlockOut(b memory.Block) client.Block {
	return client.Block{ID: b.ID, Kind: string(b.Kind), Name: b.Name, MIME: b.MIME, Text: b.Text, Size: b.Size, Scope: b.Scope.String(),
		HolderLayer: int(b.Holder.Layer), HolderEvent: b.Holder.Event, HolderEntity: b.Holder.Entity}
}

// truncateRunes cuts s to n runes, marking the cut with an ellipsis.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
