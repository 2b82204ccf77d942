package client_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

func dialUnix(t *testing.T, h http.Handler) *client.HTTP {
	t.Helper()
	c, err := client.Dial(client.Options{Socket: clienttest.ServeUnix(t, h)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestUnixRoutes(t *testing.T) {
	ctx := context.Background()
	f := clienttest.New()
	c := dialUnix(t, f)

	tests := []struct {
		name string
		call func() (any, error)
		want any
		path string // the last request's method and path
	}{
		{"health", func() (any, error) { h, err := c.Health(ctx); return h, err },
			client.Health{OK: true, Version: "fake", Ready: true}, "GET /api/v1/health"},
		{"add provider", func() (any, error) {
			return c.AddProvider(ctx, client.ProviderConfig{Name: "p1", BaseURL: "http://x/v1", Model: "m", APIKey: "k", Priority: 2})
		}, client.Provider{Name: "p1", BaseURL: "http://x/v1", Model: "m", Priority: 2, HasKey: true}, "POST /api/v1/providers"},
		{"providers", func() (any, error) { return c.Providers(ctx) },
			[]client.Provider{{Name: "p1", BaseURL: "http://x/v1", Model: "m", Priority: 2, HasKey: true}}, "GET /api/v1/providers"},
		{"remove provider", func() (any, error) { return nil, c.RemoveProvider(ctx, "p1") }, nil, "DELETE /api/v1/providers/p1"},
		{"tools", func() (any, error) {
			ts, err := c.Tools(ctx)
			if err != nil {
				return nil, err
			}
			return ts[0].Name + "/" + ts[0].Source, nil
		}, "time_now/builtin", "GET /api/v1/tools"},
		{"create session", func() (any, error) {
			s, err := c.CreateSession(ctx, client.Session{ID: "work", Title: "Work", Model: "m2"})
			return s.ID + "/" + s.Title + "/" + s.Model, err
		}, "work/Work/m2", "POST /api/v1/sessions"},
		{"set instructions", func() (any, error) {
			s, err := c.SetInstructions(ctx, "work", client.Instructions{SystemPrompt: "be brief", Model: "m3"})
			return s.SystemPrompt + "/" + s.Model, err
		}, "be brief/m3", "PUT /api/v1/sessions/work/instructions"},
		{"sessions", func() (any, error) {
			ss, err := c.Sessions(ctx)
			var ids []string
			for _, s := range ss {
				ids = append(ids, s.ID)
			}
			return ids, err
		}, []string{"work", "main"}, "GET /api/v1/sessions"},
		{"history with limit", func() (any, error) { return c.History(ctx, "main", 5) }, []client.Message{}, "GET /api/v1/sessions/main/history?limit=5"},
		{"status", func() (any, error) {
			s, err := c.Status(ctx)
			return fmt.Sprintf("%s %d %v", s.Version, s.Sessions, s.Ready), err
		}, "fake 2 [store api]", "GET /api/v1/status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
			reqs := f.Requests()
			last := reqs[len(reqs)-1]
			if p := last.Method + " " + last.Path; p != tt.path {
				t.Errorf("request %q, want %q", p, tt.path)
			}
		})
	}
	t.Run("create session sends only chosen fields", func(t *testing.T) {
		if _, err := c.CreateSession(ctx, client.Session{Title: "x"}); err != nil {
			t.Fatal(err)
		}
		reqs := f.Requests()
		if b := reqs[len(reqs)-1].Body; b != `{"title":"x"}` {
			t.Errorf("body %s", b)
		}
	})
}

func TestErrorMapping(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		sentinel error
		message  string
	}{
		{"not found", 404, `{"error":{"status":404,"message":"unknown session \"x\""}}`, client.ErrNotFound, `unknown session "x"`},
		{"invalid", 400, `{"error":{"status":400,"message":"unknown field \"foo\""}}`, client.ErrInvalid, `unknown field "foo"`},
		{"conflict", 409, `{"error":{"status":409,"message":"exists"}}`, client.ErrInvalid, "exists"},
		{"unauthorized", 401, `{"error":{"status":401,"message":"bad token"}}`, client.ErrUnauthorized, "bad token"},
		{"forbidden", 403, `{"error":{"status":403,"message":"origin refused"}}`, client.ErrUnauthorized, "origin refused"},
		{"unavailable", 503, `{"error":{"status":503,"message":"starting"}}`, client.ErrUnavailable, "starting"},
		{"plain text body", 502, "bad gateway from proxy\n", nil, "bad gateway from proxy"},
		{"empty body", 500, "", nil, "internal server error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialUnix(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			_, err := c.Sessions(context.Background())
			var apiErr *client.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v (%T) is not *client.Error", err, err)
			}
			if apiErr.Status != tt.status || apiErr.Message != tt.message {
				t.Errorf("got %d %q, want %d %q", apiErr.Status, apiErr.Message, tt.status, tt.message)
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.sentinel)
			}
		})
	}
}

func TestNoKernel(t *testing.T) {
	dir, err := os.MkdirTemp("", "w")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	stale := filepath.Join(dir, "stale.sock")
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()

	for name, sock := range map[string]string{
		"missing socket": filepath.Join(dir, "none.sock"),
		"stale socket":   stale,
	} {
		t.Run(name, func(t *testing.T) {
			c, err := client.Dial(client.Options{Socket: sock})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Status(context.Background())
			want := "no kernel running at " + sock + " (start it with `homed`)"
			if err == nil || err.Error() != want {
				t.Fatalf("error %v, want %q", err, want)
			}
			if !errors.Is(err, client.ErrUnavailable) {
				t.Errorf("error does not match ErrUnavailable")
			}
			_, err = c.Chat(context.Background(), client.ChatRequest{Input: "hi"}, nil)
			if !errors.Is(err, client.ErrUnavailable) || !strings.Contains(err.Error(), "no kernel running") {
				t.Errorf("chat error %v", err)
			}
		})
	}
}

func TestTLSPinning(t *testing.T) {
	f := clienttest.New()
	f.Token = "s3cret"
	srv := httptest.NewUnstartedServer(f)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failing handshakes are expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(srv.Certificate().Raw)
	pin := hex.EncodeToString(sum[:])
	var colons []string
	for i := 0; i < len(pin); i += 2 {
		colons = append(colons, strings.ToUpper(pin[i:i+2]))
	}
	wrong := strings.Repeat("ab", 32)

	tests := []struct {
		name        string
		fingerprint string
		token       string
		wantErr     []string // substrings; none: success
		sentinel    error
	}{
		{"pinned hex", pin, "s3cret", nil, nil},
		{"pinned colon form with prefix", "SHA256:" + strings.Join(colons, ":"), "s3cret", nil, nil},
		{"wrong pin", wrong, "s3cret", []string{"fingerprint mismatch", "sha256:" + pin, "sha256:" + wrong}, nil},
		{"no pin uses system roots", "", "s3cret", []string{"certificate"}, nil},
		{"wrong token", pin, "nope", []string{"missing or wrong bearer token"}, client.ErrUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := client.Dial(client.Options{URL: srv.URL, Token: tt.token, Fingerprint: tt.fingerprint})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Sessions(context.Background())
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				reqs := f.Requests()
				if got := reqs[len(reqs)-1].Authorization; got != "Bearer s3cret" {
					t.Errorf("authorization %q", got)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("error %v does not match %v", err, tt.sentinel)
			}
		})
	}
	t.Run("health needs no token", func(t *testing.T) {
		c, err := client.Dial(client.Options{URL: srv.URL, Fingerprint: pin})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if h, err := c.Health(context.Background()); err != nil || !h.OK {
			t.Fatalf("health %+v, %v", h, err)
		}
	})
}

func TestDialValidation(t *testing.T) {
	pin := strings.Repeat("0f", 32)
	tests := []struct {
		name    string
		opts    client.Options
		wantErr string // substring; empty: success
	}{
		{"nothing", client.Options{}, "exactly one"},
		{"both", client.Options{Socket: "/s", URL: "https://h"}, "exactly one"},
		{"socket", client.Options{Socket: "/run/x.sock"}, ""},
		{"https", client.Options{URL: "https://host:7878", Token: "t"}, ""},
		{"https pinned", client.Options{URL: "https://host:7878", Fingerprint: "sha256:" + pin}, ""},
		{"plain http off loopback", client.Options{URL: "http://example.com:7878"}, "refusing plain HTTP to example.com: use https or --insecure"},
		{"plain http insecure", client.Options{URL: "http://example.com:7878", Insecure: true}, ""},
		{"plain http loopback v4", client.Options{URL: "http://127.0.0.1:7878"}, ""},
		{"plain http loopback v6", client.Options{URL: "http://[::1]:7878"}, ""},
		{"plain http localhost", client.Options{URL: "http://localhost:7878"}, ""},
		{"bad scheme", client.Options{URL: "ftp://host"}, "scheme must be https or http"},
		{"no host", client.Options{URL: "https://"}, "has no host"},
		{"bad fingerprint", client.Options{URL: "https://h", Fingerprint: "abc"}, "want 64 hex digits"},
		{"fingerprint over http", client.Options{URL: "http://127.0.0.1:1", Fingerprint: pin}, "needs https"},
		{"fingerprint with socket", client.Options{Socket: "/s", Fingerprint: pin}, "needs a remote https URL"},
		{"token with newline", client.Options{URL: "https://h", Token: "a\nb"}, "line break"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.Dial(tt.opts)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestNormalizeFingerprint(t *testing.T) {
	hexpin := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		in, want string
		ok       bool
	}{
		{hexpin, hexpin, true},
		{strings.ToUpper(hexpin), hexpin, true},
		{"sha256:" + hexpin, hexpin, true},
		{" SHA256:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF\n", hexpin, true},
		{hexpin[:62], "", false},
		{hexpin[:62] + "zz", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := client.NormalizeFingerprint(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("got %q, %v; want %q ok=%v", got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestReadTokenFile(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content, want, wantErr string
	}{
		{"trimmed", "  tok-123\n", "tok-123", ""},
		{"empty", "\n \n", "", "is empty"},
		{"two lines", "a\nb\n", "", "more than one line"},
		{"missing", "", "", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name)
			if tt.name != "missing" {
				if err := os.WriteFile(p, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := client.ReadTokenFile(p)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v", got, err)
			}
		})
	}
}
