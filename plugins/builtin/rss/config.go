package main

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugconf"
)

// Environment variables the rss plugin reads (the kernel passes its own environment and the
// plugin's configured env to the plugin).
const (
	// EnvDir overrides where the subscriptions are kept (an absolute path).
	EnvDir = "HOLOGRAM_RSS_DIR"
	// EnvInterval is the default fetch interval of new subscriptions (a Go duration).
	EnvInterval = "HOLOGRAM_RSS_INTERVAL"
	// EnvAllow lists addresses (IPs or CIDR prefixes, comma-separated) the plugin may fetch from
	// although they are loopback, private or link-local.
	EnvAllow = "HOLOGRAM_RSS_ALLOW"
	// EnvInitial is how many of a feed's newest items a subscription summarises at once.
	EnvInitial = "HOLOGRAM_RSS_INITIAL"
)

// Bounds of the configuration.
const (
	defaultInterval = time.Hour
	minInterval     = 5 * time.Minute
	maxInterval     = 7 * 24 * time.Hour
	defaultInitial  = 3
	maxInitial      = 20
)

// Config is the plugin's configuration.
type Config struct {
	// Dir holds feeds.json: $HOLOGRAM_RSS_DIR, or the kernel's data dir ($HOLOGRAM_DATA_DIR)/rss,
	// or $XDG_DATA_HOME/hologram/rss ($HOME/.local/share when XDG_DATA_HOME is unset or relative).
	Dir string
	// Interval is the default fetch interval.
	Interval time.Duration
	// Allow are the non-public addresses that may be fetched from.
	Allow []netip.Prefix
	// Initial is how many of a new subscription's newest items are summarised.
	Initial int
	// Proxy is the proxy configuration (HTTPS_PROXY, HTTP_PROXY, NO_PROXY).
	Proxy httpproxy.Config
}

// ConfigFromEnv reads the configuration from getenv (os.Getenv in the plugin).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	dir, err := plugconf.StateDir(getenv, EnvDir, "rss")
	if err != nil {
		return Config{}, err
	}
	c := Config{Dir: dir, Interval: defaultInterval, Initial: defaultInitial}
	if s := strings.TrimSpace(getenv(EnvInterval)); s != "" {
		d, err := ParseInterval(s)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w", EnvInterval, err)
		}
		c.Interval = d
	}
	if s := strings.TrimSpace(getenv(EnvInitial)); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > maxInitial {
			return Config{}, fmt.Errorf("%s=%q: a number from 0 to %d", EnvInitial, s, maxInitial)
		}
		c.Initial = n
	}
	allow, err := ParseAllow(getenv(EnvAllow))
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", EnvAllow, err)
	}
	c.Allow = allow
	c.Proxy = httpproxy.Config{
		HTTPProxy:  firstEnv(getenv, "HTTP_PROXY", "http_proxy"),
		HTTPSProxy: firstEnv(getenv, "HTTPS_PROXY", "https_proxy"),
		NoProxy:    firstEnv(getenv, "NO_PROXY", "no_proxy"),
	}
	return c, nil
}

// firstEnv returns the first non-empty of the variables.
func firstEnv(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// ParseInterval parses a fetch interval: a Go duration from 5 minutes to 7 days.
func ParseInterval(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("interval %q: use a duration such as 30m, 2h, 24h", s)
	}
	if d < minInterval || d > maxInterval {
		return 0, fmt.Errorf("interval %q: from %s to %s", s, minInterval, maxInterval)
	}
	return d, nil
}

// ParseAllow parses a comma-separated list of IP addresses and CIDR prefixes.
func ParseAllow(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("%q is not an IP address or a CIDR prefix", f)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or a CIDR prefix (host names are not accepted)", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
