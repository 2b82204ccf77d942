package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hologramagent/hologram/kernel/client"
)

// MaxImportBytes bounds the body of POST /api/v1/memory/import (a whole backup); every other
// route keeps [Options.MaxBodyBytes].
const MaxImportBytes = 1 << 30

// importLimit is the import body limit: MaxImportBytes, lowered by tests.
var importLimit = func() *atomic.Int64 {
	var n atomic.Int64
	n.Store(MaxImportBytes)
	return &n
}()

// exportFormats are the export formats with their content type and file name.
var exportFormats = map[string]struct{ contentType, file string }{
	client.FormatJSON:     {"application/json", "hologram-memory.json"},
	client.FormatJSONL:    {"application/x-ndjson", "hologram-memory.jsonl"},
	client.FormatMarkdown: {"application/x-tar", "hologram-memory.tar"},
}

// parseID parses a path or body id: a positive integer.
func parseID(what, v string) (int64, *requestError) {
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, badRequest("%s must be a positive integer, got %q", what, v)
	}
	return id, nil
}

// parseBool parses a boolean query parameter: 1, true, 0 or false (any case).
func parseBool(q url.Values, name string) (bool, *requestError) {
	if !q.Has(name) {
		return false, nil
	}
	v := q.Get(name)
	switch strings.ToLower(v) {
	case "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	}
	return false, badRequest("%s must be 1, true, 0 or false, got %q", name, v)
}

// checkScopeField refuses a scope that is neither empty nor private, public or group:<id>.
func checkScopeField(name, scope string) *requestError {
	if scope != "" && client.CheckScope(scope) != nil {
		return badRequest("%s must be private, public or group:<id>, got %q", name, scope)
	}
	return nil
}

// noBody refuses a request body on a route that takes none.
func noBody(r *http.Request, what string) *requestError {
	if r.ContentLength > 0 {
		return badRequest("%s takes no body", what)
	}
	return nil
}

// parseGraphQuery validates the query of GET /api/v1/memory/graph.
func parseGraphQuery(q url.Values) (client.GraphQuery, *requestError) {
	if err := checkQuery(q, "scope", "history", "after", "limit", "events", "scene"); err != nil {
		return client.GraphQuery{}, err
	}
	gq := client.GraphQuery{After: q.Get("after"), Scene: q.Get("scene")}
	if q.Has("scene") && strings.TrimSpace(gq.Scene) == "" {
		return client.GraphQuery{}, badRequest("scene is empty: give a scene key (GET /api/v1/memory/scenes lists them)")
	}
	if q.Has("scope") {
		gq.Scope = q.Get("scope")
		if client.CheckScope(gq.Scope) != nil {
			return client.GraphQuery{}, badRequest("scope must be private, public or group:<id>, got %q", gq.Scope)
		}
	}
	var err *requestError
	if gq.History, err = parseBool(q, "history"); err != nil {
		return client.GraphQuery{}, err
	}
	if q.Has("limit") {
		v := q.Get("limit")
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 1 || n > client.MaxGraphLimit {
			return client.GraphQuery{}, badRequest("limit must be an integer from 1 to %d, got %q", client.MaxGraphLimit, v)
		}
		gq.Limit = n
	}
	if q.Has("events") {
		v := q.Get("events")
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 0 || n > client.MaxGraphEvents {
			return client.GraphQuery{}, badRequest("events must be an integer from 0 to %d, got %q", client.MaxGraphEvents, v)
		}
		gq.Events = n
	}
	return gq, nil
}

// handleGraph answers GET /api/v1/memory/graph with a [client.GraphPage].
func (s *Server) handleGraph(w http.ResponseWriter, r *http.Request) {
	gq, rerr := parseGraphQuery(r.URL.Query())
	if rerr != nil {
		s.writeError(w, r, rerr.status, rerr.msg)
		return
	}
	page, err := s.b.Graph(r.Context(), gq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if page.Entities == nil {
		page.Entities = []client.Entity{}
	}
	if page.Triples == nil {
		page.Triples = []client.Triple{}
	}
	for i := range page.Triples {
		fillTriple(&page.Triples[i])
	}
	writeJSON(w, http.StatusOK, page)
}

// fillTriple makes a triple's lists non-null.
func fillTriple(t *client.Triple) {
	if t.Sources == nil {
		t.Sources = []int64{}
	}
}

// pathID parses the {id} path value; on failure it answers 400 and returns false.
func (s *Server) pathID(w http.ResponseWriter, r *http.Request, what string) (int64, bool) {
	id, err := parseID(what+" id", r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err.status, err.msg)
		return 0, false
	}
	return id, true
}

// handleEventContext answers GET /api/v1/memory/events/{id}?radius=N with the event and its
// neighbours: {"events":[…]}.
func (s *Server) handleEventContext(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := checkQuery(q, "radius"); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	id, ok := s.pathID(w, r, "event")
	if !ok {
		return
	}
	radius := 0
	if q.Has("radius") {
		v := q.Get("radius")
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > client.MaxContextRadius {
			s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("radius must be an integer from 0 to %d, got %q", client.MaxContextRadius, v))
			return
		}
		radius = n
	}
	evs, err := s.b.EventContext(r.Context(), id, radius)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if evs == nil {
		evs = []client.MemoryHit{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": evs})
}

// handleEntity answers GET /api/v1/memory/entities/{id} with a [client.EntityDetail].
func (s *Server) handleEntity(w http.ResponseWriter, r *http.Request) {
	if err := checkQuery(r.URL.Query()); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	id, ok := s.pathID(w, r, "entity")
	if !ok {
		return
	}
	d, err := s.b.Entity(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if d.Triples == nil {
		d.Triples = []client.Triple{}
	}
	for i := range d.Triples {
		fillTriple(&d.Triples[i])
	}
	if d.Blocks == nil {
		d.Blocks = []client.Block{}
	}
	writeJSON(w, http.StatusOK, d)
}

// decodeEntity reads an entity body: only name, kind, text and scope are used (the other fields
// of [client.Entity] are accepted so that a fetched entity can be sent back, and ignored).
func (s *Server) decodeEntity(w http.ResponseWriter, r *http.Request) (client.Entity, *requestError) {
	var in client.Entity
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		return client.Entity{}, err
	}
	if strings.TrimSpace(in.Name) == "" {
		return client.Entity{}, badRequest("entity name is empty")
	}
	if err := checkScopeField("scope", in.Scope); err != nil {
		return client.Entity{}, err
	}
	return client.Entity{ID: in.ID, Name: in.Name, Kind: in.Kind, Text: in.Text, Scope: in.Scope}, nil
}

// handleCreateEntity answers POST /api/v1/memory/entities with the new entity (201).
func (s *Server) handleCreateEntity(w http.ResponseWriter, r *http.Request) {
	in, rerr := s.decodeEntity(w, r)
	if rerr != nil {
		s.writeError(w, r, rerr.status, rerr.msg)
		return
	}
	if in.ID != 0 {
		s.writeError(w, r, http.StatusBadRequest,
			fmt.Sprintf("a new entity has no id (got %d): edit one with PUT /api/v1/memory/entities/{id}", in.ID))
		return
	}
	out, err := s.b.PutEntity(r.Context(), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

// handlePutEntity answers PUT /api/v1/memory/entities/{id} with the edited entity.
func (s *Server) handlePutEntity(w http.ResponseWriter, r *http.Request) {
	id, ok := s.pathID(w, r, "entity")
	if !ok {
		return
	}
	in, rerr := s.decodeEntity(w, r)
	if rerr != nil {
		s.writeError(w, r, rerr.status, rerr.msg)
		return
	}
	if in.ID != 0 && in.ID != id {
		s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("body id %d differs from the path's %d", in.ID, id))
		return
	}
	in.ID = id
	out, err := s.b.PutEntity(r.Context(), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handleDeleteEntity answers DELETE /api/v1/memory/entities/{id} with 204.
func (s *Server) handleDeleteEntity(w http.ResponseWriter, r *http.Request) {
	id, ok := s.pathID(w, r, "entity")
	if !ok {
		return
	}
	if err := s.b.DeleteEntity(r.Context(), id); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// mergeRequest is the body of POST /api/v1/memory/entities/{id}/merge.
type mergeRequest struct {
	From int64 `json:"from"`
}

// handleMergeEntities answers POST /api/v1/memory/entities/{id}/merge with the merged entity.
func (s *Server) handleMergeEntities(w http.ResponseWriter, r *http.Request) {
	into, ok := s.pathID(w, r, "entity")
	if !ok {
		return
	}
	var in mergeRequest
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	switch {
	case in.From <= 0:
		s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("from must be a positive entity id, got %d", in.From))
		return
	case in.From == into:
		s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("cannot merge entity %d into itself", into))
		return
	}
	out, err := s.b.MergeEntities(r.Context(), into, in.From)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// decodeTriple reads and checks a [client.TripleInput].
func (s *Server) decodeTriple(w http.ResponseWriter, r *http.Request) (client.TripleInput, *requestError) {
	var in client.TripleInput
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		return client.TripleInput{}, err
	}
	for _, f := range []struct{ name, v string }{{"subject", in.Subject}, {"predicate", in.Predicate}, {"object", in.Object}} {
		if strings.TrimSpace(f.v) == "" {
			return client.TripleInput{}, badRequest("triple %s is empty", f.name)
		}
	}
	if err := checkScopeField("scope", in.Scope); err != nil {
		return client.TripleInput{}, err
	}
	return in, nil
}

// handleAddTriple answers POST /api/v1/memory/triples with the new triple (201).
func (s *Server) handleAddTriple(w http.ResponseWriter, r *http.Request) {
	in, rerr := s.decodeTriple(w, r)
	if rerr != nil {
		s.writeError(w, r, rerr.status, rerr.msg)
		return
	}
	out, err := s.b.AddTriple(r.Context(), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	fillTriple(&out)
	writeJSON(w, http.StatusCreated, out)
}

// handleEditTriple answers PUT /api/v1/memory/triples/{id} with the triple that supersedes it.
func (s *Server) handleEditTriple(w http.ResponseWriter, r *http.Request) {
	id, ok := s.pathID(w, r, "triple")
	if !ok {
		return
	}
	in, rerr := s.decodeTriple(w, r)
	if rerr != nil {
		s.writeError(w, r, rerr.status, rerr.msg)
		return
	}
	out, err := s.b.EditTriple(r.Context(), id, in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	fillTriple(&out)
	writeJSON(w, http.StatusOK, out)
}

// checkPin validates a [client.PinRequest].
func checkPin(p client.PinRequest) *requestError {
	switch p.Kind {
	case "entity", "triple":
		if p.ID <= 0 {
			return badRequest("pin %s: id must be a positive integer, got %d", p.Kind, p.ID)
		}
		if p.Block != "" || p.Entity != 0 {
			return badRequest("pin %s: block and entity are for pinning a block", p.Kind)
		}
	case "block":
		if strings.TrimSpace(p.Block) == "" {
			return badRequest("pin block: block is empty")
		}
		if p.ID != 0 {
			return badRequest("pin block: give the block's id in block, not id")
		}
		if p.Entity < 0 {
			return badRequest("pin block: entity must be a positive id (or absent for a new note), got %d", p.Entity)
		}
	default:
		return badRequest("pin kind must be entity, triple or block, got %q", p.Kind)
	}
	return nil
}

// handlePin answers POST /api/v1/memory/pin with 204.
func (s *Server) handlePin(w http.ResponseWriter, r *http.Request) {
	var in client.PinRequest
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if err := checkPin(in); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if err := s.b.Pin(r.Context(), in); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// forgetRequest is the body of POST /api/v1/memory/forget.
type forgetRequest struct {
	Events []int64 `json:"events"`
}

// handleForget answers POST /api/v1/memory/forget with a [client.ForgetResult].
func (s *Server) handleForget(w http.ResponseWriter, r *http.Request) {
	var in forgetRequest
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if n := len(in.Events); n < 1 || n > client.MaxForgetEvents {
		s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("events must hold 1 to %d event ids, got %d", client.MaxForgetEvents, n))
		return
	}
	for _, id := range in.Events {
		if id <= 0 {
			s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("event ids must be positive integers, got %d", id))
			return
		}
	}
	out, err := s.b.Forget(r.Context(), in.Events)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handleScenes answers GET /api/v1/memory/scenes with {"scenes": [client.Scene…]}.
func (s *Server) handleScenes(w http.ResponseWriter, r *http.Request) {
	if err := checkQuery(r.URL.Query()); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	ss, err := s.b.Scenes(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ss == nil {
		ss = []client.Scene{}
	}
	for i := range ss {
		if ss[i].Features == nil {
			ss[i].Features = map[string]float64{}
		}
	}
	writeJSON(w, http.StatusOK, struct {
		Scenes []client.Scene `json:"scenes"`
	}{ss})
}
