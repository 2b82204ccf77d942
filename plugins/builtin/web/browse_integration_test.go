//go:build integration

package main

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// chromiumOrEmpty returns the chromium to test with, or "" without one, which fails the test
// under HOLOGRAM_CI=1.
func chromiumOrEmpty(t *testing.T) string {
	t.Helper()
	if p := findChromium(exec.LookPath); p != "" {
		return p
	}
	if os.Getenv("HOLOGRAM_CI") == "1" {
		t.Fatal("chromium is not installed (apt-get install chromium); HOLOGRAM_CI=1 needs it")
	}
	return ""
}

// chromiumOrSkip returns the chromium to test with; without one the test skips, or fails
// under HOLOGRAM_CI=1.
func chromiumOrSkip(t *testing.T) string {
	t.Helper()
	p := chromiumOrEmpty(t)
	if p == "" {
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	return p
}

// jsServer serves a page whose text appears only after its JavaScript ran (it fetches it from
// the same server), a redirect to private, a page with a subresource at private, and counts the
// requests that reached private.
func jsServer(t *testing.T, private string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><html><head><title>Before</title></head><body>
<p>static part</p><div id="out"></div>
<script>
fetch("/data").then(r => r.text()).then(t => {
  document.getElementById("out").textContent = t;
  document.title = "After JavaScript";
  const done = document.createElement("p"); done.id = "done"; done.textContent = "ready"; document.body.appendChild(done);
});
</script></body></html>`)
	})
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "rendered by JavaScript: 四十二")
	})
	mux.HandleFunc("/to-private", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, private, http.StatusFound)
	})
	mux.HandleFunc("/leaky", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><body><p>a page that calls home</p><img src="`+private+`/pixel.png">
<script>fetch("`+private+`/steal").catch(() => {}).finally(() => { const d = document.createElement("p"); d.id = "done"; d.textContent = "tried"; document.body.appendChild(d); });</script></body></html>`)
	})
	mux.HandleFunc("/red", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><body style="margin:0;background:#ff0000"><h1>red</h1></body></html>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// privateServer is a loopback server not allow-listed: every request reaching it is a failure.
func privateServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "SECRET")
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestBrowse(t *testing.T) {
	exe := chromiumOrSkip(t)
	priv, hits := privateServer(t)
	srv := jsServer(t, priv.URL)
	g := allowOnly(t, srv)
	b := NewBrowser(g, exe, time.Minute, discard())
	b.tmpDir = t.TempDir()
	var cmdline []string
	b.started = func(pid int, dir string) {
		raw, err := os.ReadFile("/proc/" + itoa(pid) + "/cmdline")
		if err != nil {
			t.Errorf("reading the browser's command line: %v", err)
			return
		}
		cmdline = strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	}
	ctx := context.Background()

	t.Run("a page that needs JavaScript", func(t *testing.T) {
		res, err := b.Browse(ctx, BrowseRequest{URL: srv.URL + "/js", WaitFor: "#done"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Text, "rendered by JavaScript: 四十二") || res.Title != "After JavaScript" || res.URL != srv.URL+"/js" {
			t.Fatalf("result %+v", res.Page)
		}
		// Without JavaScript the text is not there: web_fetch does not see it.
		p, err := NewFetcher(g, time.Minute, 1<<20, discard()).Fetch(ctx, srv.URL+"/js")
		if err != nil || strings.Contains(p.Text, "rendered by JavaScript") {
			t.Fatalf("web_fetch saw %q (%v): the page's text is not JavaScript's", p.Text, err)
		}
		// chromium ran with exactly our flags and a fresh profile, removed afterwards.
		want := []string{"--disable-background-networking", "--disable-component-update", "--disable-gpu", "--headless",
			"--no-first-run", "--no-sandbox", "--remote-debugging-pipe", "--user-data-dir=" + res.UserDataDir, "about:blank"}
		got := slices.Clone(cmdline[1:])
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("chromium's arguments %q, want %q", cmdline[1:], want)
		}
		if !strings.HasPrefix(res.UserDataDir, b.tmpDir) {
			t.Errorf("profile %s is not a fresh directory under %s", res.UserDataDir, b.tmpDir)
		}
		if _, err := os.Stat(res.UserDataDir); !os.IsNotExist(err) {
			t.Errorf("the profile directory %s is still there (%v)", res.UserDataDir, err)
		}
		if err := exec.Command("kill", "-0", itoa(res.Process)).Run(); err == nil {
			t.Errorf("chromium (pid %d) still runs", res.Process)
		}
	})

	t.Run("a redirect to a private address is refused", func(t *testing.T) {
		_, err := b.Browse(ctx, BrowseRequest{URL: srv.URL + "/to-private"})
		if err == nil || !strings.Contains(err.Error(), "a loopback address, not allow-listed") {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("a private address as the target is refused before chromium starts", func(t *testing.T) {
		_, err := b.Browse(ctx, BrowseRequest{URL: priv.URL + "/"})
		if err == nil || !strings.Contains(err.Error(), "a loopback address, not allow-listed") {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("the page's own requests to private addresses are refused", func(t *testing.T) {
		res, err := b.Browse(ctx, BrowseRequest{URL: srv.URL + "/leaky", WaitFor: "#done"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Refused) < 2 || !strings.Contains(strings.Join(res.Refused, "\n"), "/steal") {
			t.Fatalf("refused %q", res.Refused)
		}
	})

	t.Run("a screenshot is a PNG", func(t *testing.T) {
		res, err := b.Browse(ctx, BrowseRequest{URL: srv.URL + "/red", Screenshot: true})
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(res.Screenshot))
		if err != nil {
			t.Fatalf("the screenshot is not a PNG: %v", err)
		}
		if bd := img.Bounds(); bd.Dx() != viewportWidth || bd.Dy() != viewportHeight {
			t.Fatalf("screenshot %v, want %dx%d", bd, viewportWidth, viewportHeight)
		}
		r, gr, bl, _ := img.At(viewportWidth-5, viewportHeight-5).RGBA()
		if r>>8 < 240 || gr>>8 > 15 || bl>>8 > 15 {
			t.Fatalf("the page's red background is %d,%d,%d in the screenshot", r>>8, gr>>8, bl>>8)
		}
	})

	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the private server", n)
	}
}

// TestBrowseKernelAPIRefused: the kernel's own API stays out of reach of the browser even when
// its whole loopback range is allow-listed.
func TestBrowseKernelAPIRefused(t *testing.T) {
	exe := chromiumOrSkip(t)
	kernelAPI, hits := privateServer(t)
	srv := jsServer(t, kernelAPI.URL)
	allow, _ := ParseAllow([]string{"127.0.0.0/8"})
	deny, err := ParseDeny([]string{kernelAPI.Listener.Addr().String()}, "the kernel's own API (HOLOGRAM_LISTEN)")
	if err != nil {
		t.Fatal(err)
	}
	b := NewBrowser(NewGuard(allow, deny, nil), exe, time.Minute, discard())
	b.tmpDir = t.TempDir()
	res, err := b.Browse(context.Background(), BrowseRequest{URL: srv.URL + "/leaky", WaitFor: "#done"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Refused) == 0 || !strings.Contains(res.Refused[0], "the kernel's own API") {
		t.Fatalf("refused %q", res.Refused)
	}
	_, port, _ := net.SplitHostPort(kernelAPI.Listener.Addr().String())
	if _, err := b.Browse(context.Background(), BrowseRequest{URL: "http://localhost:" + port + "/api/v1/health"}); err == nil ||
		!strings.Contains(err.Error(), "the kernel's own API") {
		t.Fatalf("browsing the kernel's API by name: %v", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the kernel's API", n)
	}
}

func TestBrowseWithoutChromium(t *testing.T) {
	b := NewBrowser(NewGuard(nil, nil, nil), "", time.Minute, discard())
	if _, err := b.Browse(context.Background(), BrowseRequest{URL: "https://example.com/"}); err == nil ||
		!strings.Contains(err.Error(), "apt-get install chromium") {
		t.Fatalf("err %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
