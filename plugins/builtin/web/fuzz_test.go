package main

import (
	"net/url"
	"testing"
	"unicode/utf8"
)

// FuzzExtract feeds the web plugin's page extraction arbitrary bodies and content types, as any
// web server may send them: it never panics and what it renders is valid UTF-8 within the
// asked length.
func FuzzExtract(f *testing.F) {
	for _, s := range []struct{ body, ct string }{
		{`<html><head><title>T</title><meta name="author" content="A"></head><body><article><h1>H</h1><p>Some <b>text</b>.</p><script>x()</script></article></body></html>`, "text/html; charset=utf-8"},
		{"<p>\xc4\xe3\xba\xc3</p>", "text/html; charset=gbk"},
		{"plain text\nline 2", "text/plain"},
		{`{"a":1}`, "application/json"},
		{"<html><body><div><div><div>", "text/html"},
		{"\x00\x01\x02", ""},
		{"<table><tr><td>1</td></tr></table><ul><li>a<li>b</ul>", "text/html; charset=bogus"},
	} {
		f.Add([]byte(s.body), s.ct)
	}
	u, _ := url.Parse("https://example.com/page")
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		p, err := Extract(body, ct, u)
		if err != nil {
			return
		}
		out := p.Render(2000)
		if !utf8.ValidString(out) {
			t.Fatalf("rendered page is not valid UTF-8: %q", out)
		}
	})
}
