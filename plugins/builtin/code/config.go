package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugconf"
)

// Defaults and bounds.
const (
	defaultTimeout = 60 * time.Second
	maxTimeout     = 10 * time.Minute
	defaultMemory  = 1 << 30 // RLIMIT_DATA of a run
	defaultPids    = 256     // pids.max of a run's cgroup
	maxOutput      = 1 << 20 // kept of stdout and of stderr each
)

// Config is code.toml.
type Config struct {
	// Unsafe lets code_run work without bubblewrap and without Landlock, where nothing but
	// seccomp and the rlimits stand between the code and the owner's files (off by default:
	// code_run then refuses, saying why).
	Unsafe bool `toml:"unsafe"`
	// MemoryBytes is a run's data limit (1 GiB); Pids the processes it may have at once where a
	// pids cgroup is writable (256).
	MemoryBytes int64 `toml:"memory_bytes"`
	Pids        int   `toml:"pids"`
	// NetworkSessions are the sessions whose runs get the network (bubblewrap only: the run
	// shares the host's network, unix sockets still refused). Empty: no run has it.
	NetworkSessions []string `toml:"network_sessions"`
	// Bwrap is the bubblewrap binary: "" finds bwrap in PATH; "off" never uses it.
	Bwrap string `toml:"bwrap"`
	// GoRoot is the Go installation runs use ("" : /usr/local/go, else /usr/lib/go).
	GoRoot string `toml:"goroot"`
	// Cache holds the caches runs share across sessions, Go's build cache and matplotlib's
	// font list ("": <data dir>/code/cache): a session's first go run would otherwise compile
	// the standard library (half a minute).
	Cache string `toml:"cache"`

	path string // the file, for messages (it may not exist)
	data string // <data dir>/code: sessions/ and runs.jsonl
}

// loadConfig reads <config dir>/plugins/code.toml (optional) and applies the defaults.
func loadConfig(getenv func(string) string) (Config, error) {
	var c Config
	f, err := plugconf.Load(getenv, "code", &c, "unsafe, memory_bytes, pids, network_sessions, bwrap, goroot, cache")
	if err != nil {
		return Config{}, err
	}
	c.path, c.data = f.Path, filepath.Join(f.Data, "code")
	if c.MemoryBytes == 0 {
		c.MemoryBytes = defaultMemory
	}
	if c.Pids == 0 {
		c.Pids = defaultPids
	}
	switch {
	case c.MemoryBytes < 64<<20:
		return Config{}, fmt.Errorf("config %s: memory_bytes must be at least 64 MiB, got %d", c.path, c.MemoryBytes)
	case c.Pids < 8:
		return Config{}, fmt.Errorf("config %s: pids must be at least 8, got %d", c.path, c.Pids)
	}
	if c.GoRoot == "" {
		for _, d := range []string{"/usr/local/go", "/usr/lib/go"} {
			if _, err := os.Stat(filepath.Join(d, "bin", "go")); err == nil {
				c.GoRoot = d
				break
			}
		}
	}
	if c.Cache == "" {
		c.Cache = filepath.Join(c.data, "cache")
	}
	if !filepath.IsAbs(c.Cache) {
		return Config{}, fmt.Errorf("config %s: cache must be an absolute path, got %q", c.path, c.Cache)
	}
	if err := os.MkdirAll(c.Cache, 0o700); err != nil {
		return Config{}, fmt.Errorf("creating the cache directory: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(c.data, "sessions"), 0o700); err != nil {
		return Config{}, fmt.Errorf("creating the data directory: %w", err)
	}
	return c, nil
}
