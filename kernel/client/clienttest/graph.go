package clienttest

import (
	"cmp"
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
