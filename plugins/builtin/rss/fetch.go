package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mmcdole/gofeed"
)

// Fetch limits.
const (
	maxFeedBytes  = 8 << 20
	fetchTimeout  = 30 * time.Second
	maxRedirects  = 5
	userAgent     = "HologramAgent-rss/1.0 (+https://github.com/hologramagent/hologram)"
	acceptHeaders = "application/rss+xml, application/atom+xml, application/feed+json, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5"
)

// ErrBlockedAddress is wrapped by the error of a fetch whose target is a loopback, private,
// link-local or otherwise non-public address that is not allow-listed.
var ErrBlockedAddress = errors.New("address not allowed")

// cgnat is the shared address space of carrier-grade NAT (RFC 6598), not public either.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// Guard decides which addresses the plugin may connect to: public unicast addresses, and the
// allow-listed prefixes. It keeps the agent from reaching its own API, the LAN or cloud
// metadata services through a feed URL (or a redirect, or a DNS name pointing there).
type Guard struct {
	Allow []netip.Prefix
}

// Check returns an error wrapping [ErrBlockedAddress] when ip may not be connected to.
func (g Guard) Check(ip netip.Addr) error {
	ip = ip.Unmap()
	for _, p := range g.Allow {
		if p.Contains(ip) {
			return nil
		}
	}
	var kind string
	switch {
	case ip.IsLoopback():
		kind = "a loopback"
	case ip.IsPrivate() || cgnat.Contains(ip):
		kind = "a private"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		kind = "a link-local"
	case ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() || !ip.IsGlobalUnicast():
		kind = "a non-public"
	default:
		return nil
	}
	return fmt.Errorf("%w: %s is %s address (allow it with %s)", ErrBlockedAddress, ip, kind, EnvAllow)
}

// control is the dialer's check of every address it connects to (after DNS resolution).
func (g Guard) control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrBlockedAddress, address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %q is not an IP address", ErrBlockedAddress, host)
	}
	return g.Check(ip)
}

// Fetcher downloads feeds with conditional requests through the guard. Safe for concurrent
// use.
type Fetcher struct {
	client *http.Client
	parser *gofeed.Parser
}

// NewFetcher returns a fetcher whose connections g checks. With a proxy configured, the
// connection to the proxy itself is allowed (the owner chose it) and the feed's host is
// checked by resolving it before the request.
func NewFetcher(g Guard, cfg Config) *Fetcher {
	guarded := &net.Dialer{Timeout: 10 * time.Second, Control: g.control}
	plain := &net.Dialer{Timeout: 10 * time.Second}
	proxyFor := cfg.Proxy.ProxyFunc()
	proxies := map[string]bool{}
	for _, p := range []string{cfg.Proxy.HTTPProxy, cfg.Proxy.HTTPSProxy} {
		if u, err := url.Parse(p); err == nil && u.Host != "" {
			proxies[hostPort(u)] = true
		}
	}
	tr := &http.Transport{
		Proxy: func(req *http.Request) (*url.URL, error) {
			u, err := proxyFor(req.URL)
			if err != nil || u == nil {
				return nil, err
			}
			if err := checkHost(req.Context(), g, req.URL.Hostname()); err != nil {
				return nil, err
			}
			return u, nil
		},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if proxies[addr] {
				return plain.DialContext(ctx, network, addr)
			}
			return guarded.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 20 * time.Second,
		MaxIdleConns:          10,
		IdleConnTimeout:       90 * time.Second,
	}
	client := &http.Client{Transport: tr, Timeout: fetchTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to %q: only http and https are fetched", req.URL.Scheme)
			}
			return nil
		}}
	return &Fetcher{client: client, parser: gofeed.NewParser()}
}

// hostPort is u's host with the scheme's default port when it has none.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// checkHost resolves host and checks every address it has.
func checkHost(ctx context.Context, g Guard, host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		return g.Check(ip)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", host, err)
	}
	for _, a := range addrs {
		if err := g.Check(a); err != nil {
			return fmt.Errorf("%s resolves to a blocked address: %w", host, err)
		}
	}
	return nil
}

// Fetched is the outcome of one fetch.
type Fetched struct {
	NotModified  bool         // 304: nothing changed since ETag/LastModified
	Feed         *gofeed.Feed // the parsed feed (nil when NotModified)
	ETag         string
	LastModified string
}

// HTTPError is a response other than 200 or 304.
type HTTPError struct {
	Status     string
	Code       int
	RetryAfter time.Duration // from Retry-After, on 429 and 503
}

// Error implements error.
func (e *HTTPError) Error() string {
	s := "the server answered " + e.Status
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return s
}

// ValidateURL checks a feed URL: absolute http or https with a host.
func ValidateURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("feed url %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("feed url %q: only http and https feeds are supported", raw)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("feed url %q has no host", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("feed url %q: credentials in the URL are not supported", raw)
	}
	u.Fragment = ""
	u.Host = strings.ToLower(u.Host)
	return u, nil
}

// Fetch downloads and parses the feed at rawURL; etag and lastModified, when set, make the
// request conditional. now is the time Retry-After dates are measured from.
func (f *Fetcher) Fetch(ctx context.Context, rawURL, etag, lastModified string, now time.Time) (Fetched, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return Fetched{}, fmt.Errorf("feed url %q: %w", rawURL, err)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", acceptHeaders)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	if lastModified != "" {
		req.Header.Set("If-Modified-Since", lastModified)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return Fetched{}, fmt.Errorf("fetching %s: %w", rawURL, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified:
		return Fetched{NotModified: true, ETag: etag, LastModified: lastModified}, nil
	case resp.StatusCode != http.StatusOK:
		e := &HTTPError{Status: resp.Status, Code: resp.StatusCode}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			e.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), now)
		}
		return Fetched{}, fmt.Errorf("fetching %s: %w", rawURL, e)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFeedBytes+1))
	if err != nil {
		return Fetched{}, fmt.Errorf("reading %s: %w", rawURL, err)
	}
	if len(body) > maxFeedBytes {
		return Fetched{}, fmt.Errorf("the feed at %s is larger than %d MiB", rawURL, maxFeedBytes>>20)
	}
	feed, err := f.parser.Parse(bytes.NewReader(body))
	if err != nil {
		if errors.Is(err, gofeed.ErrFeedTypeNotDetected) {
			return Fetched{}, fmt.Errorf("%s is not an RSS, Atom or JSON feed (Content-Type %q)", rawURL, resp.Header.Get("Content-Type"))
		}
		return Fetched{}, fmt.Errorf("%s is a malformed feed: %w", rawURL, err)
	}
	return Fetched{Feed: feed, ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}, nil
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date after now.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if n, err := strconv.Atoi(h); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
