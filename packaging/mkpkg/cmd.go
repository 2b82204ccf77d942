package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// runCmd runs name with args in dir and returns its standard output. env, when not nil, is
// added to the process's environment. A failure's error holds the command and its stderr.
func runCmd(ctx context.Context, dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = msg[:2000] + "…"
		}
		if msg != "" {
			return stdout.Bytes(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
		}
		return stdout.Bytes(), fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return stdout.Bytes(), nil
}

// tool is a program mkpkg runs, with the Debian package that installs it.
type tool struct {
	Name, Package string
}

// requiredTools are the programs every build needs.
var requiredTools = []tool{
	{"git", "git"},
	{"strip", "binutils"},
	{"help2man", "help2man"},
	{"rsvg-convert", "librsvg2-bin"},
	{"dpkg-shlibdeps", "dpkg-dev"},
	{"dpkg-query", "dpkg"},
	{elfdepsPath, "rpm"},
}

// checkTools names every missing tool and the package to install.
func checkTools(tools []tool) error {
	var missing []string
	for _, t := range tools {
		if _, err := exec.LookPath(t.Name); err != nil {
			missing = append(missing, fmt.Sprintf("%s (apt-get install %s)", t.Name, t.Package))
		}
	}
	if len(missing) > 0 {
		return errors.New("missing tools: " + strings.Join(missing, ", "))
	}
	return nil
}
