package api

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// checkQuery refuses query parameters outside known (400 naming them, sorted) and parameters
// given more than once, as /api/v1 refuses unknown JSON fields. It returns nil when q is fine.
func checkQuery(q url.Values, known ...string) *requestError {
	var unknown []string
	for name, vs := range q {
		if !slices.Contains(known, name) {
			unknown = append(unknown, strconv.Quote(name))
			continue
		}
		if len(vs) > 1 {
			return badRequest("query parameter %q given %d times", name, len(vs))
		}
	}
	switch len(unknown) {
	case 0:
		return nil
	case 1:
		return badRequest("unknown query parameter %s", unknown[0])
	}
	slices.Sort(unknown)
	return badRequest("unknown query parameters %s", strings.Join(unknown, ", "))
}

// handleWindow answers GET /api/v1/window?session=ID with the session's [client.Window].
func (s *Server) handleWindow(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := checkQuery(q, "session"); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	session := q.Get("session")
	if strings.TrimSpace(session) == "" {
		s.writeError(w, r, http.StatusBadRequest, "session is required")
		return
	}
	win, err := s.b.Window(r.Context(), session)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if win.Items == nil {
		win.Items = []client.WindowItem{}
	}
	writeJSON(w, http.StatusOK, win)
}

// parseMemoryQuery validates the query of GET /api/v1/memory/search.
func parseMemoryQuery(q url.Values) (client.MemoryQuery, *requestError) {
	if err := checkQuery(q, "q", "session", "k", "scope", "layer"); err != nil {
		return client.MemoryQuery{}, err
	}
	mq := client.MemoryQuery{Text: q.Get("q"), Session: q.Get("session"), K: client.DefaultMemoryK}
	if strings.TrimSpace(mq.Text) == "" {
		return client.MemoryQuery{}, badRequest("q is required")
	}
	if q.Has("k") {
		v := q.Get("k")
		k, err := strconv.Atoi(v)
		if err != nil || k < 1 || k > client.MaxMemoryK {
			return client.MemoryQuery{}, badRequest("k must be an integer from 1 to %d, got %q", client.MaxMemoryK, v)
		}
		mq.K = k
	}
	if q.Has("scope") {
		mq.Scope = q.Get("scope")
		if err := client.CheckScope(mq.Scope); err != nil {
			return client.MemoryQuery{}, badRequest("scope must be private, public or group:<id>, got %q", mq.Scope)
		}
	}
	if q.Has("layer") {
		switch v := q.Get("layer"); v {
		case "0", "1", "2":
			mq.Layer = int(v[0] - '0')
		default:
			return client.MemoryQuery{}, badRequest("layer must be 0 (both), 1 or 2, got %q", v)
		}
	}
	return mq, nil
}

// handleSearchMemory answers GET /api/v1/memory/search with {"hits": [client.MemoryHit…]}.
func (s *Server) handleSearchMemory(w http.ResponseWriter, r *http.Request) {
	mq, rerr := parseMemoryQuery(r.URL.Query())
	if rerr != nil {
		s.writeError(w, r, rerr.status, rerr.msg)
		return
	}
	hits, err := s.b.SearchMemory(r.Context(), mq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if hits == nil {
		hits = []client.MemoryHit{}
	}
	writeJSON(w, http.StatusOK, struct {
		Hits []client.MemoryHit `json:"hits"`
	}{hits})
}
