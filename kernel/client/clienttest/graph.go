package clienttest

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// fakeGraph is the fake kernel's L3 memory: entities, triples, blocks and scenes.
type fakeGraph struct {
	entities map[int64]*client.Entity
	triples  map[int64]*client.Triple
	blocks   map[string]*client.Block
	scenes   []client.Scene
	gc       client.GCReport
	exports  map[string][]byte // format → body answered verbatim (SetExport)
	pageSize int               // entities per graph page when the query has no limit
	nextID   int64
	clock    int              // minutes past f.started, advanced by each write
	sceneOf  map[int64]string // event id → scene key (SetEventScene)
}

// SetEventScene puts the memory events ids (see AddMemory) into the scene of key, so that a
// graph query with that scene keeps the triples they are sources of.
func (f *Fake) SetEventScene(key string, ids ...int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.g()
	if g.sceneOf == nil {
		g.sceneOf = map[int64]string{}
	}
	for _, id := range ids {
		g.sceneOf[id] = key
	}
}

// g returns the fake's graph, creating it on first use; f.mu is held.
func (f *Fake) g() *fakeGraph {
	if f.graph == nil {
		f.graph = &fakeGraph{entities: map[int64]*client.Entity{}, triples: map[int64]*client.Triple{},
			blocks: map[string]*client.Block{}, exports: map[string][]byte{}}
	}
	return f.graph
}

// tick returns the next write time: the fake's clock, one minute per write; f.mu is held.
func (f *Fake) tick() time.Time {
	g := f.g()
	g.clock++
	return f.started.Add(24*time.Hour + time.Duration(g.clock)*time.Minute)
}

// AddFact stores a triple between entities by name (created when missing) as distillation
// would, with its source events (see AddMemory), and returns it.
func (f *Fake) AddFact(in client.TripleInput, sources ...int64) client.Triple {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.storeTriple(in, sources, "llm")
	for _, id := range []int64{t.Subject, t.Object} {
		f.g().entities[id].Mentions++
	}
	return *t
}

// SetScenes makes GET /api/v1/memory/scenes answer ss.
func (f *Fake) SetScenes(ss ...client.Scene) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.g().scenes = append([]client.Scene(nil), ss...)
}

// SetGraphPageSize sets how many entities a graph page holds when the query gives no limit
// (default [client.DefaultGraphLimit]), so that paging can be tested with a few entities.
func (f *Fake) SetGraphPageSize(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.g().pageSize = n
}

// SetGCReport makes POST /api/v1/memory/gc answer r.
func (f *Fake) SetGCReport(r client.GCReport) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.g().gc = r
}

// SetExport makes GET /api/v1/memory/export?format=format answer body verbatim instead of the
// export the fake makes of its graph (e.g. a crafted tar for the markdown format).
func (f *Fake) SetExport(format string, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.g().exports[format] = append([]byte(nil), body...)
}

// SetThumbnail makes GET /api/v1/memory/blocks/{block}/thumbnail answer png (image/png); other
// blocks are not found.
func (f *Fake) SetThumbnail(block string, png []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.thumbs == nil {
		f.thumbs = map[string][]byte{}
	}
	f.thumbs[block] = append([]byte(nil), png...)
}

// thumbnail answers GET /api/v1/memory/blocks/{id}/thumbnail.
func (f *Fake) thumbnail(w http.ResponseWriter, block string) {
	f.mu.Lock()
	data, ok := f.thumbs[block]
	f.mu.Unlock()
	if !ok {
		WriteError(w, http.StatusNotFound, "block "+block+" not found")
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.WriteHeader(http.StatusOK)
	w.Write(data)
}

// AddBlocks adds blocks (held by events, or by entities when HolderEntity is set) that pins can
// move to L3.
func (f *Fake) AddBlocks(bs ...client.Block) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range bs {
		b := b
		f.g().blocks[b.ID] = &b
	}
}

// graphRoute serves the /api/v1/memory/… admin routes (all but search).
func (f *Fake) graphRoute(w http.ResponseWriter, r *http.Request, parts []string, body []byte) {
	q := r.URL.Query()
	route := r.Method + " " + strings.Join(parts[1:], "/")
	switch {
	case route == "GET graph":
		f.graphPage(w, r)
	case route == "POST entities":
		f.putEntity(w, 0, body)
	case len(parts) == 3 && parts[1] == "entities":
		id, ok := fakeID(w, "entity", parts[2])
		if !ok {
			return
		}
		switch r.Method {
		case http.MethodGet:
			f.entityDetail(w, id)
		case http.MethodPut:
			f.putEntity(w, id, body)
		case http.MethodDelete:
			f.deleteEntity(w, id)
		default:
			WriteError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+r.URL.Path)
		}
	case r.Method == http.MethodPost && len(parts) == 4 && parts[1] == "entities" && parts[3] == "merge":
		if id, ok := fakeID(w, "entity", parts[2]); ok {
			f.merge(w, id, body)
		}
	case r.Method == http.MethodGet && len(parts) == 3 && parts[1] == "events":
		if id, ok := fakeID(w, "event", parts[2]); ok {
			f.eventContext(w, r, id)
		}
	case r.Method == http.MethodGet && len(parts) == 4 && parts[1] == "blocks" && parts[3] == "thumbnail":
		f.thumbnail(w, parts[2])
	case route == "POST triples":
		f.addTriple(w, body)
	case r.Method == http.MethodPut && len(parts) == 3 && parts[1] == "triples":
		if id, ok := fakeID(w, "triple", parts[2]); ok {
			f.editTriple(w, id, body)
		}
	case route == "POST pin":
		f.pin(w, body)
	case route == "POST forget":
		f.forget(w, body)
	case route == "GET scenes":
		if !checkQuery(w, q) {
			return
		}
		f.mu.Lock()
		ss := append([]client.Scene{}, f.g().scenes...)
		f.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"scenes": ss})
	case route == "POST gc":
		f.mu.Lock()
		rep := f.g().gc
		f.mu.Unlock()
		writeJSON(w, http.StatusOK, rep)
	case route == "GET export":
		f.export(w, r)
	case route == "POST import":
		f.importMemory(w, r, body)
	default:
		WriteError(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
	}
}

// eventContext answers GET /api/v1/memory/events/{id}: the memory event (see AddMemory) and up
// to radius events of its session on each side, by id.
func (f *Fake) eventContext(w http.ResponseWriter, r *http.Request, id int64) {
	q := r.URL.Query()
	if !checkQuery(w, q, "radius") {
		return
	}
	radius := client.DefaultContextRadius
	if q.Has("radius") {
		n, err := strconv.Atoi(q.Get("radius"))
		if err != nil || n < 0 || n > client.MaxContextRadius {
			WriteError(w, http.StatusBadRequest, "radius must be an integer from 0 to 20, got "+strconv.Quote(q.Get("radius")))
			return
		}
		radius = cmp.Or(n, client.DefaultContextRadius)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var session []client.MemoryHit
	at := -1
	for _, h := range f.memory {
		if h.ID == id {
			at = 0
			session = append(session[:0], h)
			break
		}
	}
	if at < 0 {
		WriteError(w, http.StatusNotFound, fmt.Sprintf("event %d: not found", id))
		return
	}
	sess := session[0].Session
	session = session[:0]
	for _, h := range f.memory {
		if h.Session == sess {
			h.Score, h.Reason = 0, ""
			session = append(session, h)
		}
	}
	slices.SortFunc(session, func(a, b client.MemoryHit) int { return cmp.Compare(a.ID, b.ID) })
	at = slices.IndexFunc(session, func(h client.MemoryHit) bool { return h.ID == id })
	writeJSON(w, http.StatusOK, map[string]any{"events": session[max(0, at-radius):min(len(session), at+radius+1)]})
}

// fakeID parses a positive id, answering 400 otherwise.
func fakeID(w http.ResponseWriter, what, v string) (int64, bool) {
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		WriteError(w, http.StatusBadRequest, what+" id must be a positive integer, got "+strconv.Quote(v))
		return 0, false
	}
	return id, true
}

// sortedEntities returns the entities by id; f.mu is held.
func (g *fakeGraph) sortedEntities() []client.Entity {
	out := make([]client.Entity, 0, len(g.entities))
	for _, e := range g.entities {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b client.Entity) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// sortedTriples returns the triples by id; f.mu is held.
func (g *fakeGraph) sortedTriples() []client.Triple {
	out := make([]client.Triple, 0, len(g.triples))
	for _, t := range g.triples {
		c := *t
		c.Sources = append([]int64{}, t.Sources...)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b client.Triple) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func current(t client.Triple) bool { return t.SupersededBy == 0 && t.ValidTo.IsZero() }

func (f *Fake) graphPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !checkQuery(w, q, "scope", "history", "after", "limit", "events", "scene") {
		return
	}
	gq := client.GraphQuery{Scope: q.Get("scope"), History: q.Get("history") == "1" || q.Get("history") == "true", Scene: q.Get("scene")}
	if q.Has("scene") && strings.TrimSpace(gq.Scene) == "" {
		WriteError(w, http.StatusBadRequest, "scene is empty: give a scene key (GET /api/v1/memory/scenes lists them)")
		return
	}
	if q.Has("scope") && client.CheckScope(gq.Scope) != nil {
		WriteError(w, http.StatusBadRequest, "scope must be private, public or group:<id>, got "+strconv.Quote(gq.Scope))
		return
	}
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > client.MaxGraphLimit {
			WriteError(w, http.StatusBadRequest, "limit must be an integer from 1 to 10000, got "+strconv.Quote(q.Get("limit")))
			return
		}
		gq.Limit = n
	}
	if q.Has("events") {
		n, err := strconv.Atoi(q.Get("events"))
		if err != nil || n < 0 || n > client.MaxGraphEvents {
			WriteError(w, http.StatusBadRequest, "events must be an integer from 0 to 1000, got "+strconv.Quote(q.Get("events")))
			return
		}
		gq.Events = n
	}
	var after int64
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			WriteError(w, http.StatusBadRequest, "bad paging cursor "+strconv.Quote(v))
			return
		}
		after = n
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.g()
	if gq.Limit == 0 {
		gq.Limit = cmp.Or(g.pageSize, client.DefaultGraphLimit)
	}
	page := client.GraphPage{Entities: []client.Entity{}, Triples: []client.Triple{}}
	inPage := map[int64]bool{}
	for _, e := range g.sortedEntities() {
		if gq.Scope != "" && e.Scope != gq.Scope {
			continue
		}
		page.Total++
		if e.ID <= after {
			continue
		}
		if len(page.Entities) == gq.Limit {
			page.Next = strconv.FormatInt(page.Entities[len(page.Entities)-1].ID, 10)
			continue
		}
		page.Entities = append(page.Entities, e)
		inPage[e.ID] = true
	}
	for _, t := range g.sortedTriples() {
		if (!gq.History && !current(t)) || (gq.Scope != "" && t.Scope != gq.Scope) {
			continue
		}
		if gq.Scene != "" && !slices.ContainsFunc(t.Sources, func(id int64) bool { return g.sceneOf[id] == gq.Scene }) {
			continue
		}
		// An edge goes with the page of its later endpoint.
		if inPage[max(t.Subject, t.Object)] {
			page.Triples = append(page.Triples, t)
		}
	}
	if gq.Events > 0 {
		var evs []client.GraphEvt
		for _, h := range f.memory {
			if h.Layer != 2 || (gq.Scope != "" && h.Scope != gq.Scope) {
				continue
			}
			ev := client.GraphEvt{ID: h.ID, Time: h.Time, Session: h.Session, Role: h.Role, Partner: h.Partner, Content: h.Content, Scope: h.Scope}
			for _, t := range page.Triples {
				if slices.Contains(t.Sources, h.ID) {
					ev.Triples = append(ev.Triples, t.ID)
				}
			}
			evs = append(evs, ev)
		}
		slices.SortFunc(evs, func(a, b client.GraphEvt) int { return b.Time.Compare(a.Time) })
		page.Events = evs[:min(len(evs), gq.Events)]
	}
	writeJSON(w, http.StatusOK, page)
}

func (f *Fake) entityDetail(w http.ResponseWriter, id int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.g()
	e, ok := g.entities[id]
	if !ok {
		WriteError(w, http.StatusNotFound, "no entity "+strconv.FormatInt(id, 10))
		return
	}
	d := client.EntityDetail{Entity: *e, Triples: []client.Triple{}, Blocks: []client.Block{}}
	for _, t := range g.sortedTriples() {
		if t.Subject == id || t.Object == id {
			d.Triples = append(d.Triples, t)
		}
	}
	for _, b := range g.blocks {
		if b.HolderLayer == 3 && b.HolderEntity == id {
			d.Blocks = append(d.Blocks, *b)
		}
	}
	slices.SortFunc(d.Blocks, func(a, b client.Block) int { return strings.Compare(a.ID, b.ID) })
	writeJSON(w, http.StatusOK, d)
}

// byName finds an entity by name, case-insensitively; f.mu is held.
func (g *fakeGraph) byName(name string) *client.Entity {
	for _, e := range g.sortedEntities() {
		if strings.EqualFold(e.Name, name) {
			return g.entities[e.ID]
		}
	}
	return nil
}

// newEntity adds an entity; f.mu is held.
func (f *Fake) newEntity(name, kind, text, scope, origin string) *client.Entity {
	g := f.g()
	g.nextID++
	if scope == "" {
		scope = client.ScopePrivate
	}
	if kind == "" {
		kind = "thing"
	}
	now := f.tick()
	e := &client.Entity{ID: g.nextID, Name: name, Kind: kind, Text: text, Scope: scope, Origin: origin, Created: now, Updated: now}
	g.entities[e.ID] = e
	return e
}

func (f *Fake) putEntity(w http.ResponseWriter, id int64, body []byte) {
	var in client.Entity
	if !decode(w, body, &in) {
		return
	}
	if strings.TrimSpace(in.Name) == "" {
		WriteError(w, http.StatusBadRequest, "entity name is empty")
		return
	}
	if in.Scope != "" && client.CheckScope(in.Scope) != nil {
		WriteError(w, http.StatusBadRequest, "scope must be private, public or group:<id>, got "+strconv.Quote(in.Scope))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.g()
	if other := g.byName(in.Name); other != nil && other.ID != id {
		WriteError(w, http.StatusConflict, "an entity named "+strconv.Quote(other.Name)+" exists (id "+strconv.FormatInt(other.ID, 10)+")")
		return
	}
	if id == 0 {
		writeJSON(w, http.StatusCreated, *f.newEntity(in.Name, in.Kind, in.Text, in.Scope, "owner"))
		return
	}
	e, ok := g.entities[id]
	if !ok {
		WriteError(w, http.StatusNotFound, "no entity "+strconv.FormatInt(id, 10))
		return
	}
	e.Name, e.Kind, e.Text, e.Updated = in.Name, in.Kind, in.Text, f.tick()
	if in.Scope != "" {
		e.Scope = in.Scope
	}
	for _, t := range g.triples {
		if t.Subject == id {
			t.SubjectName = e.Name
		}
		if t.Object == id {
			t.ObjectName = e.Name
		}
	}
	writeJSON(w, http.StatusOK, *e)
}

func (f *Fake) deleteEntity(w http.ResponseWriter, id int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.g()
	if _, ok := g.entities[id]; !ok {
		WriteError(w, http.StatusNotFound, "no entity "+strconv.FormatInt(id, 10))
		return
	}
	delete(g.entities, id)
	for tid, t := range g.triples {
		if t.Subject == id || t.Object == id {
			delete(g.triples, tid)
		}
	}
	for bid, b := range g.blocks {
		if b.HolderLayer == 3 && b.HolderEntity == id {
			delete(g.blocks, bid)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func (f *Fake) merge(w http.ResponseWriter, into int64, body []byte) {
	var in struct {
		From int64 `json:"from"`
	}
	if !decode(w, body, &in) {
		return
	}
	if in.From <= 0 || in.From == into {
		WriteError(w, http.StatusBadRequest, "from must be another entity's id, got "+strconv.FormatInt(in.From, 10))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.g()
	dst, src := g.entities[into], g.entities[in.From]
	if dst == nil || src == nil {
		WriteError(w, http.StatusNotFound, fmt.Sprintf("no entity %d or %d", into, in.From))
		return
	}
	for _, t := range g.triples {
		if t.Subject == src.ID {
			t.Subject, t.SubjectName = dst.ID, dst.Name
		}
		if t.Object == src.ID {
			t.Object, t.ObjectName = dst.ID, dst.Name
		}
	}
	for _, b := range g.blocks {
		if b.HolderLayer == 3 && b.HolderEntity == src.ID {
			b.HolderEntity = dst.ID
		}
	}
	dst.Mentions += src.Mentions
	dst.Pinned = dst.Pinned || src.Pinned
	dst.Updated = f.tick()
	delete(g.entities, src.ID)
	writeJSON(w, http.StatusOK, *dst)
}

// decodeTriple reads a TripleInput and checks it as the kernel does.
func decodeTriple(w http.ResponseWriter, body []byte) (client.TripleInput, bool) {
	var in client.TripleInput
	if !decode(w, body, &in) {
		return in, false
	}
	for _, p := range [][2]string{{"subject", in.Subject}, {"predicate", in.Predicate}, {"object", in.Object}} {
		if strings.TrimSpace(p[1]) == "" {
			WriteError(w, http.StatusBadRequest, "triple "+p[0]+" is empty")
			return in, false
		}
	}
	if in.Scope != "" && client.CheckScope(in.Scope) != nil {
		WriteError(w, http.StatusBadRequest, "scope must be private, public or group:<id>, got "+strconv.Quote(in.Scope))
		return in, false
	}
	return in, true
}

// storeTriple adds a triple between entities by name (created when missing); f.mu is held.
func (f *Fake) storeTriple(in client.TripleInput, sources []int64, origin string) *client.Triple {
	g := f.g()
	ent := func(name, kind string) *client.Entity {
		if e := g.byName(name); e != nil {
			return e
		}
		return f.newEntity(name, kind, "", in.Scope, origin)
	}
	s, o := ent(in.Subject, in.SubjectKind), ent(in.Object, in.ObjectKind)
	now := f.tick()
	pred := strings.Join(strings.Fields(strings.ToLower(in.Predicate)), " ")
	if in.Replaces {
		for _, t := range g.triples {
			if t.Subject == s.ID && t.Predicate == pred && t.Object != o.ID && current(*t) {
				t.ValidTo = now
				t.SupersededBy = g.nextID + 1
			}
		}
	}
	scope := in.Scope
	if scope == "" {
		scope = client.ScopePrivate
	}
	from := in.ValidFrom
	if from.IsZero() {
		from = now
	}
	g.nextID++
	t := &client.Triple{ID: g.nextID, Subject: s.ID, SubjectName: s.Name, Predicate: pred, Object: o.ID, ObjectName: o.Name,
		ValidFrom: from, Sources: append([]int64{}, sources...), Scope: scope, Origin: origin, Created: now}
	g.triples[t.ID] = t
	return t
}

func (f *Fake) addTriple(w http.ResponseWriter, body []byte) {
	in, ok := decodeTriple(w, body)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	writeJSON(w, http.StatusCreated, *f.storeTriple(in, nil, "owner"))
}

func (f *Fake) editTriple(w http.ResponseWriter, id int64, body []byte) {
	in, ok := decodeTriple(w, body)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	old, found := f.g().triples[id]
	if !found {
		WriteError(w, http.StatusNotFound, "no triple "+strconv.FormatInt(id, 10))
		return
	}
	if !current(*old) {
		WriteError(w, http.StatusConflict, fmt.Sprintf("triple %d is already superseded", id))
		return
	}
	if in.Scope == "" {
		in.Scope = old.Scope
	}
	in.Replaces = false
	t := f.storeTriple(in, old.Sources, "owner")
	old.SupersededBy, old.ValidTo = t.ID, t.Created
	writeJSON(w, http.StatusOK, *t)
}

func (f *Fake) pin(w http.ResponseWriter, body []byte) {
	var in client.PinRequest
	if !decode(w, body, &in) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.g()
	switch in.Kind {
	case "entity":
		e := g.entities[in.ID]
		if e == nil {
			WriteError(w, http.StatusNotFound, "no entity "+strconv.FormatInt(in.ID, 10))
			return
		}
		e.Pinned = in.Pinned
	case "triple":
		t := g.triples[in.ID]
		if t == nil {
			WriteError(w, http.StatusNotFound, "no triple "+strconv.FormatInt(in.ID, 10))
			return
		}
		t.Pinned = in.Pinned
	case "block":
		b := g.blocks[in.Block]
		if b == nil {
			WriteError(w, http.StatusNotFound, "no block "+strconv.Quote(in.Block))
			return
		}
		if !in.Pinned {
			WriteError(w, http.StatusBadRequest, "a block cannot be unpinned: delete its entity or move it")
			return
		}
		holder := in.Entity
		if holder == 0 {
			name := b.Name
			if name == "" {
				name = "note " + b.ID
			}
			holder = f.newEntity(name, "note", b.Text, b.Scope, "owner").ID
		} else if g.entities[holder] == nil {
			WriteError(w, http.StatusNotFound, "no entity "+strconv.FormatInt(holder, 10))
			return
		}
		b.HolderLayer, b.HolderEvent, b.HolderEntity = 3, 0, holder
	default:
		WriteError(w, http.StatusBadRequest, "pin kind must be entity, triple or block, got "+strconv.Quote(in.Kind))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (f *Fake) forget(w http.ResponseWriter, body []byte) {
	var in struct {
		Events []int64 `json:"events"`
	}
	if !decode(w, body, &in) {
		return
	}
	if len(in.Events) == 0 || len(in.Events) > client.MaxForgetEvents {
		WriteError(w, http.StatusBadRequest, fmt.Sprintf("events must hold 1 to %d event ids, got %d", client.MaxForgetEvents, len(in.Events)))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range in.Events {
		if !slices.ContainsFunc(f.memory, func(h client.MemoryHit) bool { return h.ID == id }) {
			WriteError(w, http.StatusNotFound, "no event "+strconv.FormatInt(id, 10))
			return
		}
	}
	var res client.ForgetResult
	f.memory = slices.DeleteFunc(f.memory, func(h client.MemoryHit) bool {
		if slices.Contains(in.Events, h.ID) {
			res.Events++
			return true
		}
		return false
	})
	g := f.g()
	for bid, b := range g.blocks {
		if b.HolderLayer != 3 && slices.Contains(in.Events, b.HolderEvent) {
			delete(g.blocks, bid)
			res.Blocks++
		}
	}
	for tid, t := range g.triples {
		if len(t.Sources) == 0 {
			continue
		}
		kept := slices.DeleteFunc(append([]int64{}, t.Sources...), func(s int64) bool { return slices.Contains(in.Events, s) })
		switch {
		case len(kept) == 0:
			delete(g.triples, tid)
			res.Triples++
		case len(kept) < len(t.Sources):
			t.Sources = kept
			res.Trimmed++
		}
	}
	writeJSON(w, http.StatusOK, res)
}

// fakeBackup is the fake's JSON export.
type fakeBackup struct {
	Version  int             `json:"version"`
	Entities []client.Entity `json:"entities"`
	Triples  []client.Triple `json:"triples"`
	Scenes   []client.Scene  `json:"scenes"`
}

// mcpRecord is one line of the MCP memory server's JSONL format.
type mcpRecord struct {
	Type         string   `json:"type"`
	Name         string   `json:"name,omitempty"`
	EntityType   string   `json:"entityType,omitempty"`
	Observations []string `json:"observations,omitempty"`
	From         string   `json:"from,omitempty"`
	To           string   `json:"to,omitempty"`
	RelationType string   `json:"relationType,omitempty"`
}

func (f *Fake) export(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !checkQuery(w, q, "format", "include_secrets") {
		return
	}
	format := q.Get("format")
	if format == "" {
		format = client.FormatJSON
	}
	types := map[string]string{client.FormatJSON: "application/json", client.FormatJSONL: "application/x-ndjson",
		client.FormatMarkdown: "application/x-tar"}
	ct, ok := types[format]
	if !ok {
		WriteError(w, http.StatusBadRequest, "format must be json, jsonl or markdown, got "+strconv.Quote(format))
		return
	}
	f.mu.Lock()
	g := f.g()
	body, canned := g.exports[format]
	ents, triples := g.sortedEntities(), g.sortedTriples()
	scenes := append([]client.Scene{}, g.scenes...)
	f.mu.Unlock()
	if !canned {
		var buf bytes.Buffer
		switch format {
		case client.FormatJSON:
			_ = json.NewEncoder(&buf).Encode(fakeBackup{Version: 1, Entities: ents, Triples: triples, Scenes: scenes})
		case client.FormatJSONL:
			enc := json.NewEncoder(&buf)
			for _, e := range ents {
				rec := mcpRecord{Type: "entity", Name: e.Name, EntityType: e.Kind, Observations: []string{}}
				if e.Text != "" {
					rec.Observations = []string{e.Text}
				}
				_ = enc.Encode(rec)
			}
			for _, t := range triples {
				if current(t) {
					_ = enc.Encode(mcpRecord{Type: "relation", From: t.SubjectName, To: t.ObjectName, RelationType: t.Predicate})
				}
			}
		case client.FormatMarkdown:
			tw := tar.NewWriter(&buf)
			for _, e := range ents {
				md := "# " + e.Name + "\n\nkind: " + e.Kind + "\n\n" + e.Text + "\n"
				for _, t := range triples {
					if t.Subject == e.ID && current(t) {
						md += "\n- " + t.Predicate + " " + t.ObjectName
					}
				}
				name := "entities/" + strings.NewReplacer("/", "_", "\\", "_").Replace(e.Name) + ".md"
				_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(md)), ModTime: e.Updated, Typeflag: tar.TypeReg})
				_, _ = tw.Write([]byte(md))
			}
			_ = tw.Close()
		}
		body = buf.Bytes()
	}
	w.Header().Set("Content-Type", ct)
	ext := map[string]string{client.FormatJSON: "json", client.FormatJSONL: "jsonl", client.FormatMarkdown: "tar"}[format]
	w.Header().Set("Content-Disposition", `attachment; filename="hologram-memory.`+ext+`"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func (f *Fake) importMemory(w http.ResponseWriter, r *http.Request, body []byte) {
	q := r.URL.Query()
	if !checkQuery(w, q, "format") {
		return
	}
	format := q.Get("format")
	if format == "" {
		format = client.FormatJSON
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.g()
	var rep client.ImportReport
	switch format {
	case client.FormatJSON:
		var b fakeBackup
		if err := json.Unmarshal(body, &b); err != nil {
			WriteError(w, http.StatusBadRequest, "import json: "+err.Error())
			return
		}
		if len(g.entities) > 0 {
			WriteError(w, http.StatusBadRequest, "import json: memory is not empty")
			return
		}
		for _, e := range b.Entities {
			e := e
			g.entities[e.ID] = &e
			g.nextID = max(g.nextID, e.ID)
			rep.Entities++
		}
		for _, t := range b.Triples {
			t := t
			g.triples[t.ID] = &t
			g.nextID = max(g.nextID, t.ID)
			rep.Triples++
		}
		g.scenes = append(g.scenes, b.Scenes...)
		rep.Scenes = len(b.Scenes)
	case client.FormatJSONL:
		sc := bufio.NewScanner(bytes.NewReader(body))
		for line := 1; sc.Scan(); line++ {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var rec mcpRecord
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				WriteError(w, http.StatusBadRequest, fmt.Sprintf("import jsonl: line %d: %v", line, err))
				return
			}
			switch rec.Type {
			case "entity":
				if g.byName(rec.Name) != nil {
					rep.Skipped++
					continue
				}
				f.newEntity(rec.Name, rec.EntityType, strings.Join(rec.Observations, "\n"), "", "import")
				rep.Entities++
			case "relation":
				if s, o := g.byName(rec.From), g.byName(rec.To); s != nil && o != nil && slices.ContainsFunc(g.sortedTriples(), func(t client.Triple) bool {
					return current(t) && t.Subject == s.ID && t.Object == o.ID && t.Predicate == rec.RelationType
				}) {
					rep.Skipped++
					continue
				}
				before := len(g.entities)
				f.storeTriple(client.TripleInput{Subject: rec.From, Predicate: rec.RelationType, Object: rec.To}, nil, "import")
				rep.Entities += len(g.entities) - before // entities a relation names are created when missing
				rep.Triples++
			default:
				WriteError(w, http.StatusBadRequest, fmt.Sprintf("import jsonl: line %d: unknown type %q", line, rec.Type))
				return
			}
		}
	default:
		WriteError(w, http.StatusBadRequest, "format must be json or jsonl, got "+strconv.Quote(format))
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
