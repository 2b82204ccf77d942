package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugconf"
)

// Limits and their defaults.
const (
	defaultMaxRead  = 16 << 20 // bytes one read returns at most
	maxMaxRead      = 24 << 20 // the arena is 32 MiB; base64 grows by a third
	defaultMaxWrite = 512 << 10
	maxMaxWrite     = 900 << 10 // a write's content arrives in one 1 MiB frame
)

// Config is files.toml.
type Config struct {
	// Roots are the directories the plugin may touch; default <data dir>/files (created 0700).
	Roots []string `toml:"roots"`
	// MaxReadBytes bounds one read (default 16 MiB); larger files are read in ranges.
	MaxReadBytes int64 `toml:"max_read_bytes"`
	// MaxWriteBytes bounds one write (default 512 KiB).
	MaxWriteBytes int64 `toml:"max_write_bytes"`
	// ReadOnly removes files_write.
	ReadOnly bool `toml:"read_only"`

	path string // the file read, for messages ("" when there was none)
	home string // the owner's home directory, refused as a root
}

// loadConfig reads <config dir>/plugins/files.toml (optional), applies the defaults and checks
// the result.
func loadConfig(getenv func(string) string) (Config, error) {
	var c Config
	f, err := plugconf.Load(getenv, "files", &c, "roots, max_read_bytes, max_write_bytes, read_only")
	if err != nil {
		return Config{}, err
	}
	if f.Found {
		c.path = f.Path
	}
	c.home = getenv("HOME")
	if len(c.Roots) == 0 {
		def := filepath.Join(f.Data, "files")
		if err := os.MkdirAll(def, 0o700); err != nil {
			return Config{}, fmt.Errorf("creating the default root: %w", err)
		}
		c.Roots = []string{def}
	}
	switch {
	case c.MaxReadBytes == 0:
		c.MaxReadBytes = defaultMaxRead
	case c.MaxReadBytes < 1 || c.MaxReadBytes > maxMaxRead:
		return Config{}, fmt.Errorf("%s: max_read_bytes must be from 1 to %d, got %d", c.where(), maxMaxRead, c.MaxReadBytes)
	}
	switch {
	case c.MaxWriteBytes == 0:
		c.MaxWriteBytes = defaultMaxWrite
	case c.MaxWriteBytes < 1 || c.MaxWriteBytes > maxMaxWrite:
		return Config{}, fmt.Errorf("%s: max_write_bytes must be from 1 to %d, got %d", c.where(), maxMaxWrite, c.MaxWriteBytes)
	}
	return c, nil
}

// where names the configuration in messages.
func (c Config) where() string {
	if c.path == "" {
		return "files configuration"
	}
	return c.path
}

// checkRoot expands and resolves a configured root and refuses / and the home directory (and
// any folder holding it): the plugin must never reach everything the owner has.
func checkRoot(root, home string) (string, error) {
	root, err := plugconf.ExpandHome("root", root, home)
	if err != nil {
		return "", err
	}
	resolved, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("root %q: %w", root, err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("root %q: %w", root, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("root %q is not a directory", root)
	}
	if resolved == "/" {
		return "", fmt.Errorf("root %q is the whole file system (/): give narrower folders, e.g. ~/Documents", root)
	}
	if home != "" {
		h, err := filepath.EvalSymlinks(home)
		if err != nil {
			h = filepath.Clean(home)
		}
		if rel, err := filepath.Rel(resolved, h); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			if rel == "." {
				return "", fmt.Errorf("root %q is your home directory: give narrower folders, e.g. ~/Documents", root)
			}
			return "", fmt.Errorf("root %q holds your home directory %s: give narrower folders, e.g. ~/Documents", root, h)
		}
	}
	return resolved, nil
}
