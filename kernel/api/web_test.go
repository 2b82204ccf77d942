package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/webui"
	"github.com/hologramagent/hologram/memory/memtest"
)

// TestWebUIMount: on TCP the web UI's page and sign-in need no token; its device session cookie
// makes the listener's same-origin requests the owner's (writes with the CSRF token); other
// origins stay refused; a revoked device is refused; the unix socket serves no page.
func TestWebUIMount(t *testing.T) {
	const owner = "owner-token"
	ui, err := webui.New(webui.Options{Settings: memtest.NewMem(nil), Token: owner, Addr: "127.0.0.1:7878"})
	if err != nil {
		t.Fatal(err)
	}
	b := &fakeBackend{createSession: func(_ context.Context, s client.Session) (client.Session, error) {
		return client.Session{ID: "s1", Title: "new"}, nil
	}}
	s := New(b, Options{Token: owner, Web: ui})
	unix := serveUnix(t, s, "") // before TCP: serveUnix sets the hook the TCP server reads
	tcp := serveTCP(t, s, nil, nil)
	own := tcp.base

	resp, body := tcp.do(t, "POST", "/api/v1/web/session", `{"token":"`+owner+`"}`, map[string]string{"Origin": own})
	if resp.StatusCode != 201 {
		t.Fatalf("sign-in: %d %s", resp.StatusCode, body)
	}
	var signed struct {
		Device struct{ ID string }
		CSRF   string
	}
	_ = json.Unmarshal([]byte(body), &signed)
	cookie := resp.Cookies()[0].Name + "=" + resp.Cookies()[0].Value

	for _, tc := range []struct {
		name, method, path, body string
		hdr                      map[string]string
		status                   int
		msg                      string
	}{
		{"the page, anonymous", "GET", "/", "", nil, 200, "<title>HologramAgent</title>"},
		{"an asset, same-origin Referer", "GET", "/app.js", "", map[string]string{"Referer": own + "/"}, 200, "import"},
		{"the API, anonymous", "GET", "/api/v1/sessions", "", map[string]string{"Referer": own + "/"}, 401, "missing bearer token"},
		{"the API, cookie, same origin", "GET", "/api/v1/sessions", "", map[string]string{"Cookie": cookie, "Referer": own + "/#chat"}, 200, `"sessions"`},
		{"the API, cookie, no Origin", "GET", "/api/v1/sessions", "", map[string]string{"Cookie": cookie}, 200, `"sessions"`},
		{"the API, cookie, other origin", "GET", "/api/v1/sessions", "", map[string]string{"Cookie": cookie, "Origin": "http://evil.example"}, 403, "Origin or Referer not allowed"},
		{"the API, cookie, same Origin but other Referer", "GET", "/api/v1/sessions", "", map[string]string{"Cookie": cookie, "Origin": own, "Referer": "http://evil.example/"}, 403, "not allowed"},
		{"a write without CSRF", "POST", "/api/v1/sessions", "{}", map[string]string{"Cookie": cookie, "Origin": own}, 403, "X-CSRF-Token"},
		{"a write with CSRF", "POST", "/api/v1/sessions", "{}", map[string]string{"Cookie": cookie, "Origin": own, "X-CSRF-Token": signed.CSRF}, 201, `"s1"`},
		{"/v1 with the cookie", "GET", "/v1/models", "", map[string]string{"Cookie": cookie, "Origin": own}, 200, `"data"`},
		{"a page write anonymous", "POST", "/", "", map[string]string{"Origin": own}, 401, "missing bearer token"},
		{"devices with the token", "GET", "/api/v1/web/devices", "", map[string]string{"Authorization": "Bearer " + owner}, 200, signed.Device.ID},
		{"devices anonymous", "GET", "/api/v1/web/devices", "", nil, 401, "missing bearer token"},
		{"a pairing anonymous", "POST", "/api/v1/web/pairings", "", nil, 401, "missing bearer token"},
		{"a pairing from a signed-in browser", "POST", "/api/v1/web/pairings", "", map[string]string{"Cookie": cookie, "Origin": own, "X-CSRF-Token": signed.CSRF}, 403, "only the owner"},
		{"a pairing with the token", "POST", "/api/v1/web/pairings", "", map[string]string{"Authorization": "Bearer " + owner}, 201, "http://127.0.0.1:7878/#pair="},
		{"pair, anonymous, a wrong code", "POST", "/api/v1/web/pair", `{"code":"ABCD-EFGH"}`, map[string]string{"Origin": own}, 401, "wrong or expired pairing code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := tcp.do(t, tc.method, tc.path, tc.body, tc.hdr)
			if resp.StatusCode != tc.status || !strings.Contains(body, tc.msg) {
				t.Fatalf("%d %s, want %d %q", resp.StatusCode, body, tc.status, tc.msg)
			}
		})
	}

	// A refused request's connection is closed (Connection: close sent with the 401): a
	// browser's next request, its sign-in, goes on a fresh connection instead of one whose read
	// deadline has passed (which cancelled it mid-way).
	if resp, _ := tcp.do(t, "GET", "/api/v1/sessions", "", nil); resp.StatusCode != 401 || !resp.Close {
		t.Fatalf("a 401 keeps its connection: %d close=%v", resp.StatusCode, resp.Close)
	}

	// Revoked with the owner's token: the device's next request is 401, saying why.
	if resp, body := tcp.do(t, "DELETE", "/api/v1/web/devices/"+signed.Device.ID, "", map[string]string{"Authorization": "Bearer " + owner}); resp.StatusCode != 204 {
		t.Fatalf("revoke: %d %s", resp.StatusCode, body)
	}
	if resp, body := tcp.do(t, "GET", "/api/v1/sessions", "", map[string]string{"Cookie": cookie}); resp.StatusCode != 401 || !strings.Contains(body, "signed out") {
		t.Fatalf("a revoked device: %d %s", resp.StatusCode, body)
	}

	// The socket is the owner: it makes pairings.
	if resp, body := unix.do(t, "POST", "/api/v1/web/pairings", "{}", nil); resp.StatusCode != 201 || !strings.Contains(body, `"short"`) {
		t.Fatalf("a pairing over the socket: %d %s", resp.StatusCode, body)
	}
	// The unix socket serves no page (the web UI is the TCP listener's).
	if resp, _ := unix.do(t, "GET", "/", "", nil); resp.StatusCode != 404 {
		t.Fatalf("GET / on the socket: %d", resp.StatusCode)
	}
}
