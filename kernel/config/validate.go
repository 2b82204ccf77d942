package config

// Validation of a loaded configuration: every bad value named with what is allowed.

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Validate reports every problem in c, joined, or nil. It expects the
// absolute paths and lower-case log level that [Load] produces.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	for _, p := range []struct{ name, val string }{
		{"data dir (--data)", c.DataDir}, {"socket (--socket)", c.Socket}, {"key file (--key-file)", c.KeyFile},
	} {
		if p.val == "" {
			bad("%s must be set", p.name)
		}
	}
	for _, p := range []struct{ name, val string }{
		{"data dir", c.DataDir}, {"socket", c.Socket}, {"token file", c.TokenFile}, {"tls cert", c.TLSCert},
		{"tls key", c.TLSKey}, {"key file", c.KeyFile}, {"config file", c.ConfigFile},
	} {
		if p.val != "" && !filepath.IsAbs(p.val) {
			bad("%s %q must be an absolute path", p.name, p.val)
		}
	}
	switch {
	case c.TLSCert != "" && c.TLSKey == "":
		bad("--tls-cert is set but --tls-key is not: give both or neither")
	case c.TLSKey != "" && c.TLSCert == "":
		bad("--tls-key is set but --tls-cert is not: give both or neither")
	}
	if c.Listen != "" {
		if _, port, err := net.SplitHostPort(c.Listen); err != nil {
			bad("listen address %q: want host:port (e.g. 127.0.0.1:8765 or [::1]:8765): %w", c.Listen, err)
		} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			bad("listen address %q: port %q is not a number from 0 to 65535", c.Listen, port)
		}
	}
	if _, ok := logLevels[c.LogLevel]; !ok {
		bad("log level %q: want debug, info, warn or error", c.LogLevel)
	}
	if c.Agent.MaxRounds <= 0 {
		bad("agent.max_rounds must be positive, got %d", c.Agent.MaxRounds)
	}
	if c.Agent.MaxWall.Duration <= 0 {
		bad("agent.max_wall must be positive, got %s", c.Agent.MaxWall.Duration)
	}
	if c.Agent.ToolTimeout.Duration <= 0 {
		bad("agent.tool_timeout must be positive, got %s", c.Agent.ToolTimeout.Duration)
	}
	if c.Agent.TokenBudget < 0 {
		bad("agent.token_budget must be 0 (unlimited) or positive, got %d", c.Agent.TokenBudget)
	}
	if c.Agent.HistoryLimit <= 0 {
		bad("agent.history_limit must be positive, got %d", c.Agent.HistoryLimit)
	}
	if c.Agent.MaxResultBytes < 0 || (c.Agent.MaxResultBytes > 0 && c.Agent.MaxResultBytes < 4096) {
		bad("agent.max_result_bytes must be 0 (the default, 64 KiB) or at least 4096, got %d", c.Agent.MaxResultBytes)
	}
	if c.Agent.MaxTools < 0 || c.Agent.MaxTools > 127 {
		bad("agent.max_tools must be 0 (the default, 64) to 127 (servers accept 128 tools with tool_search), got %d", c.Agent.MaxTools)
	}
	if d := c.Agent.ApprovalTimeout.Duration; d < 0 || d > MaxApprovalTimeout {
		bad("agent.approval_timeout must be from 0 (the default, %s) to %s, got %s", DefaultApprovalTimeout, MaxApprovalTimeout, d)
	}
	c.validateBuiltin(bad)
	c.validateEmbedding(bad)
	if c.Memory.WindowTokens < 256 {
		bad("memory.window_tokens must be at least 256, got %d", c.Memory.WindowTokens)
	}
	if c.Memory.DistillAccesses < 1 {
		bad("memory.distill_accesses must be at least 1, got %d", c.Memory.DistillAccesses)
	}
	if c.Memory.DistillIdle.Duration <= 0 {
		bad("memory.distill_idle must be positive, got %s", c.Memory.DistillIdle.Duration)
	}
	if c.Memory.GCInterval.Duration < 0 || (c.Memory.GCInterval.Duration > 0 && c.Memory.GCInterval.Duration < time.Minute) {
		bad("memory.gc_interval must be 0 (on demand only) or at least 1m, got %s", c.Memory.GCInterval.Duration)
	}
	switch c.Memory.Extractor {
	case "auto", "llm", "rules":
	default:
		bad(`memory.extractor must be "auto", "llm" or "rules", got %q`, c.Memory.Extractor)
	}
	if c.Memory.Recent <= 0 {
		bad("memory.recent must be positive, got %d", c.Memory.Recent)
	}
	if c.API.MaxBodyBytes <= 0 {
		bad("api.max_body_bytes must be positive, got %d", c.API.MaxBodyBytes)
	}
	if c.API.MaxUploadBytes < 0 {
		bad("api.max_upload_bytes must be 0 (the default, 1 GiB) or positive, got %d", c.API.MaxUploadBytes)
	}
	for _, o := range c.API.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			bad("api.allowed_origins: %q is not an origin like https://example.com", o)
		}
	}
	seen := map[string]bool{}
	for i, p := range c.Plugins {
		where := fmt.Sprintf("plugins[%d]", i)
		if p.Name != "" {
			where = fmt.Sprintf("plugin %q", p.Name)
		}
		switch {
		case !pluginNameRe.MatchString(p.Name):
			bad("%s: name must be letters, digits and . _ - (starting with a letter or digit, at most 64), got %q", where, p.Name)
		case seen[p.Name]:
			bad("%s: configured twice", where)
		}
		seen[p.Name] = true
		switch {
		case len(p.Command) == 0 && p.Dir == "":
			bad("%s: set command (an MCP stdio server) or dir (a native plugin)", where)
		case len(p.Command) > 0 && p.Dir != "":
			bad("%s: set command or dir, not both", where)
		case len(p.Command) > 0 && strings.TrimSpace(p.Command[0]) == "":
			bad("%s: the command's program is empty", where)
		case p.Dir != "" && !filepath.IsAbs(p.Dir):
			bad("%s: dir %q must be an absolute path", where, p.Dir)
		case p.Visibility != "" && p.Visibility != "owner" && p.Visibility != "any":
			bad("%s: visibility %q must be \"owner\" (the default) or \"any\"", where, p.Visibility)
		case p.Visibility == "any" && p.Dir != "":
			bad("%s: visibility is for MCP servers; a native plugin declares its tools' in plugin.json", where)
		}
		for _, e := range p.Env {
			if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
				bad("%s: env %q must be KEY=VALUE", where, e)
			}
		}
	}
	c.validateA2A(bad)
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid configuration: %w", errors.Join(errs...))
}

// validateBuiltin reports the problems of the [builtin] table.
func (c *Config) validateBuiltin(bad func(format string, args ...any)) {
	if c.Builtin.Dir != "" && !filepath.IsAbs(c.Builtin.Dir) {
		bad("builtin.dir %q must be an absolute path", c.Builtin.Dir)
	}
	enabled := map[string]bool{}
	for _, n := range c.Builtin.Enable {
		if !isBuiltin(n) {
			bad("builtin.enable: unknown built-in plugin %q (known: %s)", n, builtinNames())
		}
		enabled[n] = true
	}
	for _, n := range c.Builtin.Disable {
		switch {
		case !isBuiltin(n):
			bad("builtin.disable: unknown built-in plugin %q (known: %s)", n, builtinNames())
		case enabled[n]:
			bad("builtin: plugin %q is both enabled and disabled", n)
		}
	}
	for n, env := range c.Builtin.Env {
		if !isBuiltin(n) {
			bad("builtin.env: unknown built-in plugin %q (known: %s)", n, builtinNames())
		}
		for _, e := range env {
			if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
				bad("builtin.env.%s: %q must be KEY=VALUE", n, e)
			}
		}
	}
}
