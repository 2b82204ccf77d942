package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Retries of /v1/chat/completions (docs/api.md): OpenAI's SDKs retry a request that failed
// (a 408, 409, 429 or 5xx answer, or a dropped connection) up to twice, with the same
// Idempotency-Key and X-Stainless-Retry-Count 1, 2. A turn runs tools; running it again would
// repeat their effects. So a retry is answered from its first attempt: the same status, headers
// and body, success or error, without a second turn. A retry that comes while the first attempt
// still runs waits for it. Requests are recognised by Idempotency-Key, or, without one (the
// official openai npm client sends none, only the count), by X-Stainless-Retry-Count and the
// body: a count of 0 is a first attempt (kept for its retries, replacing an earlier one with
// the same body), a count of 1 or more a retry of the last one. An identical request without
// either header, or with a count of 0, is a new turn (a regenerate).
const (
	replayTTL      = 10 * time.Minute // how long a first attempt is kept for its retries
	replayEntries  = 128              // first attempts kept at most (the oldest go first)
	replayMaxBytes = 4 << 20          // a longer answer is not kept: its retry runs again
	replayBudget   = 32 << 20         // all the answers kept (the oldest go first past it)
)

type replayCache struct {
	mu      sync.Mutex
	entries map[string]*replayEntry
	order   []string // keys, oldest first
	size    int      // bytes of the answers kept
}

type replayEntry struct {
	done   chan struct{} // closed when the first attempt has answered
	at     time.Time
	ok     bool // the answer was kept whole (not cancelled, not too long)
	status int
	header http.Header
	body   []byte
	kept   int // bytes counted in the cache's size (set under its lock)
}

// replayKey is the key of a request, "" when it is neither keyed nor counted; fresh says it is
// a first attempt by its count (0), which replaces any earlier one of the same key. The bearer
// token is part of the key, so one client can never be answered with another's result.
func replayKey(r *http.Request, body []byte) (key string, fresh bool) {
	key = strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	if len(key) > 256 {
		return "", false
	}
	if key == "" {
		n, err := strconv.Atoi(strings.TrimSpace(r.Header.Get("X-Stainless-Retry-Count")))
		if err != nil || n < 0 {
			return "", false
		}
		sum := sha256.Sum256(body)
		key, fresh = "body:"+hex.EncodeToString(sum[:]), n == 0
	}
	sum := sha256.Sum256([]byte(r.Header.Get("Authorization") + "\x00" + r.URL.Path + "\x00" + key))
	return hex.EncodeToString(sum[:]), fresh
}

// begin returns the entry of key and whether this request is its first attempt (then the caller
// must call finish). A fresh request is always a first attempt.
func (c *replayCache) begin(key string, fresh bool, now time.Time) (*replayEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*replayEntry{}
	}
	for len(c.order) > 0 {
		e := c.entries[c.order[0]]
		if e != nil && len(c.order) <= replayEntries && c.size <= replayBudget && now.Sub(e.at) < replayTTL {
			break
		}
		c.forget(c.order[0])
		c.order = c.order[1:]
	}
	if e, ok := c.entries[key]; ok && !fresh {
		return e, false
	} else if ok {
		c.forget(key)
		c.order = slices.DeleteFunc(c.order, func(k string) bool { return k == key })
	}
	e := &replayEntry{done: make(chan struct{}), at: now}
	c.entries[key] = e
	c.order = append(c.order, key)
	return e, true
}

// forget drops the entry of key and its bytes; c.mu must be held.
func (c *replayCache) forget(key string) {
	if e := c.entries[key]; e != nil {
		c.size -= e.kept
	}
	delete(c.entries, key)
}

// finish records the first attempt's answer (kept only when ok) and releases its retries. An
// answer not kept is forgotten, so that a later retry runs the turn.
func (c *replayCache) finish(key string, e *replayEntry, rec *replayWriter, ok bool) {
	e.ok = ok && !rec.overflow
	c.mu.Lock()
	switch {
	case e.ok:
		e.status, e.header, e.body = rec.code(), rec.Header().Clone(), rec.buf.Bytes()
		if c.entries[key] == e { // still kept (not evicted or replaced meanwhile)
			e.kept = len(e.body)
			c.size += e.kept
		}
	case c.entries[key] == e:
		c.forget(key)
	}
	c.mu.Unlock()
	close(e.done)
}

// replay writes a first attempt's answer.
func (e *replayEntry) replay(w http.ResponseWriter) {
	for k, v := range e.header {
		w.Header()[k] = v
	}
	w.Header().Set("X-Hologram-Replayed", "true")
	w.WriteHeader(e.status)
	_, _ = w.Write(e.body)
}

// replayWriter passes an answer through and keeps a copy of it (up to replayMaxBytes).
type replayWriter struct {
	http.ResponseWriter
	status   int
	buf      bytes.Buffer
	overflow bool
}

func (w *replayWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *replayWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if !w.overflow {
		if w.buf.Len()+len(p) > replayMaxBytes {
			w.overflow = true
			w.buf = bytes.Buffer{}
		} else {
			w.buf.Write(p)
		}
	}
	return w.ResponseWriter.Write(p)
}

func (w *replayWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// Flush and Unwrap keep streaming working through the writer.
func (w *replayWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *replayWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
