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

// Config is notes.toml.
type Config struct {
	// Dir holds the notes; default <data dir>/notes (created 0700).
	Dir string `toml:"dir"`
}

// xdg returns $<v>/hologram when $<v> is absolute, else $HOME/<fallback>/hologram.
func xdg(getenv func(string) string, v, fallback string) string {
	if d := getenv(v); filepath.IsAbs(d) {
		return filepath.Join(d, "hologram")
	}
	return filepath.Join(getenv("HOME"), fallback, "hologram")
}

// loadConfig reads <config dir>/plugins/notes.toml (optional) and returns the notes
// directory, created 0700 when missing.
func loadConfig(getenv func(string) string) (string, error) {
	data, conf := getenv(envDataDir), getenv(envConfigDir)
	if data == "" {
		data = xdg(getenv, "XDG_DATA_HOME", filepath.Join(".local", "share"))
	}
	if conf == "" {
		conf = xdg(getenv, "XDG_CONFIG_HOME", ".config")
	}
	if !filepath.IsAbs(data) || !filepath.IsAbs(conf) {
		return "", fmt.Errorf("cannot tell the data and config directories (data %q, config %q): set %s and %s, or HOME",
			data, conf, envDataDir, envConfigDir)
	}
	var c Config
	path := filepath.Join(conf, "plugins", "notes.toml")
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("config %s: %w", path, err)
	default:
		md, err := toml.Decode(string(raw), &c)
		if err != nil {
			return "", fmt.Errorf("config %s: %w", path, err)
		}
		if und := md.Undecoded(); len(und) > 0 {
			return "", fmt.Errorf("config %s: unknown key %q (dir)", path, und[0].String())
		}
	}
	dir := c.Dir
	switch {
	case dir == "":
		dir = filepath.Join(data, "notes")
	case dir == "~" || strings.HasPrefix(dir, "~/"):
		home := getenv("HOME")
		if home == "" {
			return "", fmt.Errorf("config %s: dir %q: HOME is not set", path, dir)
		}
		dir = filepath.Join(home, dir[1:])
	case !filepath.IsAbs(dir):
		return "", fmt.Errorf("config %s: dir %q must be an absolute path (or start with ~/)", path, dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("notes directory: %w", err)
	}
	return dir, nil
}
