package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// Environment the kernel passes to built-in plugins (kernel.EnvPluginDataDir and
// kernel.EnvPluginConfigDir); without them the XDG directories are used.
const (
	envDataDir   = "HOLOGRAM_DATA_DIR"
	envConfigDir = "HOLOGRAM_CONFIG_DIR"
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

// xdg returns $<v>/hologram when $<v> is absolute, else $HOME/<fallback>/hologram.
func xdg(getenv func(string) string, v, fallback string) string {
	if d := getenv(v); filepath.IsAbs(d) {
		return filepath.Join(d, "hologram")
	}
	return filepath.Join(getenv("HOME"), fallback, "hologram")
}

// dirs returns the data and configuration directories: the kernel's, else XDG's.
func dirs(getenv func(string) string) (data, conf string, err error) {
	data, conf = getenv(envDataDir), getenv(envConfigDir)
	if data == "" {
		data = xdg(getenv, "XDG_DATA_HOME", filepath.Join(".local", "share"))
	}
	if conf == "" {
		conf = xdg(getenv, "XDG_CONFIG_HOME", ".config")
	}
	if !filepath.IsAbs(data) || !filepath.IsAbs(conf) {
		return "", "", fmt.Errorf("cannot tell the data and config directories (data %q, config %q): set %s and %s, or HOME",
			data, conf, envDataDir, envConfigDir)
	}
	return data, conf, nil
}

// loadConfig reads <config dir>/plugins/files.toml (optional), applies the defaults and checks
// the result.
func loadConfig(getenv func(string) string) (Config, error) {
	data, conf, err := dirs(getenv)
	if err != nil {
		return Config{}, err
	}
	var c Config
	path := filepath.Join(conf, "plugins", "files.toml")
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	default:
		md, err := toml.Decode(string(raw), &c)
		if err != nil {
			return Config{}, fmt.Errorf("config %s: %w", path, err)
		}
		if und := md.Undecoded(); len(und) > 0 {
			return Config{}, fmt.Errorf("config %s: unknown key %q (roots, max_read_bytes, max_write_bytes, read_only)", path, und[0].String())
		}
		c.path = path
	}
	c.home = getenv("HOME")
	if len(c.Roots) == 0 {
		def := filepath.Join(data, "files")
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
	if root == "~" || strings.HasPrefix(root, "~/") {
		if home == "" {
			return "", fmt.Errorf("root %q: HOME is not set", root)
		}
		root = filepath.Join(home, root[1:])
	}
	if !filepath.IsAbs(root) {
		return "", fmt.Errorf("root %q must be an absolute path (or start with ~/)", root)
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
