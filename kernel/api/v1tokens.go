package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// /v1 client tokens (docs/api.md): besides the owner's token (homed --token-file), the owner
// gives each OpenAI-compatible app its own named token (`waiter token add NAME [--owner]`),
// stored as its SHA-256 in the settings. Such a token reaches /v1 only. An owner token runs a
// request without `user` in the owner's scope; any other runs it in the token's own scope,
// group:token:<name>, and its conversations' sessions are its own. A request with `user` runs in
// scope user:<id> whatever the token.

// Settings is where the /v1 client tokens are kept (the store's settings table).
type Settings interface {
	ListSettings(ctx context.Context, prefix string) (map[string]string, error)
	SetSetting(ctx context.Context, key, value string) error
	DeleteSetting(ctx context.Context, key string) error
}

const (
	apiTokenPrefix = "api.token." // settings key prefix: api.token.<name> holds a storedToken
	// APITokenPrefix starts every /v1 client token, so a token pasted in the wrong place is
	// recognisable.
	APITokenPrefix = "v1_"
	maxAPITokens   = 256
)

var apiTokenNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,47}$`)

// storedToken is what the kernel keeps of a token: never the token, only its SHA-256.
type storedToken struct {
	Name    string    `json:"name"`
	SHA256  string    `json:"sha256"`
	Owner   bool      `json:"owner"`
	Created time.Time `json:"created"`
}

// v1Client is who a /v1 request comes from: the owner (the owner's token, the socket) or a
// named client token.
type v1Client struct {
	name  string // "" for the owner's own token
	owner bool
}

type v1ClientKey struct{}

// clientOf is the /v1 client of a request (the owner when no named token authorised it).
func clientOf(r *http.Request) v1Client {
	if c, ok := r.Context().Value(v1ClientKey{}).(v1Client); ok {
		return c
	}
	return v1Client{owner: true}
}

// apiTokens holds the loaded tokens by name, with their hashes.
type apiTokens struct {
	settings Settings
	mu       sync.Mutex
	loaded   bool
	tokens   map[string]storedToken
	hashes   map[string][sha256.Size]byte
}

// load reads the tokens once; a damaged entry is skipped. c.mu must be held.
func (c *apiTokens) load(ctx context.Context) error {
	if c.loaded {
		return nil
	}
	if c.settings == nil {
		return fmt.Errorf("%w: this kernel keeps no /v1 client tokens", client.ErrUnavailable)
	}
	raw, err := c.settings.ListSettings(ctx, apiTokenPrefix)
	if err != nil {
		return fmt.Errorf("loading the /v1 client tokens: %w", err)
	}
	c.tokens, c.hashes = map[string]storedToken{}, map[string][sha256.Size]byte{}
	for k, v := range raw {
		var st storedToken
		if json.Unmarshal([]byte(v), &st) != nil || st.Name != strings.TrimPrefix(k, apiTokenPrefix) {
			continue
		}
		h, err := hex.DecodeString(st.SHA256)
		if err != nil || len(h) != sha256.Size {
			continue
		}
		c.tokens[st.Name], c.hashes[st.Name] = st, [sha256.Size]byte(h)
	}
	c.loaded = true
	return nil
}

// lookup finds the token's client, comparing every hash in constant time.
func (c *apiTokens) lookup(ctx context.Context, token string) (v1Client, bool) {
	if !strings.HasPrefix(token, APITokenPrefix) {
		return v1Client{}, false
	}
	h := sha256.Sum256([]byte(token))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.load(ctx) != nil {
		return v1Client{}, false
	}
	var found v1Client
	ok := false
	for name, want := range c.hashes {
		if subtle.ConstantTimeCompare(h[:], want[:]) == 1 {
			found, ok = v1Client{name: name, owner: c.tokens[name].Owner}, true
		}
	}
	return found, ok
}

func (st storedToken) client() client.APIToken {
	scope := "private"
	if !st.Owner {
		scope = "group:" + tokenGroup(st.Name)
	}
	return client.APIToken{Name: st.Name, Owner: st.Owner, Scope: scope, Created: st.Created}
}

// tokenGroup is the group of a non-owner token's requests without `user`.
func tokenGroup(name string) string { return "token:" + name }

func (c *apiTokens) list(ctx context.Context) ([]client.APIToken, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.load(ctx); err != nil {
		return nil, err
	}
	out := make([]client.APIToken, 0, len(c.tokens))
	for _, st := range c.tokens {
		out = append(out, st.client())
	}
	slices.SortFunc(out, func(a, b client.APIToken) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (c *apiTokens) add(ctx context.Context, name string, owner bool) (client.APIToken, error) {
	name = strings.TrimSpace(name)
	if !apiTokenNameRe.MatchString(name) {
		return client.APIToken{}, fmt.Errorf("%w: token name %q: want lower-case letters, digits and . _ - (at most 48, starting with a letter or digit)", client.ErrInvalid, clipModel(name))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.load(ctx); err != nil {
		return client.APIToken{}, err
	}
	if _, ok := c.tokens[name]; ok {
		return client.APIToken{}, fmt.Errorf("%w: token %q exists (remove it with `waiter token remove %s` to give the client a new one)", client.ErrInvalid, name, name)
	}
	if len(c.tokens) >= maxAPITokens {
		return client.APIToken{}, fmt.Errorf("%w: at most %d /v1 client tokens (remove one with `waiter token remove NAME`)", client.ErrInvalid, maxAPITokens)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return client.APIToken{}, fmt.Errorf("token: %w", err)
	}
	token := APITokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	h := sha256.Sum256([]byte(token))
	st := storedToken{Name: name, SHA256: hex.EncodeToString(h[:]), Owner: owner, Created: time.Now().UTC().Truncate(time.Second)}
	raw, _ := json.Marshal(st)
	if err := c.settings.SetSetting(ctx, apiTokenPrefix+name, string(raw)); err != nil {
		return client.APIToken{}, fmt.Errorf("storing token %q: %w", name, err)
	}
	c.tokens[name], c.hashes[name] = st, h
	out := st.client()
	out.Token = token
	return out, nil
}

func (c *apiTokens) remove(ctx context.Context, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.load(ctx); err != nil {
		return err
	}
	if _, ok := c.tokens[name]; !ok {
		return fmt.Errorf("%w: no /v1 client token %q (see `waiter token list`)", client.ErrNotFound, clipModel(name))
	}
	if err := c.settings.DeleteSetting(ctx, apiTokenPrefix+name); err != nil {
		if left, lerr := c.settings.ListSettings(ctx, apiTokenPrefix+name); lerr != nil || left[apiTokenPrefix+name] != "" {
			return fmt.Errorf("removing token %q: %w", name, err)
		} // already gone from the store
	}
	delete(c.tokens, name)
	delete(c.hashes, name)
	return nil
}

// v1Path reports whether a client token may reach the path: /v1 only.
func v1Path(p string) bool { return p == "/v1" || strings.HasPrefix(p, "/v1/") }

// clientToken authorises a request carrying a /v1 client token: it returns the request with
// its client, or answers 403 when the path is not /v1. ok is false when the token is none.
func (s *Server) clientToken(w http.ResponseWriter, r *http.Request, token string) (*http.Request, bool, bool) {
	c, ok := s.tokens.lookup(r.Context(), token)
	if !ok {
		return r, false, false
	}
	if !v1Path(r.URL.Path) {
		w.Header().Set("Connection", "close") // refused: the connection is not reused (ServeHTTP's refuse)
		s.writeError(w, r, http.StatusForbidden, fmt.Sprintf("token %q is a /v1 client token: it reaches /v1/chat/completions and /v1/models only, not %s", c.name, clip(r.URL.Path)))
		return r, true, false
	}
	return r.WithContext(context.WithValue(r.Context(), v1ClientKey{}, c)), true, true
}

func (s *Server) tokenRoutes() {
	s.mux.HandleFunc("GET /api/v1/tokens", s.handleAPITokens)
	s.mux.HandleFunc("POST /api/v1/tokens", s.handleAddAPIToken)
	s.mux.HandleFunc("DELETE /api/v1/tokens/{name}", s.handleRemoveAPIToken)
}

func (s *Server) handleAPITokens(w http.ResponseWriter, r *http.Request) {
	ts, err := s.tokens.list(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Tokens []client.APIToken `json:"tokens"`
	}{ts})
}

func (s *Server) handleAddAPIToken(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name  string `json:"name"`
		Owner bool   `json:"owner"`
	}
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	t, err := s.tokens.add(r.Context(), in.Name, in.Owner)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("api: /v1 client token added", "name", t.Name, "owner", t.Owner)
	writeJSON(w, http.StatusCreated, t)
}

func (s *Server) handleRemoveAPIToken(w http.ResponseWriter, r *http.Request) {
	if err := s.tokens.remove(r.Context(), r.PathValue("name")); err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("api: /v1 client token removed", "name", r.PathValue("name"))
	w.WriteHeader(http.StatusNoContent)
}
