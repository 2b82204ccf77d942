package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limits of the configuration.
const (
	defaultTimeout  = 30 * time.Second
	maxTimeout      = 2 * time.Minute
	defaultMaxBytes = 5 << 20
	minMaxBytes     = 1 << 10
	maxMaxBytes     = 64 << 20
)

// Config is the web plugin's configuration, read from the environment the kernel passes
// (README.md lists the variables).
type Config struct {
	// Allow admits non-public targets (HOLOGRAM_WEB_ALLOW).
	Allow []allowRule
	// Deny are endpoints never reachable: the kernel's API (HOLOGRAM_LISTEN, HOLOGRAM_WEB_DENY).
	Deny []denyRule
	// Timeout bounds one tool call (HOLOGRAM_WEB_TIMEOUT).
	Timeout time.Duration
	// MaxBytes bounds the bytes read of one response (HOLOGRAM_WEB_MAX_BYTES).
	MaxBytes int64
	// Chromium is the browser web_browse runs (HOLOGRAM_WEB_CHROMIUM); "" when none was found:
	// web_browse then fails with a clear error and web_fetch still works.
	Chromium string
}

// LoadConfig reads the configuration through getenv; lookPath finds programs (exec.LookPath).
func LoadConfig(getenv func(string) string, lookPath func(string) (string, error)) (Config, error) {
	c := Config{Timeout: defaultTimeout, MaxBytes: defaultMaxBytes}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	var err error
	if c.Allow, err = ParseAllow(splitList(getenv("HOLOGRAM_WEB_ALLOW"))); err != nil {
		bad("HOLOGRAM_WEB_ALLOW: %w", err)
	}
	if d, err := ParseDeny(splitList(getenv("HOLOGRAM_WEB_DENY")), "a denied endpoint (HOLOGRAM_WEB_DENY)"); err != nil {
		bad("HOLOGRAM_WEB_DENY: %w", err)
	} else {
		c.Deny = append(c.Deny, d...)
	}
	if v := strings.TrimSpace(getenv("HOLOGRAM_LISTEN")); v != "" {
		if d, err := ParseDeny([]string{v}, "the kernel's own API (HOLOGRAM_LISTEN)"); err != nil {
			bad("HOLOGRAM_LISTEN: %w", err)
		} else {
			c.Deny = append(c.Deny, d...)
		}
	}
	if v := strings.TrimSpace(getenv("HOLOGRAM_WEB_TIMEOUT")); v != "" {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			bad("HOLOGRAM_WEB_TIMEOUT %q: want a duration such as 30s: %w", v, err)
		case d < time.Second || d > maxTimeout:
			bad("HOLOGRAM_WEB_TIMEOUT %s: must be from 1s to %s", d, maxTimeout)
		default:
			c.Timeout = d
		}
	}
	if v := strings.TrimSpace(getenv("HOLOGRAM_WEB_MAX_BYTES")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil:
			bad("HOLOGRAM_WEB_MAX_BYTES %q: want a number of bytes", v)
		case n < minMaxBytes || n > maxMaxBytes:
			bad("HOLOGRAM_WEB_MAX_BYTES %d: must be from %d to %d", n, minMaxBytes, maxMaxBytes)
		default:
			c.MaxBytes = n
		}
	}
	if v := strings.TrimSpace(getenv("HOLOGRAM_WEB_CHROMIUM")); v != "" {
		p, err := lookPath(v)
		if err != nil {
			bad("HOLOGRAM_WEB_CHROMIUM %q: %w", v, err)
		}
		c.Chromium = p
	} else {
		c.Chromium = findChromium(lookPath)
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return c, nil
}

// chromiumNames are the programs tried, in order, when HOLOGRAM_WEB_CHROMIUM is not set.
// Debian's package installs the browser as /usr/lib/chromium/chromium and a wrapper script,
// /usr/bin/chromium, that adds the flags of /etc/chromium.d (extensions, GPU rasterisation…):
// the browser itself comes first, so it runs with exactly [ChromiumFlags].
var chromiumNames = []string{"/usr/lib/chromium/chromium", "/usr/bin/chromium", "chromium", "chromium-browser",
	"google-chrome-stable", "google-chrome"}

// findChromium returns the first chromium found, or "".
func findChromium(lookPath func(string) (string, error)) string {
	for _, n := range chromiumNames {
		if p, err := lookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// splitList splits a comma- or space-separated list.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}
