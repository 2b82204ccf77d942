package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"codeberg.org/readeck/go-readability/v2/render"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// maxRedirects bounds the redirects web_fetch follows.
const maxRedirects = 10

// userAgent is what the web tools call themselves.
const userAgent = "Mozilla/5.0 (compatible; HologramAgent-web/1.0; +https://github.com/hologramagent/hologram)"

// Page is what web_fetch and web_browse read: the final URL, the title and the readable text.
type Page struct {
	URL       string
	Title     string
	Byline    string
	Text      string
	Truncated bool // the response was longer than the byte limit; the text is of its beginning
}

// Fetcher fetches pages over HTTP(S) through a [Guard]: only http and https, redirects
// re-checked, size and time limits. It is safe for concurrent use.
type Fetcher struct {
	guard    *Guard
	client   *http.Client
	timeout  time.Duration
	maxBytes int64
	log      *slog.Logger
}

// NewFetcher returns a fetcher with the given guard and limits.
func NewFetcher(g *Guard, timeout time.Duration, maxBytes int64, log *slog.Logger) *Fetcher {
	tr := &http.Transport{
		// Never a proxy from the environment: it would connect on our behalf, past the guard.
		Proxy:                  nil,
		DialContext:            g.DialContext(10 * time.Second),
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 1 << 20,
		MaxIdleConns:           8,
		IdleConnTimeout:        30 * time.Second,
	}
	f := &Fetcher{guard: g, timeout: timeout, maxBytes: maxBytes, log: log}
	f.client = &http.Client{Transport: tr, CheckRedirect: f.checkRedirect}
	return f
}

// ParseTarget checks a URL a tool was given: absolute http or https with a host.
func ParseTarget(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, errors.New("the url is empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", raw, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return nil, fmt.Errorf("url %q has no scheme: give an absolute http:// or https:// URL", raw)
	default:
		return nil, fmt.Errorf("url %q: scheme %q is refused: only http and https", raw, u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("url %q has no host", raw)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
			return nil, fmt.Errorf("url %q: port %q is not a number from 1 to 65535", raw, p)
		}
	}
	return u, nil
}

// port returns u's port, or the scheme's default.
func port(u *url.URL) uint16 {
	if p := u.Port(); p != "" {
		n, _ := strconv.ParseUint(p, 10, 16)
		return uint16(n)
	}
	if strings.EqualFold(u.Scheme, "https") {
		return 443
	}
	return 80
}

// checkRedirect re-checks every redirect: the scheme, and an address literal at once (names
// are checked when resolved).
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if _, err := ParseTarget(req.URL.String()); err != nil {
		return err
	}
	return f.guard.PreCheck(req.URL.Hostname(), port(req.URL))
}

// Fetch reads the page at raw: HTML becomes its readable text (title and main content), other
// text is returned as is, anything else is refused.
func (f *Fetcher) Fetch(ctx context.Context, raw string) (Page, error) {
	u, err := ParseTarget(raw)
	if err != nil {
		return Page{}, err
	}
	if err := f.guard.PreCheck(u.Hostname(), port(u)); err != nil {
		return Page{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Page{}, fmt.Errorf("request for %s: %w", u.Redacted(), err)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		return Page{}, fetchErr(u, err, f.timeout)
	}
	defer resp.Body.Close()
	final := resp.Request.URL
	if resp.StatusCode >= 400 {
		return Page{}, fmt.Errorf("fetch %s: HTTP %s", final.Redacted(), resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return Page{}, fetchErr(final, err, f.timeout)
	}
	truncated := int64(len(body)) > f.maxBytes
	if truncated {
		body = body[:f.maxBytes]
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = http.DetectContentType(body)
	}
	p, err := Extract(body, ct, final)
	if err != nil {
		return Page{}, fmt.Errorf("fetch %s: %w", final.Redacted(), err)
	}
	p.Truncated = truncated
	f.log.Info("fetched", "url", final.Redacted(), "bytes", len(body), "type", ct, "truncated", truncated)
	return p, nil
}

// fetchErr explains a failed request: a refusal of the guard (naming the redirect that led
// there, if any), a timeout, or the error itself.
func fetchErr(u *url.URL, err error, timeout time.Duration) error {
	what := "fetch " + u.Redacted()
	var uerr *url.Error
	if errors.As(err, &uerr) {
		if uerr.URL != u.String() {
			if r, perr := url.Parse(uerr.URL); perr == nil {
				what += ": redirected to " + r.Redacted()
			}
		}
		err = uerr.Err
	}
	var refused *RefusedError
	if errors.As(err, &refused) {
		return fmt.Errorf("%s: %w", what, refused)
	}
	var nerr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &nerr) && nerr.Timeout()) {
		return fmt.Errorf("%s: no complete answer within %s", what, timeout)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// isText reports whether a media type is read as plain text.
func isText(mt string) bool {
	switch {
	case strings.HasPrefix(mt, "text/"), mt == "application/json", mt == "application/xml",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"), mt == "application/javascript":
		return true
	}
	return false
}

// Extract turns a response body of content type ct from u into a page: HTML through
// readability (the page's main content; the whole body's text when readability finds none),
// other text decoded to UTF-8 as is. Other types are refused.
func Extract(body []byte, ct string, u *url.URL) (Page, error) {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
	}
	page := Page{URL: u.String()}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
	case isText(mt):
		b, err := toUTF8(body, ct)
		if err != nil {
			return Page{}, err
		}
		page.Text = strings.ToValidUTF8(string(b), "\uFFFD")
		return page, nil
	default:
		return Page{}, fmt.Errorf("content type %q is not a web page or text (web_fetch reads HTML and text; web_browse renders pages)", mt)
	}
	utf, err := toUTF8(body, ct)
	if err != nil {
		return Page{}, err
	}
	doc, err := html.Parse(bytes.NewReader(utf))
	if err != nil {
		return Page{}, fmt.Errorf("parsing HTML: %w", err)
	}
	parser := readability.NewParser()
	article, err := parser.ParseAndMutate(doc, u)
	if err == nil && article.Node != nil {
		var b strings.Builder
		if err := article.RenderText(&b); err == nil {
			page.Text = b.String()
		}
		page.Title, page.Byline = article.Title(), article.Byline()
	}
	if strings.TrimSpace(page.Text) == "" {
		// readability found no article (a short page, a list): the body's visible text.
		doc, err := html.Parse(bytes.NewReader(utf))
		if err != nil {
			return Page{}, fmt.Errorf("parsing HTML: %w", err)
		}
		if page.Title == "" {
			page.Title = titleOf(doc)
		}
		if body := find(doc, "body"); body != nil {
			page.Text = render.InnerText(body)
		}
	}
	page.Text = strings.TrimSpace(page.Text)
	page.Title = strings.TrimSpace(page.Title)
	return page, nil
}

// toUTF8 decodes a body by its byte-order mark, declared charset (header or meta) or, failing
// those, by sniffing (valid UTF-8 is UTF-8).
func toUTF8(body []byte, ct string) ([]byte, error) {
	r, err := charset.NewReader(bytes.NewReader(body), ct)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", ct, err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", ct, err)
	}
	return b, nil
}

// find returns the first element named tag in n's tree.
func find(n *html.Node, tag string) *html.Node {
	if n.Type == html.ElementNode && n.Data == tag {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, tag); f != nil {
			return f
		}
	}
	return nil
}

// titleOf returns the text of the document's <title>.
func titleOf(doc *html.Node) string {
	t := find(doc, "title")
	if t == nil || t.FirstChild == nil {
		return ""
	}
	return strings.Join(strings.Fields(t.FirstChild.Data), " ")
}

// Render formats a page for the model: title, URL, byline, then the text cut at maxChars
// characters (saying so).
func (p Page) Render(maxChars int) string {
	var b strings.Builder
	if p.Title != "" {
		b.WriteString("# " + p.Title + "\n")
	}
	b.WriteString("URL: " + p.URL + "\n")
	if p.Byline != "" {
		b.WriteString("By: " + p.Byline + "\n")
	}
	b.WriteString("\n")
	text := p.Text
	n := utf8.RuneCountInString(text)
	if n > maxChars {
		cut := 0
		for i := range text {
			if cut == maxChars {
				text = text[:i]
				break
			}
			cut++
		}
		b.WriteString(text)
		fmt.Fprintf(&b, "\n\n[cut: the first %d of %d characters]", maxChars, n)
	} else {
		b.WriteString(text)
	}
	if p.Truncated {
		b.WriteString("\n\n[the page was longer than the byte limit; this is its beginning]")
	}
	return b.String()
}
