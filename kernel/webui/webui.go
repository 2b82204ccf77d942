// Package webui is the kernel's web UI (docs/web.md, ARCHITECTURE.md §7): the page and its
// assets (hand-written HTML, CSS and JavaScript modules in assets/, embedded, no build step),
// served gzip-compressed with validators at / on the TCP listener, and the device sessions a
// browser signs in with.
//
// A browser signs in with the owner's API token (POST /api/v1/web/session) and gets a device
// session: an HttpOnly, SameSite=Strict cookie (Secure under TLS) with its own expiry, and a
// CSRF token its writes carry in X-CSRF-Token. kernel/api accepts the listener's same-origin
// requests that carry a live cookie ([UI.Authorize]) as the owner. Devices are kept in the
// kernel store's settings (key prefix "webui.device."), only a hash of each cookie's secret;
// the owner lists and revokes them at /api/v1/web/devices.
//
// Lifecycle: [New], then use the [UI] as an http.Handler. All methods are safe for concurrent use.
package webui

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/time/rate"
)

// Settings is the kernel store's key-value settings (memory.Store's part), where device
// sessions are kept.
type Settings interface {
	GetSetting(ctx context.Context, key string) (string, error)
	SetSetting(ctx context.Context, key, value string) error
	DeleteSetting(ctx context.Context, key string) error
	ListSettings(ctx context.Context, prefix string) (map[string]string, error)
}

// Defaults of [Options].
const (
	DefaultSessionTTL = 30 * 24 * time.Hour
	// DefaultSignInBurst sign-in attempts per client address, then one more every
	// DefaultSignInEvery.
	DefaultSignInBurst = 10
	DefaultSignInEvery = 6 * time.Second
	// MaxDevices bounds the signed-in devices: a sign-in past it is refused until the owner
	// revokes one.
	MaxDevices = 64
)

// CookieName is the device session cookie, "_PORT" added when the request's Host names a port
// (cookies are not kept apart by port: two kernels on one host would overwrite each other's);
// CSRFHeader is the header writes carry its CSRF token in.
const (
	CookieName = "hologram_session"
	CSRFHeader = "X-CSRF-Token"
)

// cookieName is the session cookie's name for r's host.
func cookieName(r *http.Request) string {
	if _, port, err := net.SplitHostPort(r.Host); err == nil && port != "" {
		return CookieName + "_" + port
	}
	return CookieName
}

const settingPrefix = "webui.device."

// Options configure a [UI]; Settings and Token are required.
type Options struct {
	Settings Settings
	// Token is the owner's API token, which signs a browser in.
	Token string
	// SessionTTL is how long a device session lives (<= 0: DefaultSessionTTL).
	SessionTTL time.Duration
	// SignInBurst and SignInEvery rate-limit sign-in attempts per client address (<= 0: defaults).
	SignInBurst int
	SignInEvery time.Duration
	Logger      *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Addr is the TCP listener's address (host:port) pairing links name; TLS says whether it
	// serves https, and Fingerprint is its certificate's SHA-256 fingerprint (pair.go).
	Addr        string
	TLS         bool
	Fingerprint string
}

// UI serves the web UI and its device sessions. Create it with [New].
type UI struct {
	set    Settings
	token  string
	ttl    time.Duration
	log    *slog.Logger
	now    func() time.Time
	assets map[string]*asset
	mux    *http.ServeMux

	burst int
	every time.Duration

	addr        string
	tls         bool
	fingerprint string

	mu       sync.Mutex
	pairings []*pairing // live pairings, oldest first (pair.go)
	limiters map[string]*rate.Limiter
	seen     map[string]time.Time // when each device's last_seen was last written
}

// New returns the web UI.
func New(opts Options) (*UI, error) {
	if opts.Settings == nil || opts.Token == "" {
		return nil, errors.New("webui: Settings and Token are required")
	}
	u := &UI{set: opts.Settings, token: opts.Token, ttl: opts.SessionTTL, log: opts.Logger, now: opts.Now,
		burst: opts.SignInBurst, every: opts.SignInEvery,
		addr: opts.Addr, tls: opts.TLS, fingerprint: opts.Fingerprint, limiters: map[string]*rate.Limiter{}, seen: map[string]time.Time{}}
	if u.ttl <= 0 {
		u.ttl = DefaultSessionTTL
	}
	if u.burst <= 0 {
		u.burst = DefaultSignInBurst
	}
	if u.every <= 0 {
		u.every = DefaultSignInEvery
	}
	if u.log == nil {
		u.log = slog.New(slog.DiscardHandler)
	}
	if u.now == nil {
		u.now = time.Now
	}
	var err error
	if u.assets, err = loadAssets(); err != nil {
		return nil, err
	}
	u.mux = http.NewServeMux()
	u.mux.HandleFunc("POST /api/v1/web/session", u.handleSignIn)
	u.mux.HandleFunc("GET /api/v1/web/session", u.handleSession)
	u.mux.HandleFunc("DELETE /api/v1/web/session", u.handleSignOut)
	u.mux.HandleFunc("GET /api/v1/web/devices", u.handleDevices)
	u.mux.HandleFunc("DELETE /api/v1/web/devices/{id}", u.handleRevoke)
	u.mux.HandleFunc("POST /api/v1/web/pairings", u.handleNewPairing)
	u.mux.HandleFunc("POST /api/v1/web/pair", u.handlePair)
	u.mux.HandleFunc("GET /", u.serveAsset)
	return u, nil
}

// Public reports whether r is for one of the web UI's paths that need no token: the page and
// its assets (GET, HEAD), and /api/v1/web/session, which checks the token or the cookie itself.
func (u *UI) Public(r *http.Request) bool {
	if r.URL.Path == "/api/v1/web/session" || r.URL.Path == "/api/v1/web/pair" {
		return true
	}
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && !strings.HasPrefix(r.URL.Path, "/api/") &&
		!strings.HasPrefix(r.URL.Path, "/v1/") && r.URL.Path != "/v1"
}

// ServeHTTP serves the page, its assets and the /api/v1/web routes.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := u.mux.Handler(r); pattern == "" {
		writeError(w, http.StatusNotFound, "no route for "+r.Method+" "+clip(r.URL.Path))
		return
	}
	u.mux.ServeHTTP(w, r)
}

// Device is a signed-in browser.
type Device struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Created  time.Time `json:"created"`
	LastSeen time.Time `json:"last_seen"`
	Expires  time.Time `json:"expires"`
	// Current is set on the device the request came from.
	Current bool `json:"current,omitempty"`
}

// stored is a device as the settings keep it: its secret only as a SHA-256 hash.
type stored struct {
	Device
	Hash string `json:"hash"`
}

// ErrNoSession is [UI.Authorize]'s answer to a request without a device session cookie.
var ErrNoSession = errors.New("no web session")

// errCSRF refuses a write without its session's CSRF token: 403, the session itself is fine.
var errCSRF = statusError{http.StatusForbidden, "missing or wrong " + CSRFHeader + " header: a web session's writes carry the CSRF token its sign-in answered (GET /api/v1/web/session)"}

// statusError is an error with the HTTP status kernel/api answers it with.
type statusError struct {
	status int
	msg    string
}

func (e statusError) Error() string   { return e.msg }
func (e statusError) HTTPStatus() int { return e.status }

// NoSession returns [ErrNoSession] (kernel/api's Web interface).
func (u *UI) NoSession() error { return ErrNoSession }

// Authorize returns nil when r carries a live device session cookie and, unless r is a GET or
// HEAD, the session's CSRF token in X-CSRF-Token. The error says why not, in words for the
// person signed in (e.g. a revoked or expired device).
func (u *UI) Authorize(r *http.Request) error {
	_, err := u.authorize(r, r.Method != http.MethodGet && r.Method != http.MethodHead)
	return err
}

func (u *UI) authorize(r *http.Request, write bool) (*stored, error) {
	c, err := r.Cookie(cookieName(r))
	if err != nil || c.Value == "" {
		return nil, ErrNoSession
	}
	id, secret, ok := strings.Cut(c.Value, ".")
	if !ok || !validID(id) || secret == "" || len(secret) > 64 {
		return nil, errors.New("malformed web session cookie: sign in again")
	}
	raw, err := u.set.GetSetting(r.Context(), settingPrefix+id)
	if err != nil {
		return nil, errors.New("this device was signed out (revoked or unknown session): sign in again")
	}
	var d stored
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return nil, fmt.Errorf("web session %s: %w", id, err)
	}
	sum := sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(d.Hash)) != 1 {
		return nil, errors.New("this device was signed out (revoked or unknown session): sign in again")
	}
	now := u.now()
	if !now.Before(d.Expires) {
		return nil, errors.New("this device's web session expired: sign in again")
	}
	if write {
		want := csrfToken(secret)
		if got := r.Header.Get(CSRFHeader); subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			return nil, errCSRF
		}
	}
	u.touch(r.Context(), &d, now)
	return &d, nil
}

// touch records when a device was last seen, at most once a minute per device.
func (u *UI) touch(ctx context.Context, d *stored, now time.Time) {
	u.mu.Lock()
	last, ok := u.seen[d.ID]
	if ok && now.Sub(last) < time.Minute {
		u.mu.Unlock()
		return
	}
	u.seen[d.ID] = now
	u.mu.Unlock()
	d.LastSeen = now
	raw, _ := json.Marshal(d)
	// A device revoked meanwhile must stay revoked: write only over an existing setting.
	if _, err := u.set.GetSetting(ctx, settingPrefix+d.ID); err != nil {
		return
	}
	if err := u.set.SetSetting(ctx, settingPrefix+d.ID, string(raw)); err != nil {
		u.log.Warn("webui: record a device's last use", "device", d.ID, "err", err)
	}
}

// csrfToken derives a session's CSRF token from its secret, so it needs no storage.
func csrfToken(secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("hologram web csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func validID(id string) bool {
	if len(id) != 16 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// sessionAnswer is what sign-in and GET /api/v1/web/session answer.
type sessionAnswer struct {
	Device Device `json:"device"`
	CSRF   string `json:"csrf"`
}

// maxSignInBody bounds a sign-in request's body.
const maxSignInBody = 4 << 10

func (u *UI) handleSignIn(w http.ResponseWriter, r *http.Request) {
	if !u.allow(r) {
		w.Header().Set("Retry-After", fmt.Sprint(int(u.every.Seconds()+0.5)))
		writeError(w, http.StatusTooManyRequests, "too many sign-in attempts from this address: wait a little and try again")
		return
	}
	var in struct {
		Token string `json:"token"`
		Name  string `json:"name"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSignInBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a sign-in body is at most %d bytes", maxSignInBody))
			return
		}
		writeError(w, http.StatusBadRequest, "sign-in body: "+clip(err.Error()))
		return
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "sign-in body: data after the JSON object")
		return
	}
	if strings.TrimSpace(in.Token) == "" {
		writeError(w, http.StatusBadRequest, `field "token" is required: the API token homed printed or wrote to its --token-file`)
		return
	}
	g, want := sha256.Sum256([]byte(strings.TrimSpace(in.Token))), sha256.Sum256([]byte(u.token))
	if subtle.ConstantTimeCompare(g[:], want[:]) != 1 {
		u.log.Warn("webui: sign-in with a wrong token", "remote", r.RemoteAddr)
		writeError(w, http.StatusUnauthorized, "wrong token")
		return
	}
	u.newSession(w, r, in.Name)
}

// newSession signs r's browser in: a new device session, its cookie set on w and its CSRF token
// answered (sign-in with the token, and a pairing code). It reports whether it did (else it
// answered the error).
func (u *UI) newSession(w http.ResponseWriter, r *http.Request, givenName string) bool {
	devs, err := u.set.ListSettings(r.Context(), settingPrefix)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return false
	}
	if len(devs) >= MaxDevices {
		u.pruneExpired(r.Context(), devs)
		if devs, err = u.set.ListSettings(r.Context(), settingPrefix); err == nil && len(devs) >= MaxDevices {
			writeError(w, http.StatusConflict, fmt.Sprintf("%d devices are signed in, the most there may be: revoke one (GET /api/v1/web/devices, DELETE /api/v1/web/devices/ID)", MaxDevices))
			return false
		}
	}
	var idb [8]byte
	var sb [32]byte
	_, _ = rand.Read(idb[:])
	_, _ = rand.Read(sb[:])
	id, secret := hex.EncodeToString(idb[:]), base64.RawURLEncoding.EncodeToString(sb[:])
	now := u.now().UTC()
	name := deviceName(givenName, r.UserAgent())
	sum := sha256.Sum256([]byte(secret))
	d := stored{Device: Device{ID: id, Name: name, Created: now, LastSeen: now, Expires: now.Add(u.ttl)}, Hash: hex.EncodeToString(sum[:])}
	raw, _ := json.Marshal(d)
	if err := u.set.SetSetting(r.Context(), settingPrefix+id, string(raw)); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return false
	}
	u.log.Info("webui: a device signed in", "device", id, "name", name, "remote", r.RemoteAddr)
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: id + "." + secret, Path: "/", Expires: d.Expires,
		MaxAge: int(u.ttl.Seconds()), HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	d.Current = true
	writeJSON(w, http.StatusCreated, sessionAnswer{Device: d.Device, CSRF: csrfToken(secret)})
	return true
}

// allow takes one sign-in attempt from r's client address.
func (u *UI) allow(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	l, ok := u.limiters[host]
	if !ok {
		if len(u.limiters) >= 4096 { // bounded: forget addresses whose bucket has refilled
			for k, v := range u.limiters {
				if v.Tokens() >= float64(u.burst) {
					delete(u.limiters, k)
				}
			}
			if len(u.limiters) >= 4096 {
				return false
			}
		}
		l = rate.NewLimiter(rate.Every(u.every), u.burst)
		u.limiters[host] = l
	}
	return l.AllowN(u.now(), 1)
}

func (u *UI) pruneExpired(ctx context.Context, devs map[string]string) {
	now := u.now()
	for k, v := range devs {
		var d stored
		if json.Unmarshal([]byte(v), &d) != nil || !now.Before(d.Expires) {
			_ = u.set.DeleteSetting(ctx, k)
		}
	}
}

// deviceName is the name a device is listed by: the one it gave, else its browser and system.
func deviceName(given, ua string) string {
	given = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.TrimSpace(given))
	if given != "" {
		return clipRunes(given, 64)
	}
	browser := "a browser"
	for _, b := range []struct{ key, name string }{{"Edg/", "Edge"}, {"Firefox/", "Firefox"}, {"Chrome/", "Chrome"}, {"Safari/", "Safari"}} {
		if strings.Contains(ua, b.key) {
			browser = b.name
			break
		}
	}
	system := ""
	for _, s := range []struct{ key, name string }{{"Android", "Android"}, {"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Windows", "Windows"}, {"Mac OS X", "macOS"}, {"Linux", "Linux"}} {
		if strings.Contains(ua, s.key) {
			system = s.name
			break
		}
	}
	if system == "" {
		return browser
	}
	return browser + " on " + system
}

func (u *UI) handleSession(w http.ResponseWriter, r *http.Request) {
	d, err := u.authorize(r, false)
	if err != nil {
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	c, _ := r.Cookie(cookieName(r))
	_, secret, _ := strings.Cut(c.Value, ".")
	d.Current = true
	writeJSON(w, http.StatusOK, sessionAnswer{Device: d.Device, CSRF: csrfToken(secret)})
}

// handleSignOut ends the requesting device's session.
func (u *UI) handleSignOut(w http.ResponseWriter, r *http.Request) {
	d, err := u.authorize(r, true)
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	if err := u.set.DeleteSetting(r.Context(), settingPrefix+d.ID); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
}

// handleDevices lists the signed-in devices, newest first. kernel/api has authorized the request
// (the owner's token, or a device session).
func (u *UI) handleDevices(w http.ResponseWriter, r *http.Request) {
	all, err := u.set.ListSettings(r.Context(), settingPrefix)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	current := ""
	if c, err := r.Cookie(cookieName(r)); err == nil {
		current, _, _ = strings.Cut(c.Value, ".")
	}
	now := u.now()
	out := []Device{}
	for _, raw := range all {
		var d stored
		if json.Unmarshal([]byte(raw), &d) != nil || !now.Before(d.Expires) {
			continue
		}
		d.Current = d.ID == current
		out = append(out, d.Device)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	writeJSON(w, http.StatusOK, struct {
		Devices []Device `json:"devices"`
	}{out})
}

// handleRevoke signs a device out: its next request is refused.
func (u *UI) handleRevoke(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !validID(id) {
		writeError(w, http.StatusBadRequest, "a device id is 16 hexadecimal digits, not "+clip(id))
		return
	}
	if err := u.set.DeleteSetting(r.Context(), settingPrefix+id); err != nil {
		writeError(w, http.StatusNotFound, "no signed-in device "+id)
		return
	}
	u.mu.Lock()
	delete(u.seen, id)
	u.mu.Unlock()
	u.log.Info("webui: a device was revoked", "device", id)
	w.WriteHeader(http.StatusNoContent)
}

// statusOf is the status an [UI.Authorize] error is answered with: 401 but for a missing CSRF token.
func statusOf(err error) int {
	var se statusError
	if errors.As(err, &se) {
		return se.status
	}
	return http.StatusUnauthorized
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers kernel/api's error shape: {"error": {"status", "message"}}.
func writeError(w http.ResponseWriter, status int, msg string) {
	var body struct {
		Error struct {
			Status  int    `json:"status"`
			Message string `json:"message"`
		} `json:"error"`
	}
	body.Error.Status, body.Error.Message = status, msg
	writeJSON(w, status, body)
}

func clip(s string) string { return clipRunes(s, 200) }

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
