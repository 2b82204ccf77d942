package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
)

func TestGuard(t *testing.T) {
	t.Parallel()
	g := Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.9.0.0/16")}}
	tests := []struct{ ip, wantErr string }{
		{"93.184.216.34", ""},
		{"2606:2800:220:1:248:1893:25c8:1946", ""},
		{"127.0.0.1", ""}, // allow-listed
		{"10.9.3.4", ""},  // allow-listed
		{"127.0.0.2", "127.0.0.2 is a loopback address"},
		{"::1", "::1 is a loopback address"},
		{"::ffff:127.0.0.5", "127.0.0.5 is a loopback address"},
		{"10.1.2.3", "10.1.2.3 is a private address"},
		{"192.168.1.1", "a private address"},
		{"172.16.0.1", "a private address"},
		{"fd00::1", "a private address"},
		{"100.64.0.1", "a private address"},
		{"169.254.169.254", "169.254.169.254 is a link-local address"},
		{"fe80::1", "a link-local address"},
		{"0.0.0.0", "a non-public address"},
		{"224.0.0.1", "a link-local address"},
		{"239.1.2.3", "a non-public address"},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			err := g.Check(netip.MustParseAddr(tt.ip))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrBlockedAddress) || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), EnvAllow) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestValidateURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want, wantErr string }{
		{"https://Example.ORG/feed.xml#top", "https://example.org/feed.xml", ""},
		{" http://example.org/rss ", "http://example.org/rss", ""},
		{"ftp://example.org/feed", "", "only http and https"},
		{"example.org/feed", "", "only http and https"},
		{"https:///feed", "", "has no host"},
		{"https://user:pw@example.org/feed", "", "credentials in the URL"},
		{"http://[::1", "", "feed url"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			u, err := ValidateURL(tt.in)
			if plugintest.WantErr(t, err, tt.wantErr) {
				return
			}
			if err != nil || u.String() != tt.want {
				t.Fatalf("got %v %v, want %s", u, err, tt.want)
			}
		})
	}
}

// feedServer serves the testdata files; a request for /<file> answers it with an ETag and a
// Last-Modified, and 304 when the request carries them. hits counts requests.
type feedServer struct {
	*httptest.Server
	hits atomic.Int32
}

func newFeedServer(t *testing.T, handler http.HandlerFunc) *feedServer {
	t.Helper()
	fs := &feedServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.hits.Add(1)
		handler(w, r)
	}))
	t.Cleanup(fs.Close)
	return fs
}

// serveFile answers with testdata/name, conditional on its ETag ("name") and Last-Modified.
func serveFile(t *testing.T, w http.ResponseWriter, r *http.Request, name string) {
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Error(err)
		http.Error(w, err.Error(), 500)
		return
	}
	etag := `"` + name + `"`
	lastMod := "Wed, 06 May 2026 10:00:00 GMT"
	if r.Header.Get("If-None-Match") == etag && r.Header.Get("If-Modified-Since") == lastMod {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("ETag", etag)
	w.Header().Set("Last-Modified", lastMod)
	w.Header().Set("Content-Type", "application/xml")
	w.Write(raw)
}

func loopbackFetcher(t *testing.T) *Fetcher {
	t.Helper()
	allow, err := ParseAllow("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return NewFetcher(Guard{Allow: allow}, Config{})
}

func TestFetch(t *testing.T) {
	t.Parallel()
	srv := newFeedServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/news.rss", "/blog.atom", "/malformed.rss", "/page.html":
			serveFile(t, w, r, strings.TrimPrefix(r.URL.Path, "/"))
		case "/busy":
			w.Header().Set("Retry-After", "7200")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		case "/huge":
			w.Write([]byte("<rss>" + strings.Repeat(" ", maxFeedBytes)))
		case "/gone":
			http.Error(w, "gone", http.StatusGone)
		default:
			http.NotFound(w, r)
		}
	})
	f := loopbackFetcher(t)
	ctx := context.Background()
	now := time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC)

	res, err := f.Fetch(ctx, srv.URL+"/news.rss", "", "", now)
	if err != nil {
		t.Fatal(err)
	}
	if res.NotModified || res.Feed.Title != "Harbour Town Gazette" || len(res.Feed.Items) != 5 || res.ETag != `"news.rss"` ||
		res.LastModified != "Wed, 06 May 2026 10:00:00 GMT" {
		t.Fatalf("rss fetch %+v", res)
	}
	res, err = f.Fetch(ctx, srv.URL+"/news.rss", res.ETag, res.LastModified, now)
	if err != nil || !res.NotModified || res.Feed != nil || res.ETag != `"news.rss"` {
		t.Fatalf("conditional fetch: %+v %v", res, err)
	}
	res, err = f.Fetch(ctx, srv.URL+"/blog.atom", "", "", now)
	if err != nil || res.Feed.FeedType != "atom" || len(res.Feed.Items) != 2 || res.Feed.Items[1].Title != "潮汐表的读法" {
		t.Fatalf("atom fetch: %+v %v", res, err)
	}

	tests := []struct{ path, wantErr string }{
		{"/malformed.rss", "is a malformed feed"},
		{"/page.html", `is not an RSS, Atom or JSON feed (Content-Type "application/xml")`},
		{"/busy", "the server answered 429 Too Many Requests (retry after 2h0m0s)"},
		{"/gone", "the server answered 410 Gone"},
		{"/huge", "is larger than 8 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			_, err := f.Fetch(ctx, srv.URL+tt.path, "", "", now)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
	var he *HTTPError
	if _, err := f.Fetch(ctx, srv.URL+"/busy", "", "", now); !errors.As(err, &he) || he.RetryAfter != 2*time.Hour {
		t.Fatalf("429: %v", err)
	}
}

// listen127 serves h on 127.0.0.2, a loopback address that is not allow-listed.
func listen127(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listening on 127.0.0.2 (Linux routes 127.0.0.0/8 to lo): %v", err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestFetchRefusesNonPublicTargets(t *testing.T) {
	t.Parallel()
	var reached atomic.Bool
	hidden := listen127(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Store(true)
		serveFile(t, w, r, "news.rss")
	}))
	open := newFeedServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, hidden+"/news.rss", http.StatusFound)
	})
	ctx := context.Background()
	// Without an allow-list even the local test server is refused.
	if _, err := NewFetcher(Guard{}, Config{}).Fetch(ctx, open.URL+"/feed", "", "", time.Now()); !errors.Is(err, ErrBlockedAddress) ||
		!strings.Contains(err.Error(), "127.0.0.1 is a loopback address") {
		t.Fatalf("unlisted loopback: %v", err)
	}
	// An allowed server that redirects to a blocked address does not get the plugin there.
	if _, err := loopbackFetcher(t).Fetch(ctx, open.URL+"/feed", "", "", time.Now()); !errors.Is(err, ErrBlockedAddress) ||
		!strings.Contains(err.Error(), "127.0.0.2 is a loopback address") {
		t.Fatalf("redirect to a blocked address: %v", err)
	}
	if reached.Load() {
		t.Fatal("the blocked server was reached")
	}
}

// TestFetchThroughProxy: with a proxy configured, the proxy (on loopback) is reached, and the
// feed's host is checked before the request.
func TestFetchThroughProxy(t *testing.T) {
	t.Parallel()
	var asked atomic.Value
	proxy := newFeedServer(t, func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.URL.String()) // a proxy request carries the absolute URL
		serveFile(t, w, r, "blog.atom")
	})
	f := NewFetcher(Guard{}, Config{Proxy: proxyConfig(proxy.URL)})
	res, err := f.Fetch(context.Background(), "http://203.0.113.7/blog.atom", "", "", time.Now())
	if err != nil || res.Feed.Title != "Tidal Notes" || asked.Load() != "http://203.0.113.7/blog.atom" {
		t.Fatalf("through the proxy: %v %v (asked %v)", res.Feed, err, asked.Load())
	}
	hits := proxy.hits.Load()
	if _, err := f.Fetch(context.Background(), "http://10.20.30.40/feed", "", "", time.Now()); !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("private target through the proxy: %v", err)
	}
	if proxy.hits.Load() != hits {
		t.Fatal("the proxy was asked for a private target")
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"120", 2 * time.Minute},
		{"Wed, 06 May 2026 13:00:00 GMT", time.Hour},
		{"Wed, 06 May 2026 11:00:00 GMT", 0},
		{"soon", 0},
		{"", 0},
		{"-5", 0},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.in, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
