package config

import (
	"net/url"
	"regexp"
)

// A2AConfig is the [a2a] table: the agent among other agents (docs/channels.md, "Other agents").
type A2AConfig struct {
	// Enabled turns the A2A server off when false; it is on whenever the TCP listener is.
	Enabled *bool `toml:"enabled"`
	// RatePerMinute bounds each peer's requests (default 60).
	RatePerMinute int `toml:"rate_per_minute"`
	// Peers are the other agents this one may call with the a2a tools ([[a2a.peers]]).
	Peers []A2APeerConfig `toml:"peers"`
}

// A2APeerConfig is one [[a2a.peers]] table: an agent the owner's sessions may delegate to.
type A2APeerConfig struct {
	// Name names the peer in the a2a_send tool (letters, digits and . _ -, at most 48).
	Name string `toml:"name" json:"name"`
	// URL is the peer's base URL (its agent card is at URL/.well-known/agent-card.json) or the
	// card's own URL.
	URL string `toml:"url" json:"url"`
	// TokenFile holds the bearer token the peer gave this agent; ~/ and relative paths are made
	// absolute.
	TokenFile string `toml:"token_file" json:"token_file"`
}

// On reports whether the A2A server runs: with the TCP listener, unless disabled.
func (a A2AConfig) On(listen string) bool { return listen != "" && (a.Enabled == nil || *a.Enabled) }

var a2aPeerNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,47}$`)

// validateA2A reports the problems of the [a2a] table.
func (c *Config) validateA2A(bad func(format string, args ...any)) {
	if c.A2A.RatePerMinute < 0 {
		bad("a2a.rate_per_minute must be >= 0, got %d", c.A2A.RatePerMinute)
	}
	seen := map[string]bool{}
	for i, p := range c.A2A.Peers {
		if !a2aPeerNameRe.MatchString(p.Name) {
			bad("a2a.peers[%d]: name must be letters, digits and . _ - (starting with a letter or digit, at most 48), got %q", i, p.Name)
		}
		if seen[p.Name] {
			bad("a2a.peers[%d]: a second peer named %q", i, p.Name)
		}
		seen[p.Name] = true
		if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("a2a peer %q: url %q must be an http:// or https:// URL", p.Name, p.URL)
		}
		if p.TokenFile == "" {
			bad("a2a peer %q: token_file must be set (the token the peer's owner gave you)", p.Name)
		}
	}
}
