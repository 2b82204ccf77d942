//go:build integration

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// 800 slow connections without the token (half trickling their headers, half a body) from
// loopback: every one is closed within 15 s, and requests with the token are answered meanwhile.
func TestSlowUnauthenticatedConnectionsAreBounded(t *testing.T) {
	e := newEnv(t)
	tokFile := filepath.Join(e.root, "token")
	h := e.start("--listen", "127.0.0.1:0", "--token-file", tokFile)
	addr, _ := h.listening(t)
	raw, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(raw))

	const n = 800
	var (
		wg       sync.WaitGroup
		closedIn = make([]time.Duration, n)
		opened   atomic.Int32
	)
	t0 := time.Now()
	stop := make(chan struct{})
	for i := range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		opened.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			// The header block never ends (slowloris), or ends and the body trickles.
			head := "POST /api/v1/chat HTTP/1.1\r\nHost: " + addr + "\r\n"
			if i%2 == 1 {
				head += "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
			}
			c.Write([]byte(head))
			closed := make(chan struct{})
			go func() { // the server closing the connection ends this read
				io.Copy(io.Discard, c)
				close(closed)
			}()
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-closed:
					closedIn[i] = time.Since(t0)
					return
				case <-stop:
					closedIn[i] = -1
					return
				case <-tick.C:
					if i%2 == 0 {
						c.Write([]byte("X-Slow: 1\r\n"))
					} else {
						c.Write([]byte(" "))
					}
				}
			}
		}()
	}
	t.Logf("%d slow connections opened in %s", opened.Load(), time.Since(t0).Round(time.Millisecond))

	// Meanwhile the owner's requests, each on a new connection, are answered.
	owner := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var answered, worst time.Duration
	okCount := 0
	for time.Since(t0) < 12*time.Second {
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/status", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		s := time.Now()
		resp, err := owner.Do(req)
		if err != nil {
			t.Fatalf("authenticated request during the flood: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("authenticated request during the flood: HTTP %d", resp.StatusCode)
		}
		d := time.Since(s)
		answered += d
		worst = max(worst, d)
		okCount++
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%d authenticated requests answered during the flood, mean %s, worst %s", okCount,
		(answered / time.Duration(okCount)).Round(time.Microsecond), worst.Round(time.Microsecond))

	deadline := time.AfterFunc(15*time.Second-time.Since(t0), func() { close(stop) })
	wg.Wait()
	deadline.Stop()
	var open int
	var last time.Duration
	for _, d := range closedIn {
		if d < 0 {
			open++
		}
		last = max(last, d)
	}
	if open > 0 {
		t.Fatalf("%d of %d slow connections still open 15 s after they began", open, n)
	}
	t.Logf("all %d slow connections closed by the server, the last after %s", n, last.Round(time.Millisecond))
}

// An error repeats at most 200 bytes of what the caller sent.
func TestErrorsEchoBoundedInput(t *testing.T) {
	e := newEnv(t)
	e.start()
	long := strings.Repeat("s", 100<<10)
	for _, tc := range []struct {
		name, method, path string
		body               any
	}{
		{"session id in a chat", "POST", "/api/v1/chat", map[string]any{"session": long, "input": "hi"}},
		{"unknown field", "POST", "/api/v1/chat", map[string]any{long: 1, "input": "hi"}},
		{"session id in the path", "PATCH", "/api/v1/sessions/" + strings.Repeat("p", 30<<10), map[string]any{"title": "t"}},
		{"route", "GET", "/api/v1/" + strings.Repeat("r", 30<<10), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != nil {
				j, _ := json.Marshal(tc.body)
				body = bytes.NewReader(j)
			}
			req, _ := http.NewRequest(tc.method, "http://hologram"+tc.path, body)
			req.Header.Set("Content-Type", "application/json")
			resp, err := e.unixHTTP().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			if resp.StatusCode < 400 {
				t.Fatalf("HTTP %d: %.300s", resp.StatusCode, out)
			}
			if len(out) > 600 {
				t.Fatalf("HTTP %d: the error is %d bytes: %.400s", resp.StatusCode, len(out), out)
			}
			t.Logf("HTTP %d, %d bytes: %s", resp.StatusCode, len(out), bytes.TrimSpace(out))
		})
	}
}
