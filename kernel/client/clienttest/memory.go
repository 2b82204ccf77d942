package clienttest

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/client"
)

// fakeBudget is the token budget of the windows the fake derives from history.
const fakeBudget = 4096

// SetWindow makes GET /api/v1/window?session=w.Session answer w instead of the window the fake
// derives from the session's history (every message pinned).
func (f *Fake) SetWindow(w client.Window) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.windows[w.Session] = w
}

// AddMemory adds recallable events to the fake's memory. Memory search looks at them and at every
// session's history (as layer 1 events of the session's scope).
func (f *Fake) AddMemory(hits ...client.MemoryHit) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.memory = append(f.memory, hits...)
}

// checkQuery refuses unknown and repeated query parameters as the kernel does.
func checkQuery(w http.ResponseWriter, q url.Values, known ...string) bool {
	for name, vs := range q {
		if !slices.Contains(known, name) {
			WriteError(w, http.StatusBadRequest, "unknown query parameter "+strconv.Quote(name))
			return false
		}
		if len(vs) > 1 {
			WriteError(w, http.StatusBadRequest, "query parameter "+strconv.Quote(name)+" given more than once")
			return false
		}
	}
	return true
}

func (f *Fake) window(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !checkQuery(w, q, "session") {
		return
	}
	id := q.Get("session")
	if strings.TrimSpace(id) == "" {
		WriteError(w, http.StatusBadRequest, "session is required")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.sessions[id]; !ok {
		WriteError(w, http.StatusNotFound, "unknown session "+strconv.Quote(id))
		return
	}
	if win, ok := f.windows[id]; ok {
		if win.Items == nil {
			win.Items = []client.WindowItem{}
		}
		writeJSON(w, http.StatusOK, win)
		return
	}
	win := client.Window{Session: id, Budget: fakeBudget, Items: []client.WindowItem{}}
	for _, m := range f.history[id] {
		tok := fakeTokens(m.Content)
		win.Items = append(win.Items, client.WindowItem{ID: m.ID, Time: m.Time, Role: m.Role, Content: m.Content,
			Tokens: tok, Score: 1, Reason: "recent", Source: "pinned"})
		win.Used += tok
		win.Pinned++
		if m.Role == "user" {
			win.Input = m.Content
		}
	}
	writeJSON(w, http.StatusOK, win)
}

// fakeTokens estimates tokens as one per four runes, at least one.
func fakeTokens(s string) int {
	return utf8.RuneCountInString(s)/4 + 1
}

func (f *Fake) searchMemory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !checkQuery(w, q, "q", "session", "k", "scope", "layer") {
		return
	}
	mq := client.MemoryQuery{Text: q.Get("q"), Session: q.Get("session"), K: client.DefaultMemoryK, Scope: q.Get("scope")}
	if strings.TrimSpace(mq.Text) == "" {
		WriteError(w, http.StatusBadRequest, "q is required")
		return
	}
	if q.Has("k") {
		k, err := strconv.Atoi(q.Get("k"))
		if err != nil || k < 1 || k > client.MaxMemoryK {
			WriteError(w, http.StatusBadRequest, "k must be an integer from 1 to 100, got "+strconv.Quote(q.Get("k")))
			return
		}
		mq.K = k
	}
	if q.Has("scope") && client.CheckScope(mq.Scope) != nil {
		WriteError(w, http.StatusBadRequest, "scope must be private, public or group:<id>, got "+strconv.Quote(mq.Scope))
		return
	}
	if q.Has("layer") {
		l, err := strconv.Atoi(q.Get("layer"))
		if err != nil || l < 0 || l > 2 {
			WriteError(w, http.StatusBadRequest, "layer must be 0 (both), 1 or 2, got "+strconv.Quote(q.Get("layer")))
			return
		}
		mq.Layer = l
	}

	f.mu.Lock()
	view := client.ScopePrivate
	if mq.Session != "" {
		s, ok := f.sessions[mq.Session]
		if !ok {
			f.mu.Unlock()
			WriteError(w, http.StatusNotFound, "unknown session "+strconv.Quote(mq.Session))
			return
		}
		if s.Scope != "" {
			view = s.Scope
		}
	}
	corpus := append([]client.MemoryHit(nil), f.memory...)
	for id, h := range f.history {
		s := f.sessions[id]
		scope := s.Scope
		if scope == "" {
			scope = client.ScopePrivate
		}
		for _, m := range h {
			corpus = append(corpus, client.MemoryHit{ID: m.ID, Session: id, Time: m.Time, Role: m.Role,
				Channel: s.Channel, Partner: s.Partner, Scope: scope, Layer: 1, Content: m.Content})
		}
	}
	f.mu.Unlock()

	terms := strings.Fields(strings.ToLower(mq.Text))
	hits := []client.MemoryHit{}
	for _, h := range corpus {
		if !visible(view, h.Scope) || (mq.Scope != "" && h.Scope != mq.Scope) || (mq.Layer != 0 && h.Layer != mq.Layer) {
			continue
		}
		content := strings.ToLower(h.Content)
		n := 0
		for _, t := range terms {
			if strings.Contains(content, t) {
				n++
			}
		}
		if n == 0 {
			continue
		}
		h.Score = float64(n) / float64(len(terms))
		h.Reason = "fake: " + strconv.Itoa(n) + "/" + strconv.Itoa(len(terms)) + " terms"
		hits = append(hits, h)
	}
	slices.SortStableFunc(hits, func(a, b client.MemoryHit) int {
		switch {
		case a.Score != b.Score:
			if a.Score > b.Score {
				return -1
			}
			return 1
		case !a.Time.Equal(b.Time):
			return b.Time.Compare(a.Time)
		case a.Session != b.Session:
			return strings.Compare(a.Session, b.Session)
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if len(hits) > mq.K {
		hits = hits[:mq.K]
	}
	writeJSON(w, http.StatusOK, map[string]any{"hits": hits})
}

// visible reports whether a session of scope view may see an event of scope ev: the owner's
// ("private") sees everything, a group session public events and its group's, a public one
// public events.
func visible(view, ev string) bool {
	return view == client.ScopePrivate || ev == client.ScopePublic || ev == view
}
