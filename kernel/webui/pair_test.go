package webui

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// newPairing asks for a pairing as the owner (the socket: no Authorization, no cookie).
func newPairing(t *testing.T, u *UI, body string) Pairing {
	t.Helper()
	w := do(u, httptest.NewRequest("POST", "/api/v1/web/pairings", strings.NewReader(body)))
	if w.Code != http.StatusCreated {
		t.Fatalf("new pairing: %d %s", w.Code, w.Body)
	}
	var p Pairing
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func pair(u *UI, code string) *httptest.ResponseRecorder {
	b, _ := json.Marshal(map[string]string{"code": code})
	r := httptest.NewRequest("POST", "/api/v1/web/pair", strings.NewReader(string(b)))
	return do(u, r)
}

func TestNewPairing(t *testing.T) {
	for _, tc := range []struct {
		name, addr, fp, body string
		tls                  bool
		want                 string // the URL up to the code
	}{
		{"tls", "192.168.1.20:8443", "ab:cd", "", true, "https://192.168.1.20:8443/#pair="},
		{"plain loopback", "127.0.0.1:8080", "", "{}", false, "http://127.0.0.1:8080/#pair="},
		{"host given", "0.0.0.0:8443", "ab:cd", `{"host":"box.lan"}`, true, "https://box.lan:8443/#pair="},
		{"ipv6 given", "[::]:8443", "", `{"host":"fd00::5"}`, false, "http://[fd00::5]:8443/#pair="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _, clk := newUI(t, Options{Addr: tc.addr, TLS: tc.tls, Fingerprint: tc.fp})
			p := newPairing(t, u, tc.body)
			if !strings.HasPrefix(p.URL, tc.want) || p.URL != tc.want+p.Code {
				t.Errorf("url %q, want %q+code", p.URL, tc.want)
			}
			if !regexp.MustCompile(`^[A-Za-z0-9_-]{22,}$`).MatchString(p.Code) { // ≥ 128 bits of base64url
				t.Errorf("code %q", p.Code)
			}
			if !regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$`).MatchString(p.Short) {
				t.Errorf("short %q", p.Short)
			}
			if !p.Expires.Equal(clk.now().Add(5 * time.Minute)) {
				t.Errorf("expires %v", p.Expires)
			}
			if p.Fingerprint != tc.fp {
				t.Errorf("fingerprint %q", p.Fingerprint)
			}
		})
	}
	// Listening on all addresses: the address a TCP request came to, else a LAN address.
	u0, _, _ := newUI(t, Options{Addr: "0.0.0.0:8443", TLS: true})
	r := httptest.NewRequest("POST", "/api/v1/web/pairings", nil)
	r.Host = "10.0.0.5:8443"
	var p Pairing
	if w := do(u0, r); w.Code != 201 || json.Unmarshal(w.Body.Bytes(), &p) != nil || !strings.HasPrefix(p.URL, "https://10.0.0.5:8443/#pair=") {
		t.Errorf("over TCP to 10.0.0.5: %d %s", w.Code, w.Body)
	}
	r = httptest.NewRequest("POST", "/api/v1/web/pairings", nil)
	r.Host = "hologram" // the socket's
	if w := do(u0, r); w.Code != 201 || json.Unmarshal(w.Body.Bytes(), &p) != nil || strings.Contains(p.URL, "0.0.0.0") ||
		strings.Contains(p.URL, "hologram") || !regexp.MustCompile(`^https://[^/]+:8443/#pair=`).MatchString(p.URL) {
		t.Errorf("over the socket: %d %s", w.Code, w.Body)
	}
	// Two pairings share nothing.
	u, _, _ := newUI(t, Options{Addr: "127.0.0.1:1"})
	a, b := newPairing(t, u, ""), newPairing(t, u, "")
	if a.Code == b.Code || a.Short == b.Short {
		t.Errorf("two pairings alike: %+v %+v", a, b)
	}
}

func TestNewPairingRefusals(t *testing.T) {
	u, _, _ := newUI(t, Options{Addr: "127.0.0.1:8080"})
	cookie, csrf := signIn(t, u, false)
	for _, tc := range []struct {
		name   string
		body   string
		header map[string]string
		cookie bool
		want   int
		msg    string
	}{
		{"a signed-in browser", "", map[string]string{CSRFHeader: csrf}, true, 403, "only the owner"},
		{"another token", "", map[string]string{"Authorization": "Bearer nope"}, false, 403, "only the owner"},
		{"not bearer", "", map[string]string{"Authorization": "Basic b3duZXI="}, false, 403, "only the owner"},
		{"bad host", `{"host":"evil.example/x#"}`, nil, false, 400, "not a host name"},
		{"unknown field", `{"hots":"x"}`, nil, false, 400, "unknown field"},
		{"too big", `{"host":"` + strings.Repeat("a", 5000) + `"}`, nil, false, 413, "at most"},
		{"trailing", `{} {}`, nil, false, 400, "data after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/v1/web/pairings", strings.NewReader(tc.body))
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			if tc.cookie {
				r.AddCookie(cookie)
			}
			w := do(u, r)
			if w.Code != tc.want || !strings.Contains(w.Body.String(), tc.msg) {
				t.Errorf("%d %s, want %d %q", w.Code, w.Body, tc.want, tc.msg)
			}
		})
	}
	// The owner's token may.
	r := httptest.NewRequest("POST", "/api/v1/web/pairings", nil)
	r.Header.Set("Authorization", "Bearer owner-token")
	if w := do(u, r); w.Code != 201 {
		t.Errorf("with the token: %d %s", w.Code, w.Body)
	}
	// Without a TCP listener there is nothing to pair with.
	u2, _, _ := newUI(t, Options{})
	if w := do(u2, httptest.NewRequest("POST", "/api/v1/web/pairings", nil)); w.Code != 400 || !strings.Contains(w.Body.String(), "--listen") {
		t.Errorf("no listener: %d %s", w.Code, w.Body)
	}
}

func TestPair(t *testing.T) {
	typed := func(p Pairing) string { return strings.ToLower(strings.ReplaceAll(p.Short, "-", " ")) }
	for _, tc := range []struct {
		name string
		// run pairs and returns the status of the last try and the wanted one.
		run  func(t *testing.T, u *UI, clk *clock) *httptest.ResponseRecorder
		want int
		msg  string
		// devices signed in before the last try
		before int
	}{
		{"long code", func(t *testing.T, u *UI, _ *clock) *httptest.ResponseRecorder {
			return pair(u, newPairing(t, u, "").Code)
		}, 201, "", 0},
		{"short code, typed loosely", func(t *testing.T, u *UI, _ *clock) *httptest.ResponseRecorder {
			return pair(u, typed(newPairing(t, u, "")))
		}, 201, "", 0},
		{"single use", func(t *testing.T, u *UI, _ *clock) *httptest.ResponseRecorder {
			p := newPairing(t, u, "")
			if w := pair(u, p.Code); w.Code != 201 {
				t.Fatalf("first: %d %s", w.Code, w.Body)
			}
			return pair(u, p.Code)
		}, 401, "used already", 1},
		{"short form of a used pairing", func(t *testing.T, u *UI, _ *clock) *httptest.ResponseRecorder {
			p := newPairing(t, u, "")
			if w := pair(u, p.Code); w.Code != 201 {
				t.Fatalf("first: %d %s", w.Code, w.Body)
			}
			return pair(u, p.Short)
		}, 401, "used already", 1},
		{"expired", func(t *testing.T, u *UI, clk *clock) *httptest.ResponseRecorder {
			p := newPairing(t, u, "")
			clk.add(5 * time.Minute)
			return pair(u, p.Code)
		}, 401, "wrong or expired", 0},
		{"just before expiry", func(t *testing.T, u *UI, clk *clock) *httptest.ResponseRecorder {
			p := newPairing(t, u, "")
			clk.add(5*time.Minute - time.Second)
			return pair(u, p.Short)
		}, 201, "", 0},
		{"wrong long code", func(t *testing.T, u *UI, _ *clock) *httptest.ResponseRecorder {
			newPairing(t, u, "")
			return pair(u, "AAAAAAAAAAAAAAAAAAAAAA")
		}, 401, "wrong or expired", 0},
		{"wrong short code", func(t *testing.T, u *UI, _ *clock) *httptest.ResponseRecorder {
			newPairing(t, u, "")
			return pair(u, "ZZZZ-ZZZZ")
		}, 401, "wrong or expired", 0},
		{"four wrong short tries leave it live", func(t *testing.T, u *UI, _ *clock) *httptest.ResponseRecorder {
			p := newPairing(t, u, "")
			for range MaxPairingFailures - 1 {
				pair(u, wrongShort(p.Short))
			}
			return pair(u, p.Code)
		}, 201, "", 0},
		{"five wrong short tries void it", func(t *testing.T, u *UI, _ *clock) *httptest.ResponseRecorder {
			p := newPairing(t, u, "")
			for i := range MaxPairingFailures {
				w := pair(u, wrongShort(p.Short))
				if i == MaxPairingFailures-1 && !strings.Contains(w.Body.String(), "void") {
					t.Errorf("fifth wrong try: %s", w.Body)
				}
			}
			return pair(u, p.Code) // even the long code
		}, 401, "void", 0},
		{"wrong long codes do not void", func(t *testing.T, u *UI, _ *clock) *httptest.ResponseRecorder {
			p := newPairing(t, u, "")
			for range MaxPairingFailures {
				pair(u, "x"+p.Code[1:]+"y")
			}
			return pair(u, p.Short)
		}, 201, "", 0},
		{"empty code", func(t *testing.T, u *UI, _ *clock) *httptest.ResponseRecorder {
			return pair(u, "  ")
		}, 400, `is required`, 0},
		{"unknown field", func(t *testing.T, u *UI, _ *clock) *httptest.ResponseRecorder {
			return do(u, httptest.NewRequest("POST", "/api/v1/web/pair", strings.NewReader(`{"cod":"x"}`)))
		}, 400, "unknown field", 0},
		{"too big", func(t *testing.T, u *UI, _ *clock) *httptest.ResponseRecorder {
			return pair(u, strings.Repeat("a", 5000))
		}, 413, "at most", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, set, clk := newUI(t, Options{Addr: "127.0.0.1:8080", SignInBurst: 100})
			w := tc.run(t, u, clk)
			if w.Code != tc.want || !strings.Contains(w.Body.String(), tc.msg) {
				t.Fatalf("%d %s, want %d %q", w.Code, w.Body, tc.want, tc.msg)
			}
			devs, _ := set.ListSettings(t.Context(), settingPrefix)
			if w.Code == 201 {
				// A device session like sign-in's: its cookie signs requests in.
				cs := w.Result().Cookies()
				if len(cs) != 1 || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
					t.Fatalf("cookies %+v", cs)
				}
				var ans sessionAnswer
				_ = json.Unmarshal(w.Body.Bytes(), &ans)
				r := httptest.NewRequest("POST", "/api/v1/chat", nil)
				r.AddCookie(cs[0])
				r.Header.Set(CSRFHeader, ans.CSRF)
				if err := u.Authorize(r); err != nil {
					t.Errorf("the paired session: %v", err)
				}
				if len(devs) != tc.before+1 {
					t.Errorf("%d devices", len(devs))
				}
			} else if len(devs) != tc.before {
				t.Errorf("%d devices after a refused pairing", len(devs))
			}
		})
	}
}

// wrongShort is a short code other than s.
func wrongShort(s string) string {
	if s[0] == '2' {
		return "3" + s[1:]
	}
	return "2" + s[1:]
}

func TestPairRateLimit(t *testing.T) {
	u, _, clk := newUI(t, Options{Addr: "127.0.0.1:8080", SignInBurst: 3, SignInEvery: 10 * time.Second})
	p := newPairing(t, u, "")
	for i := range 3 {
		if w := pair(u, "AAAAAAAAAAAAAAAAAAAAAA"); w.Code != 401 {
			t.Fatalf("try %d: %d", i, w.Code)
		}
	}
	w := pair(u, p.Code) // the right code, but too many tries from this address
	if w.Code != 429 || w.Header().Get("Retry-After") != "10" {
		t.Fatalf("%d %s %v", w.Code, w.Body, w.Header())
	}
	// Sign-in shares the budget: an address cannot try tokens and codes in turn.
	if w := do(u, httptest.NewRequest("POST", "/api/v1/web/session", strings.NewReader(`{"token":"x"}`))); w.Code != 429 {
		t.Errorf("sign-in after: %d", w.Code)
	}
	clk.add(10 * time.Second)
	if w := pair(u, p.Code); w.Code != 201 {
		t.Errorf("after the wait: %d %s", w.Code, w.Body)
	}
}

func TestPairingsBounded(t *testing.T) {
	u, _, _ := newUI(t, Options{Addr: "127.0.0.1:8080", SignInBurst: 100})
	first := newPairing(t, u, "")
	for range MaxPairings {
		newPairing(t, u, "")
	}
	u.mu.Lock()
	n := len(u.pairings)
	u.mu.Unlock()
	if n != MaxPairings {
		t.Errorf("%d pairings kept", n)
	}
	if w := pair(u, first.Code); w.Code != 401 {
		t.Errorf("the oldest, pushed out: %d", w.Code)
	}
}

func TestNormalizeShort(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"7K2M-QX4D", "7K2MQX4D", true},
		{"7k2m qx4d", "7K2MQX4D", true},
		{"OIL0-1234", "0110" + "1234", true},
		{"7K2M-QX4", "7K2MQX4", false},
		{"7K2M-QX4U", "", false},
		{"AAAAAAAAAAAAAAAAAAAAAA", "", false},
	} {
		got, ok := normalizeShort(tc.in)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%q: %q %v", tc.in, got, ok)
		}
	}
}

// A pairing refused for too many devices stays usable: it pairs once one is revoked.
func TestPairTooManyDevices(t *testing.T) {
	u, set, _ := newUI(t, Options{Addr: "127.0.0.1:8080", SignInBurst: 200})
	for range MaxDevices {
		signIn(t, u, false)
	}
	p := newPairing(t, u, "")
	if w := pair(u, p.Code); w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "revoke one") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	devs, _ := set.ListSettings(t.Context(), settingPrefix)
	for k := range devs {
		_ = set.DeleteSetting(t.Context(), k)
		break
	}
	if w := pair(u, p.Code); w.Code != 201 {
		t.Fatalf("after a revocation: %d %s", w.Code, w.Body)
	}
	if w := pair(u, p.Code); w.Code != 401 {
		t.Fatalf("then used: %d %s", w.Code, w.Body)
	}
}
