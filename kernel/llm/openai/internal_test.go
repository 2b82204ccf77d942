package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/llm"
)

const envProxy = "http://envproxy.example:3128"

// TestMain sets the proxy environment before anything reads it: http.ProxyFromEnvironment reads
// it once per process. Loopback addresses are never proxied, so the httptest servers are unaffected.
func TestMain(m *testing.M) {
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy", "REQUEST_METHOD"} {
		os.Unsetenv(k)
	}
	os.Setenv("HTTPS_PROXY", envProxy)
	os.Exit(m.Run())
}

func TestProxySelection(t *testing.T) {
	tests := []struct {
		name   string
		proxy  string
		target string
		want   string
	}{
		{"environment for remote https", "", "https://api.example.com/v1/chat/completions", envProxy},
		{"environment skips loopback", "", "https://127.0.0.1:8080/v1/chat/completions", ""},
		{"per-provider proxy overrides environment", "http://corp.example:8080", "https://api.example.com/v1/chat/completions", "http://corp.example:8080"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(Config{Name: "p", BaseURL: "https://api.example.com/v1", Proxy: tt.proxy})
			if err != nil {
				t.Fatal(err)
			}
			tr, ok := c.hc.Transport.(*http.Transport)
			if !ok || tr.Proxy == nil {
				t.Fatalf("transport %T has no Proxy func", c.hc.Transport)
			}
			req, _ := http.NewRequest(http.MethodPost, tt.target, nil)
			u, err := tr.Proxy(req)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if u != nil {
				got = u.String()
			}
			if got != tt.want {
				t.Errorf("proxy for %s = %q, want %q", tt.target, got, tt.want)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"3", 3 * time.Second},
		{"0.5", 500 * time.Millisecond},
		{"600", time.Minute},
		{"-4", 0},
		{now.Add(7 * time.Second).Format(http.TimeFormat), 7 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"soon", 0},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := parseRetryAfter(tt.in, now); got != tt.want {
				t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i, w := range want {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got := backoff(i); got != w {
				t.Errorf("backoff(%d) = %v, want %v", i, got, w)
			}
		})
	}
	if got := backoff(80); got != maxBackoff {
		t.Errorf("backoff(80) = %v, want cap", got)
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("界", 200) // 600 bytes
	got := excerpt([]byte(long))
	if len(got) > maxExcerpt || !strings.HasPrefix(long, got) {
		t.Errorf("excerpt cut badly: %d bytes", len(got))
	}
	if got := excerpt([]byte("  <html>\n  bad gateway \n</html>")); got != "<html> bad gateway </html>" {
		t.Errorf("excerpt = %q", got)
	}
}

// streamBody is a realistic stream: role chunk, text in pieces, two tool calls with fragmented
// arguments, a usage-only chunk and [DONE].
func streamBody(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}` + "\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"piece %d of the answer \"},\"finish_reason\":null}]}\n\n", i)
		if i%50 == 0 {
			b.WriteString(": keep-alive\n\n")
		}
	}
	b.WriteString(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"ci"}}]}}]}` + "\n\n")
	b.WriteString(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"北京\"}"}}]}}]}` + "\n\n")
	b.WriteString(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n")
	b.WriteString(`data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

func BenchmarkStreamParse(b *testing.B) {
	c, err := New(Config{Name: "bench", BaseURL: "http://127.0.0.1/v1"})
	if err != nil {
		b.Fatal(err)
	}
	body := streamBody(1000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.parseStream(bytes.NewReader(body), func(llm.Delta) {})
		if err != nil || len(resp.Message.ToolCalls) != 1 {
			b.Fatalf("parse: %v %+v", err, resp.Message.ToolCalls)
		}
	}
}

func TestGarbageStreamIsNotRetried(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>502 Bad Gateway</body></html>\n")
	}))
	defer srv.Close()
	c, err := New(Config{Name: "p", BaseURL: srv.URL, Model: "m", Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}}, func(llm.Delta) {})
	if err == nil || !strings.Contains(err.Error(), "invalid JSON") || !strings.Contains(err.Error(), "502 Bad Gateway") {
		t.Fatalf("err = %v", err)
	}
	if calls != 1 {
		t.Fatalf("garbage retried: %d calls", calls)
	}
}
