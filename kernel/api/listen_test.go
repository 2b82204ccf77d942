package api

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestUnixSocket(t *testing.T) {
	t.Run("new dir 0700, socket 0600, removed on exit", func(t *testing.T) {
		dir := filepath.Join(socketDir(t), "a", "b")
		path := filepath.Join(dir, "k.sock")
		sv := serveUnix(t, New(&fakeBackend{}, Options{}), path)
		assertMode(t, dir, fs.ModeDir|0o700)
		assertMode(t, path, fs.ModeSocket|0o600)
		if resp, body := sv.do(t, "GET", "/api/v1/status", "", nil); resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		if err := sv.stop(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("socket left behind: %v", err)
		}
	})
	// An existing directory keeps its mode, whatever it is: the kernel only sets the modes of
	// directories it creates (a root kernel once made /run 0700).
	for _, mode := range []fs.FileMode{0o700, 0o755, 0o750, 0o777 | fs.ModeSticky, 0o733 | fs.ModeSticky} {
		t.Run(fmt.Sprintf("existing dir %s kept", mode), func(t *testing.T) {
			dir := filepath.Join(socketDir(t), "d")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, mode); err != nil {
				t.Fatal(err)
			}
			sv := serveUnix(t, New(&fakeBackend{}, Options{}), filepath.Join(dir, "k.sock"))
			assertMode(t, dir, fs.ModeDir|mode)
			assertMode(t, filepath.Join(dir, "k.sock"), fs.ModeSocket|0o600)
			if resp, body := sv.do(t, "GET", "/api/v1/health", "", nil); resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
		})
	}
	t.Run("stale socket replaced", func(t *testing.T) {
		path := filepath.Join(socketDir(t), "k.sock")
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		ln.SetUnlinkOnClose(false)
		ln.Close()
		if _, err := os.Lstat(path); err != nil {
			t.Fatalf("stale socket missing: %v", err)
		}
		sv := serveUnix(t, New(&fakeBackend{}, Options{}), path)
		if resp, body := sv.do(t, "GET", "/api/v1/health", "", nil); resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	})

	refusals := []struct {
		name    string
		setup   func(t *testing.T, s *Server, path string)
		wantErr string
	}{
		{"live socket", func(t *testing.T, _ *Server, path string) {
			ln, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
		}, "another process is serving"},
		{"not a socket", func(t *testing.T, _ *Server, path string) {
			if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is not a socket"},
		{"dir owned by someone else", func(t *testing.T, s *Server, path string) {
			if os.Geteuid() != 0 {
				s.uid = os.Geteuid() + 1 // the dir is ours: seen from another uid, it is someone else's
				return
			}
			// As root the dir must belong to a third uid (root's dirs are accepted).
			if err := os.Chown(filepath.Dir(path), 4242, 4242); err != nil {
				t.Fatal(err)
			}
		}, "not by us"},
		{"group-writable dir", func(t *testing.T, _ *Server, path string) { chmod(t, filepath.Dir(path), 0o770) }, "writable by others (mode 0770)"},
		{"world-writable dir", func(t *testing.T, _ *Server, path string) { chmod(t, filepath.Dir(path), 0o777) }, "without the sticky bit"},
		{"parent is a file", func(t *testing.T, _ *Server, path string) {
			if err := os.WriteFile(filepath.Dir(path), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "socket dir"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(socketDir(t), "d", "k.sock")
			if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			s := New(&fakeBackend{}, Options{})
			if tt.name == "parent is a file" {
				os.Remove(filepath.Dir(path))
			}
			tt.setup(t, s, path)
			err := s.ServeUnix(context.Background(), path)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ServeUnix: %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func assertMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode() & (fs.ModeType | fs.ModePerm | fs.ModeSticky); got != want {
		t.Errorf("%s: mode %v, want %v", path, got, want)
	}
}

func TestPeerUID(t *testing.T) {
	tests := []struct {
		name    string
		peerUID int
		ok      bool
	}{
		{"our uid accepted", os.Geteuid(), true},
		{"foreign uid refused", os.Geteuid() + 1000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &logBuffer{}
			s := New(&fakeBackend{}, Options{Logger: logs.logger()})
			s.peerUID = tt.peerUID
			sv := serveUnix(t, s, "")
			req, _ := http.NewRequest("GET", sv.base+"/api/v1/health", nil)
			resp, err := sv.client.Do(req)
			if tt.ok {
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("health: %v", err)
				}
				resp.Body.Close()
				return
			}
			if err == nil {
				resp.Body.Close()
				t.Fatalf("foreign peer got an answer: %d", resp.StatusCode)
			}
			if !strings.Contains(logs.String(), "refused unix connection") {
				t.Errorf("refusal not logged: %s", logs.String())
			}
		})
	}
	t.Run("checkPeer on a non-unix conn", func(t *testing.T) {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		if _, err := checkPeer(a, os.Geteuid()); err == nil {
			t.Error("checkPeer accepted a pipe")
		}
	})
}

func TestTCPAuth(t *testing.T) {
	const token = "s3cret-token"
	s := New(&fakeBackend{}, Options{Token: token})
	sv := serveTCP(t, s, nil, nil)
	tests := []struct {
		name, method, path, auth string
		want                     int
		wantMsg                  string
	}{
		{"health without token", "GET", "/api/v1/health", "", 200, ""},
		{"status without token", "GET", "/api/v1/status", "", 401, "missing bearer token"},
		{"status with wrong token", "GET", "/api/v1/status", "Bearer nope", 401, "invalid bearer token"},
		{"status with token prefix", "GET", "/api/v1/status", "Bearer s3cret", 401, "invalid bearer token"},
		{"basic auth", "GET", "/api/v1/status", "Basic czNjcmV0LXRva2Vu", 401, "missing bearer token"},
		{"status with token", "GET", "/api/v1/status", "Bearer " + token, 200, ""},
		{"scheme is case-insensitive", "GET", "/api/v1/status", "bearer " + token, 200, ""},
		{"unknown path without token", "GET", "/api/v1/nope", "", 401, "missing bearer token"},
		{"unknown path with token", "GET", "/api/v1/nope", "Bearer " + token, 404, ""},
		{"openai without token", "GET", "/v1/models", "", 401, "missing bearer token"},
		{"openai with token", "GET", "/v1/models", "Bearer " + token, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tt.auth != "" {
				hdr["Authorization"] = tt.auth
			}
			resp, body := sv.do(t, tt.method, tt.path, "", hdr)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.want, body)
			}
			if tt.want == 401 {
				if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("WWW-Authenticate %q", resp.Header.Get("WWW-Authenticate"))
				}
				if !strings.Contains(body, tt.wantMsg) {
					t.Errorf("body %s, want %q", body, tt.wantMsg)
				}
			}
		})
	}
}

func TestHandlerOutsideServe(t *testing.T) {
	// Mounted in someone else's server, the handler treats requests as TCP: token required.
	ts := httptest.NewServer(New(&fakeBackend{}, Options{}))
	defer ts.Close()
	for path, want := range map[string]int{"/api/v1/status": 401, "/api/v1/health": 200} {
		t.Run(path, func(t *testing.T) {
			resp, err := ts.Client().Get(ts.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("status %d, want %d", resp.StatusCode, want)
			}
		})
	}
}

func TestHostCheck(t *testing.T) {
	s := New(&fakeBackend{}, Options{Token: "tok"})
	sv := serveTCP(t, s, nil, nil)
	listen := strings.TrimPrefix(sv.base, "http://")
	tests := []struct {
		host string
		want int
	}{
		{listen, 200},
		{"localhost:1234", 200},
		{"LOCALHOST", 200},
		{"127.0.0.1", 200},
		{"127.0.0.2:80", 200},
		{"[::1]:9", 200},
		{"evil.example", 403},
		{"evil.example:" + strings.Split(listen, ":")[1], 403},
		{"localhost.evil.example", 403},
		{"10.0.0.1:80", 403},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			resp, body := sv.do(t, "GET", "/api/v1/health", "", map[string]string{"Host": tt.host})
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.want, body)
			}
		})
	}
}

func TestIsLoopback(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true}, {"127.9.9.9:1", true}, {"[::1]:80", true}, {"::1", true}, {"localhost:9", true},
		{"127.0.0.1", true}, {"[fe80::1%lo]:1", false},
		{"0.0.0.0:8080", false}, {"[::]:8080", false}, {":8080", false}, {"192.168.1.2:80", false},
		{"example.com:80", false}, {"", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if got := isLoopback(tt.addr); got != tt.want {
				t.Errorf("isLoopback(%q) = %v, want %v", tt.addr, got, tt.want)
			}
		})
	}
}

// addrListener reports a different address than the one it listens on.
type addrListener struct {
	net.Listener
	addr net.Addr
}

func (l addrListener) Addr() net.Addr { return l.addr }

func TestServeTCPRefusals(t *testing.T) {
	anyAddr := &net.TCPAddr{IP: net.IPv4zero, Port: 8080}
	tests := []struct {
		name     string
		token    string
		insecure bool
		wantErr  string
	}{
		{"no token", "", false, "without a token"},
		{"plain HTTP off loopback", "tok", false, "refusing plain HTTP on non-loopback address 0.0.0.0:8080: give a certificate or --insecure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			s := New(&fakeBackend{}, Options{Token: tt.token})
			err = s.ServeTCP(context.Background(), addrListener{ln, anyAddr}, nil, tt.insecure)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ServeTCP: %v, want %q", err, tt.wantErr)
			}
			if _, err := ln.Accept(); err == nil {
				t.Error("listener left open")
			}
		})
	}
	t.Run("insecure off loopback serves with a warning", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		logs := &logBuffer{}
		s := New(&fakeBackend{}, Options{Token: "tok", Logger: logs.logger()})
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- s.ServeTCP(ctx, addrListener{ln, anyAddr}, nil, true) }()
		resp, err := http.Get("http://" + ln.Addr().String() + "/api/v1/health")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		cancel()
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || !strings.Contains(logs.String(), "INSECURE") {
			t.Errorf("status %d, logs %s", resp.StatusCode, logs.String())
		}
	})
}

// selfSigned makes a certificate for 127.0.0.1.
func selfSigned(t *testing.T) (tls.Certificate, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "homed"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, cert
}

func TestTLS(t *testing.T) {
	cert, leaf := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(&fakeBackend{}, Options{Token: "tok"})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.ServeTCP(ctx, ln, &tls.Config{Certificates: []tls.Certificate{cert}}, false) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("ServeTCP: %v", err)
		}
	})
	url := "https://" + ln.Addr().String() + "/api/v1/status"

	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	tests := []struct {
		name   string
		tr     *http.Transport
		wantOK bool
	}{
		{"pinned", &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}, true},
		{"not pinned", &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool()}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer tt.tr.CloseIdleConnections()
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", "Bearer tok")
			resp, err := (&http.Client{Transport: tt.tr}).Do(req)
			if !tt.wantOK {
				var unknown x509.UnknownAuthorityError
				if err == nil || !errors.As(err, &unknown) {
					t.Fatalf("got %v, want an unknown-authority error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.TLS == nil {
				t.Fatalf("status %d, TLS %v", resp.StatusCode, resp.TLS != nil)
			}
		})
	}
}

func chmod(t *testing.T, path string, mode fs.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
