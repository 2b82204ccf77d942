package clienttest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// The fake's graph edits: entities, triples, merges, pins and forgetting, as the kernel's
// /api/v1/memory routes answer them.

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
