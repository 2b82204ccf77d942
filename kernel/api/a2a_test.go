package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// fakeA2A answers "a2a <path>" and keeps its peers in a map.
type fakeA2A struct{ peers map[string]bool }

func (f *fakeA2A) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, canFlush := w.(http.Flusher)
	fmt.Fprintf(w, "a2a %s flush=%v", r.URL.Path, canFlush)
}

func (f *fakeA2A) A2APeers(context.Context) ([]client.A2APeer, error) {
	var out []client.A2APeer
	for n := range f.peers {
		out = append(out, client.A2APeer{Name: n})
	}
	return out, nil
}

func (f *fakeA2A) AddA2APeer(_ context.Context, name string) (client.A2APeer, error) {
	if f.peers[name] {
		return client.A2APeer{}, fmt.Errorf("%w: exists", client.ErrInvalid)
	}
	f.peers[name] = true
	return client.A2APeer{Name: name, Token: "a2a_tok"}, nil
}

func (f *fakeA2A) RemoveA2APeer(_ context.Context, name string) error {
	if !f.peers[name] {
		return fmt.Errorf("%w: no peer %s", client.ErrNotFound, name)
	}
	delete(f.peers, name)
	return nil
}

// TestA2AMount: the TCP listener hands the A2A paths to the A2A server (which checks peer
// tokens itself) but refuses the owner's token there; the unix socket and the other paths keep
// the owner's rules.
func TestA2AMount(t *testing.T) {
	const owner = "owner-token"
	s := New(&fakeBackend{}, Options{Token: owner, A2A: &fakeA2A{peers: map[string]bool{}}})
	unix := serveUnix(t, s, "") // first: it sets the listening hook the TCP server then reads
	tcp := serveTCP(t, s, nil, nil)
	cases := []struct {
		name   string
		sv     *served
		method string
		path   string
		token  string
		status int
		want   string
	}{
		{"card without a token", tcp, "GET", "/.well-known/agent-card.json", "", 200, "a2a /.well-known/agent-card.json flush=true"},
		{"JSON-RPC with a peer's token", tcp, "POST", "/a2a", "a2a_peer", 200, "a2a /a2a flush=true"},
		{"JSON-RPC with the owner's token", tcp, "POST", "/a2a", owner, 403, "waiter a2a peer add NAME"},
		{"the owner's API with a peer's token", tcp, "GET", "/api/v1/sessions", "a2a_peer", 401, "invalid bearer token"},
		{"not on the unix socket", unix, "GET", "/.well-known/agent-card.json", "", 404, "no route"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.token != "" {
				hdr["Authorization"] = "Bearer " + tc.token
			}
			resp, body := tc.sv.do(t, tc.method, tc.path, "", hdr)
			if resp.StatusCode != tc.status || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s, want %d with %q", resp.StatusCode, body, tc.status, tc.want)
			}
		})
	}
	// Origin and Host checks still come first.
	if resp, _ := tcp.do(t, "GET", "/.well-known/agent-card.json", "", map[string]string{"Origin": "https://evil.example"}); resp.StatusCode != 403 {
		t.Fatalf("a browser's request for the card: %d", resp.StatusCode)
	}
}

func TestA2APeerRoutes(t *testing.T) {
	off := serveUnix(t, New(&fakeBackend{}, Options{}), "")
	if resp, body := off.do(t, "GET", "/api/v1/a2a/peers", "", nil); resp.StatusCode != 503 || !strings.Contains(body, "enabled = false") {
		t.Fatalf("peers with A2A off: %d %s", resp.StatusCode, body)
	}
	on := serveUnix(t, New(&fakeBackend{}, Options{A2A: &fakeA2A{peers: map[string]bool{}}}), "")
	steps := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/api/v1/a2a/peers", `{"name":"bob"}`, 201, `"token":"a2a_tok"`},
		{"POST", "/api/v1/a2a/peers", `{"name":"bob"}`, 400, "exists"},
		{"POST", "/api/v1/a2a/peers", `{"name":"bob","admin":true}`, 400, "admin"},
		{"GET", "/api/v1/a2a/peers", "", 200, `"name":"bob"`},
		{"DELETE", "/api/v1/a2a/peers/bob", "", 204, ""},
		{"DELETE", "/api/v1/a2a/peers/bob", "", 404, "no peer bob"},
		{"GET", "/api/v1/a2a/peers", "", 200, `{"peers":[]}`},
	}
	for _, st := range steps {
		resp, body := on.do(t, st.method, st.path, st.body, map[string]string{"Content-Type": "application/json"})
		if resp.StatusCode != st.status || !strings.Contains(body, st.want) {
			t.Fatalf("%s %s %s: %d %s, want %d with %q", st.method, st.path, st.body, resp.StatusCode, body, st.status, st.want)
		}
	}
}
