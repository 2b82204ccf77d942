package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// places are a run's directories as the code sees them: /workspace, /tmp and /cache under
// bubblewrap, their real paths without it.
type places struct{ work, tmp, cache string }

// language is one interpreter code_run offers.
type language struct {
	name    string
	aliases []string
	file    string // the code's file name in the run's tmp
	// argv runs the code's file; env adds to the common environment.
	argv func(c Config, p places, file string) []string
	env  func(c Config, p places) []string
	// program is the binary that must exist for the language to be offered.
	program func(c Config) string
}

// languages are the interpreters, in the order code_languages lists them.
var languages = []language{
	{name: "python", aliases: []string{"python3", "py"}, file: "main.py",
		argv: func(_ Config, _ places, f string) []string { return []string{"/usr/bin/python3", f} },
		env: func(_ Config, p places) []string {
			return []string{"MPLBACKEND=Agg", "MPLCONFIGDIR=" + filepath.Join(p.cache, "matplotlib"), "PYTHONDONTWRITEBYTECODE=1"}
		},
		program: func(Config) string { return "/usr/bin/python3" }},
	{name: "javascript", aliases: []string{"node", "js"}, file: "main.js",
		argv:    func(_ Config, _ places, f string) []string { return []string{"/usr/bin/node", f} },
		program: func(Config) string { return "/usr/bin/node" }},
	{name: "bash", aliases: []string{"sh"}, file: "main.sh",
		argv:    func(_ Config, _ places, f string) []string { return []string{"/bin/bash", f} },
		program: func(Config) string { return "/bin/bash" }},
	{name: "go", file: "main.go",
		argv: func(c Config, _ places, f string) []string {
			return []string{filepath.Join(c.GoRoot, "bin", "go"), "run", f}
		},
		env: func(c Config, p places) []string {
			return []string{"GOROOT=" + c.GoRoot, "GOCACHE=" + filepath.Join(p.cache, "go-build"), "GOPATH=" + filepath.Join(p.cache, "gopath"),
				"GOTOOLCHAIN=local", "GOPROXY=off", "GOTELEMETRY=off", "GOFLAGS=", "GO111MODULE=on", "CGO_ENABLED=0"}
		},
		program: func(c Config) string {
			if c.GoRoot == "" {
				return ""
			}
			return filepath.Join(c.GoRoot, "bin", "go")
		}},
}

// available reports whether l's program is installed.
func (l language) available(c Config) bool {
	p := l.program(c)
	if p == "" {
		return false
	}
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// findLanguage returns the language named name (or an alias), or an error listing those
// offered.
func findLanguage(c Config, name string) (language, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, l := range languages {
		if n == l.name || slices.Contains(l.aliases, n) {
			if !l.available(c) {
				return language{}, fmt.Errorf("%s is not installed here (%s is missing); code_languages lists what is", l.name, l.program(c))
			}
			return l, nil
		}
	}
	return language{}, fmt.Errorf("unknown language %q: code_languages lists them (%s)", name, strings.Join(offered(c), ", "))
}

// offered lists the available languages with their aliases.
func offered(c Config) []string {
	var out []string
	for _, l := range languages {
		if l.available(c) {
			s := l.name
			if len(l.aliases) > 0 {
				s += " (" + strings.Join(l.aliases, ", ") + ")"
			}
			out = append(out, s)
		}
	}
	return out
}
