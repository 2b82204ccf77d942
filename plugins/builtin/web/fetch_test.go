package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/simplifiedchinese"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
)

// article is a page with navigation and scripts around its main content.
const article = `<!doctype html><html><head><title>Kites of Weifang</title>
<script>var tracker = "SCRIPT-NOISE";</script><style>.x{color:red}</style></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>Kites of Weifang</h1>
<p>Weifang in Shandong is called the kite capital of the world. Every April the city holds an international kite festival that draws flyers from dozens of countries.</p>
<p>The craft goes back more than two thousand years. Traditional kites are made of bamboo and silk, painted with dragons, centipedes and swallows, and some of them are many metres long.</p>
<p>Museums in the city keep the oldest pieces, and workshops still teach the old techniques to children during the summer holidays.</p>
</article><footer>Copyright FOOTER-NOISE</footer></body></html>`

// newTestServer serves a few pages; it fails the test on an unexpected path.
func newTestServer(t *testing.T, private string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/article", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, article)
	})
	mux.HandleFunc("/gbk", func(w http.ResponseWriter, r *http.Request) {
		b, err := simplifiedchinese.GBK.NewEncoder().String(`<html><head><title>天气</title></head><body><p>今天北京晴，最高气温二十五度。</p></body></html>`)
		if err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "text/html; charset=gbk")
		io.WriteString(w, b)
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "just text, 春眠不觉晓")
	})
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("0123456789", 1000))
	})
	mux.HandleFunc("/to-private", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, private, http.StatusFound)
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/to-article", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/article", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// allowOnly returns a guard admitting exactly the test server's address (and refusing deny).
func allowOnly(t *testing.T, srv *httptest.Server, deny ...string) *Guard {
	t.Helper()
	allow, err := ParseAllow([]string{srv.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDeny(deny, "the kernel's own API (HOLOGRAM_LISTEN)")
	if err != nil {
		t.Fatal(err)
	}
	return NewGuard(allow, d, nil)
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestFetch(t *testing.T) {
	t.Parallel()
	// Another loopback server, not allow-listed: redirects to it must be refused.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the guard let a request reach the private server: %s", r.URL)
	}))
	t.Cleanup(other.Close)
	_, otherPort, _ := net.SplitHostPort(other.Listener.Addr().String())
	srv := newTestServer(t, "http://localhost:"+otherPort+"/secret")
	f := NewFetcher(allowOnly(t, srv), 5*time.Second, 4096, discard())
	ctx := context.Background()
	tests := []struct {
		path            string
		want, notWant   []string
		wantErr         string
		title           string
		truncated, text bool
	}{
		{path: "/article", title: "Kites of Weifang", want: []string{"kite capital of the world", "bamboo and silk"},
			notWant: []string{"SCRIPT-NOISE", "color:red"}},
		{path: "/to-article", title: "Kites of Weifang", want: []string{"kite capital"}},
		{path: "/gbk", title: "天气", want: []string{"今天北京晴，最高气温二十五度。"}},
		{path: "/plain", want: []string{"just text, 春眠不觉晓"}},
		{path: "/big", truncated: true, want: []string{"0123456789"}},
		{path: "/png", wantErr: `content type "image/png" is not a web page or text`},
		{path: "/missing", wantErr: "HTTP 404 Not Found"},
		// localhost is a name: it passes the early check and is refused at connect time, on
		// the address it resolved to.
		{path: "/to-private", wantErr: "redirected to http://localhost:" + otherPort + "/secret: refused to connect to localhost ("},
		{path: "/to-file", wantErr: `redirected to file:///etc/passwd: url "file:///etc/passwd": scheme "file" is refused: only http and https`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p, err := f.Fetch(ctx, srv.URL+tt.path)
			if plugintest.WantErr(t, err, tt.wantErr) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Title != tt.title || p.Truncated != tt.truncated {
				t.Errorf("title %q truncated %v, want %q %v", p.Title, p.Truncated, tt.title, tt.truncated)
			}
			for _, w := range tt.want {
				if !strings.Contains(p.Text, w) {
					t.Errorf("text lacks %q:\n%s", w, p.Text)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(p.Text, w) {
					t.Errorf("text has %q:\n%s", w, p.Text)
				}
			}
		})
	}
	if p, _ := f.Fetch(ctx, srv.URL+"/big"); len(p.Text) != 4096 {
		t.Errorf("a response over the byte limit gave %d bytes of text, want the first 4096", len(p.Text))
	}
}

func TestFetchRefusals(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, "http://10.255.255.1/")
	// The "kernel": a server on an allow-listed loopback range, named as the kernel's API.
	kernelAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the web tools reached the kernel's API: %s", r.URL)
	}))
	t.Cleanup(kernelAPI.Close)
	allow, err := ParseAllow([]string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	deny, err := ParseDeny([]string{kernelAPI.Listener.Addr().String()}, "the kernel's own API (HOLOGRAM_LISTEN)")
	if err != nil {
		t.Fatal(err)
	}
	f := NewFetcher(NewGuard(allow, deny, nil), 5*time.Second, 1<<20, discard())
	strict := NewFetcher(NewGuard(nil, nil, nil), 5*time.Second, 1<<20, discard())
	_, kport, _ := net.SplitHostPort(kernelAPI.Listener.Addr().String())
	tests := []struct {
		name    string
		f       *Fetcher
		url     string
		wantErr string
	}{
		{"empty", f, "  ", "the url is empty"},
		{"relative", f, "/etc/passwd", "has no scheme"},
		{"file", f, "file:///etc/passwd", `scheme "file" is refused`},
		{"ftp", f, "ftp://example.com/x", `scheme "ftp" is refused`},
		{"no host", f, "http:///x", "has no host"},
		{"bad port", f, "http://example.com:0/", "is not a number from 1 to 65535"},
		{"redirect to a private address", f, srv.URL + "/to-private", "/to-private: redirected to http://10.255.255.1/: refused to connect to 10.255.255.1:80: a private-range address, not allow-listed"},
		{"the kernel's API", f, kernelAPI.URL + "/api/v1/health", "the kernel's own API (HOLOGRAM_LISTEN) (never reachable from the web tools)"},
		{"the kernel's API by name", f, "http://localhost:" + kport + "/api/v1/health", "the kernel's own API"},
		{"loopback without an allow rule", strict, srv.URL + "/article", "a loopback address, not allow-listed (HOLOGRAM_WEB_ALLOW)"},
		{"metadata service", strict, "http://169.254.169.254/latest/meta-data/", "a link-local address"},
		{"unspecified", strict, "http://0.0.0.0:" + kport + "/", "unspecified"},
		{"ipv6 loopback", strict, "http://[::1]:" + kport + "/", "a loopback address"},
		{"mapped loopback", strict, "http://[::ffff:127.0.0.1]:" + kport + "/", "a loopback address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.f.Fetch(context.Background(), tt.url)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestFetchTimeout(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, "")
	f := NewFetcher(allowOnly(t, srv), 200*time.Millisecond, 1<<20, discard())
	_, err := f.Fetch(context.Background(), srv.URL+"/hang")
	if err == nil || !strings.Contains(err.Error(), "no complete answer within 200ms") {
		t.Fatalf("err %v", err)
	}
}

// TestFetchIgnoresProxyEnvironment: a proxy from the environment would connect on the tools'
// behalf, past the guard.
func TestFetchIgnoresProxyEnvironment(t *testing.T) {
	proxied := false
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { proxied = true }))
	t.Cleanup(proxy.Close)
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	srv := newTestServer(t, "")
	f := NewFetcher(allowOnly(t, srv), 5*time.Second, 1<<20, discard())
	if _, err := f.Fetch(context.Background(), srv.URL+"/plain"); err != nil {
		t.Fatal(err)
	}
	if proxied {
		t.Fatal("the request went through the environment's proxy")
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	p := Page{URL: "https://example.com/", Title: "T", Byline: "B", Text: "春眠不觉晓处处闻啼鸟"}
	tests := []struct {
		max  int
		want string
	}{
		{100, "# T\nURL: https://example.com/\nBy: B\n\n春眠不觉晓处处闻啼鸟"},
		{5, "# T\nURL: https://example.com/\nBy: B\n\n春眠不觉晓\n\n[cut: the first 5 of 10 characters]"},
	}
	for _, tt := range tests {
		if got := p.Render(tt.max); got != tt.want {
			t.Errorf("Render(%d) = %q, want %q", tt.max, got, tt.want)
		}
	}
	p.Truncated = true
	if !strings.HasSuffix(p.Render(100), "[the page was longer than the byte limit; this is its beginning]") {
		t.Error("a truncated page does not say so")
	}
}

func TestExtractFallsBackToBodyText(t *testing.T) {
	t.Parallel()
	u, _ := url.Parse("https://example.com/list")
	p, err := Extract([]byte(`<html><head><title> A   list </title></head><body><ul><li>one</li><li>two</li></ul><script>x()</script></body></html>`),
		"text/html", u)
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "A list" || !strings.Contains(p.Text, "one") || !strings.Contains(p.Text, "two") || strings.Contains(p.Text, "x()") {
		t.Fatalf("page %+v", p)
	}
}

func BenchmarkExtractArticle(b *testing.B) {
	u, _ := url.Parse("https://example.com/kites")
	body := []byte(article)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := Extract(body, "text/html; charset=utf-8", u); err != nil {
			b.Fatal(err)
		}
	}
}
