package webui

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory/memtest"
)

// newSettings is an empty in-memory settings table (memtest's store; the kernel's keeps them in
// SQLite).
func newSettings() *memtest.Mem { return memtest.NewMem(nil) }

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newUI(t *testing.T, opts Options) (*UI, *memtest.Mem, *clock) {
	t.Helper()
	set := newSettings()
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	opts.Settings, opts.Now = set, clk.now
	if opts.Token == "" {
		opts.Token = "owner-token"
	}
	u, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return u, set, clk
}

func do(u *UI, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	u.ServeHTTP(w, r)
	return w
}

// signIn signs in and returns the cookie and the CSRF token.
func signIn(t *testing.T, u *UI, tls bool) (*http.Cookie, string) {
	t.Helper()
	r := httptest.NewRequest("POST", "/api/v1/web/session", strings.NewReader(`{"token":"owner-token"}`))
	if tls {
		r.TLS = &tlsState
	}
	w := do(u, r)
	if w.Code != http.StatusCreated {
		t.Fatalf("sign-in: %d %s", w.Code, w.Body)
	}
	var ans sessionAnswer
	if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil || ans.CSRF == "" || ans.Device.ID == "" {
		t.Fatalf("sign-in answer %s: %v", w.Body, err)
	}
	cs := w.Result().Cookies()
	if len(cs) != 1 {
		t.Fatalf("sign-in set %d cookies", len(cs))
	}
	return cs[0], ans.CSRF
}

var tlsState = tls.ConnectionState{HandshakeComplete: true}

func TestSignInCookie(t *testing.T) {
	u, set, _ := newUI(t, Options{SessionTTL: 48 * time.Hour})
	for _, tc := range []struct {
		name   string
		tls    bool
		secure bool
	}{{"plain loopback", false, false}, {"TLS", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := signIn(t, u, tc.tls)
			if c.Name != CookieName || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure != tc.secure ||
				c.Path != "/" || c.MaxAge != int((48*time.Hour).Seconds()) {
				t.Fatalf("cookie %+v", c)
			}
			id, secret, _ := strings.Cut(c.Value, ".")
			raw, _ := set.GetSetting(context.Background(), settingPrefix+id)
			if raw == "" || strings.Contains(raw, secret) {
				t.Fatalf("stored device %q: missing, or it holds the secret", raw)
			}
		})
	}
}

// TestCookiePerPort: kernels on two ports of one host keep their own cookies.
func TestCookiePerPort(t *testing.T) {
	u, _, _ := newUI(t, Options{})
	r := httptest.NewRequest("POST", "http://127.0.0.1:8765/api/v1/web/session", strings.NewReader(`{"token":"owner-token"}`))
	w := do(u, r)
	c := w.Result().Cookies()
	if w.Code != 201 || len(c) != 1 || c[0].Name != CookieName+"_8765" {
		t.Fatalf("%d %v", w.Code, c)
	}
	for _, tc := range []struct {
		host string
		ok   bool
	}{{"127.0.0.1:8765", true}, {"127.0.0.1:8766", false}} {
		q := httptest.NewRequest("GET", "http://"+tc.host+"/api/v1/sessions", nil)
		q.AddCookie(c[0])
		if err := u.Authorize(q); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.host, err)
		}
	}
}

func TestSignInRefusals(t *testing.T) {
	u, set, _ := newUI(t, Options{})
	for _, tc := range []struct {
		name, body string
		status     int
		msg        string
	}{
		{"wrong token", `{"token":"nope"}`, 401, "wrong token"},
		{"empty token", `{"token":"  "}`, 400, `field "token" is required`},
		{"unknown field", `{"token":"owner-token","x":1}`, 400, `unknown field "x"`},
		{"not JSON", `token=owner-token`, 400, "sign-in body"},
		{"trailing data", `{"token":"owner-token"} {}`, 400, "data after the JSON object"},
		{"too large", `{"token":"` + strings.Repeat("a", 5000) + `"}`, 413, "at most 4096 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/v1/web/session", strings.NewReader(tc.body))
			r.RemoteAddr = tc.name + ":1" // each case its own address: the rate limit stays out of it
			w := do(u, r)
			var e struct{ Error struct{ Message string } }
			_ = json.Unmarshal(w.Body.Bytes(), &e)
			if w.Code != tc.status || !strings.Contains(e.Error.Message, tc.msg) {
				t.Fatalf("%d %s, want %d %q", w.Code, w.Body, tc.status, tc.msg)
			}
			if len(w.Result().Cookies()) != 0 {
				t.Fatal("a refused sign-in set a cookie")
			}
		})
	}
	if stored, _ := set.ListSettings(context.Background(), ""); len(stored) != 0 {
		t.Fatalf("refused sign-ins stored devices: %v", stored)
	}
}

func TestSignInRateLimit(t *testing.T) {
	u, _, clk := newUI(t, Options{SignInBurst: 3, SignInEvery: 10 * time.Second})
	try := func(addr, token string) int {
		r := httptest.NewRequest("POST", "/api/v1/web/session", strings.NewReader(`{"token":"`+token+`"}`))
		r.RemoteAddr = addr
		return do(u, r).Code
	}
	for i := 0; i < 3; i++ {
		if c := try("192.0.2.7:1000", "guess"); c != 401 {
			t.Fatalf("attempt %d: %d", i, c)
		}
	}
	// The limit holds for the right token too, and per address.
	if c := try("192.0.2.7:1001", "owner-token"); c != http.StatusTooManyRequests {
		t.Fatalf("4th attempt: %d, want 429", c)
	}
	if c := try("192.0.2.8:1000", "owner-token"); c != 201 {
		t.Fatalf("another address: %d", c)
	}
	clk.add(10 * time.Second)
	if c := try("192.0.2.7:1002", "owner-token"); c != 201 {
		t.Fatalf("after the refill: %d", c)
	}
}

func TestAuthorize(t *testing.T) {
	u, _, clk := newUI(t, Options{SessionTTL: time.Hour})
	c, csrf := signIn(t, u, false)
	other, _ := signIn(t, u, false)
	id, _, _ := strings.Cut(c.Value, ".")
	req := func(method string, cookie *http.Cookie, csrf string) *http.Request {
		r := httptest.NewRequest(method, "/api/v1/sessions", nil)
		if cookie != nil {
			r.AddCookie(cookie)
		}
		if csrf != "" {
			r.Header.Set(CSRFHeader, csrf)
		}
		return r
	}
	forged := &http.Cookie{Name: CookieName, Value: id + ".AAAA"}
	for _, tc := range []struct {
		name string
		r    *http.Request
		want string // "" = authorized
	}{
		{"GET with the cookie", req("GET", c, ""), ""},
		{"POST with the cookie and CSRF", req("POST", c, csrf), ""},
		{"POST without CSRF", req("POST", c, ""), "X-CSRF-Token"},
		{"POST with another session's CSRF", req("POST", other, csrf), "X-CSRF-Token"},
		{"no cookie", req("GET", nil, ""), "no web session"},
		{"forged secret", req("GET", forged, ""), "signed out"},
		{"malformed", req("GET", &http.Cookie{Name: CookieName, Value: "xyz"}, ""), "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := u.Authorize(tc.r)
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Authorize: %v, want %q", err, tc.want)
			}
		})
	}
	if err := u.Authorize(req("POST", c, "")); statusOf(err) != http.StatusForbidden {
		t.Fatalf("a missing CSRF token answers %d", statusOf(err))
	}
	if !errors.Is(u.Authorize(req("GET", nil, "")), u.NoSession()) {
		t.Fatal("no cookie is not NoSession")
	}
	// Revoked: the next request is refused.
	w := do(u, httptest.NewRequest("DELETE", "/api/v1/web/devices/"+id, nil))
	if w.Code != 204 {
		t.Fatalf("revoke: %d %s", w.Code, w.Body)
	}
	if err := u.Authorize(req("GET", c, "")); err == nil || !strings.Contains(err.Error(), "signed out") {
		t.Fatalf("a revoked device: %v", err)
	}
	if w := do(u, httptest.NewRequest("DELETE", "/api/v1/web/devices/"+id, nil)); w.Code != 404 {
		t.Fatalf("revoking twice: %d", w.Code)
	}
	// Expired: refused, and no longer listed.
	clk.add(time.Hour)
	if err := u.Authorize(req("GET", other, "")); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("an expired device: %v", err)
	}
	w = do(u, httptest.NewRequest("GET", "/api/v1/web/devices", nil))
	if w.Code != 200 || strings.Contains(w.Body.String(), `"id"`) {
		t.Fatalf("devices after expiry: %d %s", w.Code, w.Body)
	}
}

func TestDevicesAndSignOut(t *testing.T) {
	u, _, _ := newUI(t, Options{})
	r := httptest.NewRequest("POST", "/api/v1/web/session", strings.NewReader(`{"token":"owner-token"}`))
	r.Header.Set("User-Agent", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36")
	w := do(u, r)
	phone := w.Result().Cookies()[0]
	var ans sessionAnswer
	_ = json.Unmarshal(w.Body.Bytes(), &ans)
	desk, deskCSRF := signIn(t, u, false)

	lr := httptest.NewRequest("GET", "/api/v1/web/devices", nil)
	lr.AddCookie(desk)
	w = do(u, lr)
	var list struct{ Devices []Device }
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || len(list.Devices) != 2 {
		t.Fatalf("devices: %s %v", w.Body, err)
	}
	names := map[string]bool{}
	for _, d := range list.Devices {
		names[d.Name] = d.Current
	}
	if cur, ok := names["Chrome on Android"]; !ok || cur {
		t.Fatalf("the phone is listed as %v", list.Devices)
	}
	if !names["a browser"] {
		t.Fatalf("the requesting device is not current: %v", list.Devices)
	}
	// GET /api/v1/web/session tells a reloaded page its CSRF token.
	sr := httptest.NewRequest("GET", "/api/v1/web/session", nil)
	sr.AddCookie(phone)
	w = do(u, sr)
	var again sessionAnswer
	if err := json.Unmarshal(w.Body.Bytes(), &again); err != nil || again.CSRF != ans.CSRF || !again.Device.Current {
		t.Fatalf("session: %d %s", w.Code, w.Body)
	}
	// Sign out needs the CSRF token, then ends only that device.
	out := httptest.NewRequest("DELETE", "/api/v1/web/session", nil)
	out.AddCookie(desk)
	if w := do(u, out); w.Code != http.StatusForbidden {
		t.Fatalf("sign-out without CSRF: %d", w.Code)
	}
	out.Header.Set(CSRFHeader, deskCSRF)
	if w := do(u, out); w.Code != 204 || w.Result().Cookies()[0].MaxAge >= 0 {
		t.Fatalf("sign-out: %d %v", w.Code, w.Result().Cookies())
	}
	if u.Authorize(out) == nil {
		t.Fatal("a signed-out device is still signed in")
	}
	if err := u.Authorize(sr); err != nil {
		t.Fatalf("the other device was signed out too: %v", err)
	}
	if w := do(u, httptest.NewRequest("DELETE", "/api/v1/web/devices/zz", nil)); w.Code != 400 {
		t.Fatalf("a bad device id: %d", w.Code)
	}
}

func TestAssets(t *testing.T) {
	u, _, _ := newUI(t, Options{})
	for _, tc := range []struct {
		path, ctype string
		gzip        bool
		contains    string
	}{
		{"/", "text/html", true, `<label for="token">Token</label>`},
		{"/app.js", "text/javascript", true, "import * as api"},
		{"/app.css", "text/css", true, "@media"},
		{"/sw.js", "text/javascript", true, "caches.open"},
		{"/manifest.webmanifest", "application/manifest+json", true, `"display": "standalone"`},
		{"/icon.svg", "image/svg+xml", true, "<svg"},
		{"/icon.png", "image/png", false, "PNG"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r := httptest.NewRequest("GET", tc.path, nil)
			r.Header.Set("Accept-Encoding", "gzip, deflate, br")
			w := do(u, r)
			h := w.Header()
			if w.Code != 200 || !strings.HasPrefix(h.Get("Content-Type"), tc.ctype) || h.Get("ETag") == "" ||
				h.Get("Cache-Control") != "no-cache" || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") {
				t.Fatalf("%d %v", w.Code, h)
			}
			body := w.Body.Bytes()
			if (h.Get("Content-Encoding") == "gzip") != tc.gzip {
				t.Fatalf("Content-Encoding %q", h.Get("Content-Encoding"))
			}
			if tc.gzip {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Contains(body, []byte(tc.contains)) {
				t.Fatalf("body lacks %q", tc.contains)
			}
			// Revalidation: the same ETag is a 304 without a body; no gzip asked, none given.
			r2 := httptest.NewRequest("GET", tc.path, nil)
			r2.Header.Set("If-None-Match", h.Get("ETag"))
			if w := do(u, r2); w.Code != 304 || w.Body.Len() != 0 {
				t.Fatalf("revalidation: %d", w.Code)
			}
			r3 := httptest.NewRequest("GET", tc.path, nil)
			r3.Header.Set("Accept-Encoding", "gzip;q=0")
			if w := do(u, r3); w.Header().Get("Content-Encoding") != "" {
				t.Fatal("gzip;q=0 got gzip")
			}
		})
	}
	if w := do(u, httptest.NewRequest("GET", "/nope.js", nil)); w.Code != 404 {
		t.Fatalf("an unknown asset: %d", w.Code)
	}
}

// TestFirstLoadBudget: the page, style, scripts and manifest compressed stay well under 300 KB
// (issue 27); the number is in docs/web.md.
func TestFirstLoadBudget(t *testing.T) {
	u, _, _ := newUI(t, Options{})
	n := u.FirstLoad()
	t.Logf("first load: %d bytes gzip-compressed", n)
	if n <= 0 || n > 60<<10 {
		t.Fatalf("first load %d bytes, want at most 60 KiB", n)
	}
}

func TestPublic(t *testing.T) {
	u, _, _ := newUI(t, Options{})
	for _, tc := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/", true}, {"HEAD", "/app.js", true}, {"POST", "/api/v1/web/session", true},
		{"GET", "/api/v1/web/session", true}, {"GET", "/api/v1/web/devices", false},
		{"GET", "/api/v1/sessions", false}, {"POST", "/", false}, {"GET", "/v1/models", false},
	} {
		if got := u.Public(httptest.NewRequest(tc.method, tc.path, nil)); got != tc.want {
			t.Errorf("%s %s: Public %v", tc.method, tc.path, got)
		}
	}
}

// TestIconsAreTheApps: the embedded icons are the desktop app's (`make webui-icons` copies them).
func TestIconsAreTheApps(t *testing.T) {
	for _, name := range []string{"icon.png", "icon.svg"} {
		app, err := os.ReadFile(filepath.Join("..", "..", "gui", "assets", name))
		if err != nil {
			t.Fatal(err)
		}
		mine, err := assetsFS.ReadFile("assets/" + name)
		if err != nil || !bytes.Equal(app, mine) {
			t.Errorf("assets/%s differs from gui/assets/%s (%v): run `make webui-icons`", name, name, err)
		}
	}
}
