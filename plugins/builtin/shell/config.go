package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugconf"
)

// Defaults and bounds.
const (
	defaultTimeout    = 30 * time.Second
	defaultMaxTimeout = 10 * time.Minute
	defaultMaxOutput  = 64 << 10
	maxMaxOutput      = 16 << 20
)

// Config is shell.toml.
type Config struct {
	// Roots are the working directories commands may run in (and below); default
	// <data dir>/files, created 0700.
	Roots []string `toml:"roots"`
	// Timeout is a command's default timeout (30s); a call may ask for up to MaxTimeout (10m).
	Timeout    time.Duration `toml:"timeout"`
	MaxTimeout time.Duration `toml:"max_timeout"`
	// MaxOutputBytes caps the output kept of a command, stdout and stderr together (64 KiB).
	MaxOutputBytes int `toml:"max_output_bytes"`
	// Allow is the allow-list; empty (the default) refuses every command.
	Allow []Allow `toml:"allow"`

	path string // the file, for messages (it may not exist)
	home string
	tmp  string // the commands' TMPDIR, <data dir>/shell/tmp, emptied at start
}

// Allow is one [[allow]] entry: Program (a bare name found in PATH, or an absolute path) with
// any arguments, or only those starting with Args; or Shell, one exact shell command line run
// with /bin/sh -c ("*": any line — the owner's explicit choice).
type Allow struct {
	Program string   `toml:"program"`
	Args    []string `toml:"args"`
	Shell   string   `toml:"shell"`
}

// String renders the entry as the owner wrote it.
func (a Allow) String() string {
	if a.Shell != "" {
		return fmt.Sprintf("shell = %q", a.Shell)
	}
	if len(a.Args) == 0 {
		return fmt.Sprintf("program = %q (any arguments)", a.Program)
	}
	return fmt.Sprintf("program = %q, args = %q…", a.Program, a.Args)
}

// loadConfig reads <config dir>/plugins/shell.toml (optional), applies the defaults and checks
// the result.
func loadConfig(getenv func(string) string) (Config, error) {
	c := Config{home: getenv("HOME")}
	f, err := plugconf.Load(getenv, "shell", &c, "roots, timeout, max_timeout, max_output_bytes, allow: program, args, shell")
	if err != nil {
		return Config{}, err
	}
	c.path = f.Path
	c.tmp = filepath.Join(f.Data, "shell", "tmp")
	if len(c.Roots) == 0 {
		def := filepath.Join(f.Data, "files")
		if err := os.MkdirAll(def, 0o700); err != nil {
			return Config{}, fmt.Errorf("creating the default root: %w", err)
		}
		c.Roots = []string{def}
	}
	if err := c.check(); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", c.path, err)
	}
	return c, nil
}

// check applies the defaults and validates c.
func (c *Config) check() error {
	if c.Timeout == 0 {
		c.Timeout = defaultTimeout
	}
	if c.MaxTimeout == 0 {
		c.MaxTimeout = max(defaultMaxTimeout, c.Timeout)
	}
	if c.MaxOutputBytes == 0 {
		c.MaxOutputBytes = defaultMaxOutput
	}
	switch {
	case c.Timeout < time.Second:
		return fmt.Errorf("timeout must be at least 1s, got %s", c.Timeout)
	case c.MaxTimeout < c.Timeout:
		return fmt.Errorf("max_timeout (%s) is shorter than timeout (%s)", c.MaxTimeout, c.Timeout)
	case c.MaxOutputBytes < 1 || c.MaxOutputBytes > maxMaxOutput:
		return fmt.Errorf("max_output_bytes must be from 1 to %d, got %d", maxMaxOutput, c.MaxOutputBytes)
	}
	for i, a := range c.Allow {
		where := fmt.Sprintf("allow[%d]", i)
		switch {
		case (a.Program == "") == (a.Shell == ""):
			return fmt.Errorf("%s: set program or shell, not both or neither", where)
		case a.Shell != "" && len(a.Args) > 0:
			return fmt.Errorf("%s: args go with program, not shell", where)
		case a.Shell != "" && strings.TrimSpace(a.Shell) != a.Shell:
			return fmt.Errorf("%s: shell %q has leading or trailing spaces", where, a.Shell)
		case a.Program != "" && strings.ContainsAny(a.Program, " \t\n"):
			return fmt.Errorf("%s: program %q contains spaces: give the program alone and its arguments in args", where, a.Program)
		case strings.Contains(a.Program, "/") && !filepath.IsAbs(a.Program):
			return fmt.Errorf("%s: program %q must be a bare name (found in PATH) or an absolute path", where, a.Program)
		}
	}
	return nil
}
