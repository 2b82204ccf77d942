package main

import (
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func TestManifest(t *testing.T) {
	plugintest.CheckManifest(t, newA2A(nil, slog.Default()).plugin())
}

func TestPeersFromEnv(t *testing.T) {
	for _, tt := range []struct {
		name, env, want string
		n               int
	}{
		{"none", "", "", 0},
		{"one", `[{"name":"alpha","url":"http://127.0.0.1:1","token_file":"/t"}]`, "", 1},
		{"not JSON", `[{`, "HOLOGRAM_A2A_PEERS", 0},
		{"bad name", `[{"name":"a b","url":"http://x","token_file":"/t"}]`, `bad name "a b"`, 0},
		{"bad url", `[{"name":"a","url":"file:///etc","token_file":"/t"}]`, "is not an http(s) URL", 0},
		{"no token file", `[{"name":"a","url":"http://x"}]`, "has no token_file", 0},
		{"twice", `[{"name":"a","url":"http://x","token_file":"/t"},{"name":"a","url":"http://y","token_file":"/t"}]`, `two peers named "a"`, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := PeersFromEnv(plugintest.Env(map[string]string{EnvPeers: tt.env}))
			if plugintest.WantErr(t, err, tt.want) {
				return
			}
			if err != nil || len(ps) != tt.n {
				t.Fatalf("%v %v", ps, err)
			}
		})
	}
}

// echo is an A2A agent built on the official Go SDK's server: it answers "ECHO <text>".
type echo struct{}

func (echo) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart("ECHO "+ec.Message.Parts[0].Text())), nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (echo) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// peerServer serves echo at /a2a, its card at the well-known path, and records the
// Authorization header of every request, refusing JSON-RPC without the token.
func peerServer(t *testing.T, token, cardURL string) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var auths []string
	rpc := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(echo{}))
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		if r.URL.Path == a2asrv.WellKnownAgentCardPath {
			u := cardURL
			if u == "" {
				u = srv.URL + "/a2a"
			}
			_ = json.NewEncoder(w).Encode(&a2a.AgentCard{Name: "echo", Capabilities: a2a.AgentCapabilities{Streaming: true},
				SupportedInterfaces: []*a2a.AgentInterface{{URL: u, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"}}})
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, `{"error":"no"}`, http.StatusUnauthorized)
			return
		}
		rpc.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &auths
}

func call(t *testing.T, tool sdk.Tool, args string) (string, error) {
	t.Helper()
	res, err := tool.Run(context.Background(), nil, json.RawMessage(args))
	if err != nil {
		return "", err
	}
	return res.Content[0].Text, nil
}

func TestSendAndGetTask(t *testing.T) {
	srv, _ := peerServer(t, "a2a_secret", "")
	tokFile := filepath.Join(t.TempDir(), "tok")
	if err := os.WriteFile(tokFile, []byte("a2a_secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badTok := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(badTok, []byte("two tokens\n"), 0o600)
	p := newA2A([]Peer{{Name: "alpha", URL: srv.URL, TokenFile: tokFile}, {Name: "beta", URL: srv.URL, TokenFile: badTok},
		{Name: "gamma", URL: srv.URL, TokenFile: filepath.Join(t.TempDir(), "missing")}}, slog.Default()).plugin()
	send, get := p.Tools[0], p.Tools[1]
	out, err := call(t, send, `{"peer":"alpha","text":"hi"}`)
	if err != nil || !strings.HasPrefix(out, "alpha: task ") || !strings.Contains(out, " completed\nECHO hi") {
		t.Fatalf("a2a_send = %q, %v", out, err)
	}
	id := strings.Fields(out)[2]
	if out, err := call(t, get, `{"peer":"alpha","task_id":"`+id+`"}`); err != nil || !strings.Contains(out, "completed\nECHO hi") {
		t.Fatalf("a2a_get_task = %q, %v", out, err)
	}
	for _, tt := range []struct{ tool, args, want string }{
		{"send", `{"peer":"nobody","text":"hi"}`, `no A2A peer "nobody" (configured: alpha, beta, gamma)`},
		{"send", `{"peer":"alpha","text":"  "}`, "text is empty"},
		{"send", `{"peer":"alpha","text":"hi","admin":true}`, "unknown field"},
		{"send", `{"peer":"beta","text":"hi"}`, "must hold one token"},
		{"send", `{"peer":"gamma","text":"hi"}`, "token file"},
		{"get", `{"peer":"alpha","task_id":"nope"}`, "alpha"},
		{"get", `{"peer":"alpha"}`, "task_id is empty"},
	} {
		tool := send
		if tt.tool == "get" {
			tool = get
		}
		if _, err := call(t, tool, tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %s = %v, want %q", tt.tool, tt.args, err, tt.want)
		}
	}
	if _, err := call(t, newA2A(nil, slog.Default()).plugin().Tools[0], `{"peer":"x","text":"hi"}`); err == nil || !strings.Contains(err.Error(), "[[a2a.peers]]") {
		t.Fatalf("no peers: %v", err)
	}
}

// TestTokenStaysWithItsPeer: a card pointing the JSON-RPC binding at another host never gets
// that host the peer's token.
func TestTokenStaysWithItsPeer(t *testing.T) {
	other, otherAuths := peerServer(t, "never-sent", "")
	srv, _ := peerServer(t, "a2a_secret", other.URL+"/a2a")
	tokFile := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(tokFile, []byte("a2a_secret"), 0o600)
	p := newA2A([]Peer{{Name: "alpha", URL: srv.URL, TokenFile: tokFile}}, slog.Default()).plugin()
	if _, err := call(t, p.Tools[0], `{"peer":"alpha","text":"hi"}`); err == nil {
		t.Fatal("the other host answered without a token")
	}
	for _, a := range *otherAuths {
		if strings.Contains(a, "a2a_secret") {
			t.Fatalf("the token reached another host: %q", a)
		}
	}
	if len(*otherAuths) == 0 {
		t.Fatal("the client never called the card's interface: the test proves nothing")
	}
}
