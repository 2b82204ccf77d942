package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is the qq plugin's configuration, read from the environment the kernel passes
// (README.md lists the variables).
type Config struct {
	// URL is the bridge's WebSocket (forward mode: the plugin dials it); Listen the address
	// the plugin listens on for the bridge (reverse mode). Exactly one is set.
	URL    string
	Listen string
	// Token is the OneBot access token (sent in forward mode, required in reverse mode).
	Token string
	// Owner is the owner's QQ number: the only sender whose turns may use the owner-only tools.
	Owner ID
	// Keywords make the plugin answer a group message that contains one (besides @-mentions).
	Keywords []string
	// Groups, when not empty, are the only groups the plugin answers in.
	Groups map[ID]bool
	// Rate is how many messages per partner the plugin passes on per Per (the owner is not
	// limited).
	Rate int
	Per  time.Duration
}

// Mode returns "forward" or "reverse".
func (c Config) Mode() string {
	if c.Listen != "" {
		return "reverse"
	}
	return "forward"
}

// Default rate limit per partner.
const (
	defaultRate = 5
	defaultPer  = time.Minute
)

// LoadConfig reads the configuration through getenv; readFile reads the token file.
func LoadConfig(getenv func(string) string, readFile func(string) ([]byte, fs.FileInfo, error)) (Config, error) {
	c := Config{Rate: defaultRate, Per: defaultPer, Groups: map[ID]bool{}}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	c.URL = strings.TrimSpace(getenv("HOLOGRAM_QQ_URL"))
	c.Listen = strings.TrimSpace(getenv("HOLOGRAM_QQ_LISTEN"))
	switch {
	case c.URL == "" && c.Listen == "":
		bad("set HOLOGRAM_QQ_URL (forward: the bridge's WebSocket, e.g. ws://127.0.0.1:3001) or HOLOGRAM_QQ_LISTEN (reverse: where the bridge connects, e.g. 127.0.0.1:6700)")
	case c.URL != "" && c.Listen != "":
		bad("set HOLOGRAM_QQ_URL (forward) or HOLOGRAM_QQ_LISTEN (reverse), not both")
	case c.URL != "":
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			bad("HOLOGRAM_QQ_URL %q: want ws://host:port or wss://host:port", c.URL)
		}
	default:
		if _, p, err := net.SplitHostPort(c.Listen); err != nil {
			bad("HOLOGRAM_QQ_LISTEN %q: want host:port (e.g. 127.0.0.1:6700): %w", c.Listen, err)
		} else if n, err := strconv.ParseUint(p, 10, 16); err != nil || (n == 0 && p != "0") {
			bad("HOLOGRAM_QQ_LISTEN %q: port %q is not a number from 0 to 65535", c.Listen, p)
		}
	}
	c.Token = getenv("HOLOGRAM_QQ_TOKEN")
	if f := strings.TrimSpace(getenv("HOLOGRAM_QQ_TOKEN_FILE")); f != "" {
		if c.Token != "" {
			bad("set HOLOGRAM_QQ_TOKEN or HOLOGRAM_QQ_TOKEN_FILE, not both")
		}
		b, fi, err := readFile(f)
		switch {
		case err != nil:
			bad("HOLOGRAM_QQ_TOKEN_FILE: %w", err)
		case fi.Mode().Perm()&0o077 != 0:
			bad("HOLOGRAM_QQ_TOKEN_FILE %s: mode %04o lets others read the token: chmod 600 it", f, fi.Mode().Perm())
		default:
			c.Token = string(b)
		}
	}
	c.Token = strings.TrimSpace(c.Token)
	if strings.ContainsAny(c.Token, "\r\n") {
		bad("the access token contains a line break")
	}
	if c.Listen != "" && c.Token == "" && !loopbackListen(c.Listen) {
		bad("HOLOGRAM_QQ_LISTEN %s is not a loopback address: set an access token (HOLOGRAM_QQ_TOKEN or HOLOGRAM_QQ_TOKEN_FILE) so that only the bridge can connect", c.Listen)
	}
	if v := strings.TrimSpace(getenv("HOLOGRAM_QQ_OWNER")); v != "" {
		if _, err := ID(v).Int(); err != nil {
			bad("HOLOGRAM_QQ_OWNER: %w", err)
		}
		c.Owner = ID(v)
	}
	for _, k := range strings.Split(getenv("HOLOGRAM_QQ_KEYWORDS"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			c.Keywords = append(c.Keywords, strings.ToLower(k))
		}
	}
	for _, g := range strings.FieldsFunc(getenv("HOLOGRAM_QQ_GROUPS"), func(r rune) bool { return r == ',' || r == ' ' }) {
		g = strings.TrimPrefix(g, "group_")
		if _, err := ID(g).Int(); err != nil {
			bad("HOLOGRAM_QQ_GROUPS: %w", err)
			continue
		}
		c.Groups[ID(g)] = true
	}
	if v := strings.TrimSpace(getenv("HOLOGRAM_QQ_RATE")); v != "" {
		n, per, err := parseRate(v)
		if err != nil {
			bad("HOLOGRAM_QQ_RATE %q: %w", v, err)
		}
		c.Rate, c.Per = n, per
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return c, nil
}

// parseRate reads "N/duration" (e.g. "5/1m", "20/1h").
func parseRate(s string) (int, time.Duration, error) {
	ns, ds, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, errors.New(`want N/duration, e.g. "5/1m"`)
	}
	n, err := strconv.Atoi(strings.TrimSpace(ns))
	if err != nil || n < 1 || n > 10000 {
		return 0, 0, fmt.Errorf("%q is not a number from 1 to 10000", ns)
	}
	d, err := time.ParseDuration(strings.TrimSpace(ds))
	if err != nil || d < time.Second || d > 24*time.Hour {
		return 0, 0, fmt.Errorf("%q is not a duration from 1s to 24h", ds)
	}
	return n, d, nil
}

// loopbackListen reports whether a listen address is on loopback only.
func loopbackListen(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if h == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// readTokenFile reads a token file and its mode.
func readTokenFile(path string) ([]byte, fs.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return nil, nil, fmt.Errorf("%s is not a regular file of at most 4096 bytes", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, nil, err
	}
	return b, fi, nil
}
