package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugconf"
)

// Config is notes.toml.
type Config struct {
	// Dir holds the notes; default <data dir>/notes (created 0700).
	Dir string `toml:"dir"`
}

// loadConfig reads <config dir>/plugins/notes.toml (optional) and returns the notes
// directory, created 0700 when missing.
func loadConfig(getenv func(string) string) (string, error) {
	var c Config
	f, err := plugconf.Load(getenv, "notes", &c, "dir")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(f.Data, "notes")
	if c.Dir != "" {
		if dir, err = plugconf.ExpandHome("dir", c.Dir, getenv("HOME")); err != nil {
			return "", fmt.Errorf("config %s: %w", f.Path, err)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("notes directory: %w", err)
	}
	return dir, nil
}
