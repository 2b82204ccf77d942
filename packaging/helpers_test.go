//go:build integration

package packaging

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the repository (the tests run in packaging/).
const repoRoot = ".."

// variant is what the tests expect of one package.
type variant struct {
	name, pkg string
	bins      []string // in /usr/bin
	kernel    bool     // plugins, assets
	userUnit  bool     // the opt-in user unit and the example plugins (full only)
	system    bool     // the system unit and its scripts
	desktop   bool     // .desktop, icons, GL/X and fonts dependencies
}

var variants = []variant{
	{name: "full", pkg: "hologram-full", bins: []string{"hologram", "homed", "waiter"}, kernel: true, userUnit: true, desktop: true},
	{name: "server", pkg: "hologram-server", bins: []string{"homed", "waiter"}, kernel: true, system: true},
	{name: "client", pkg: "hologram-client", bins: []string{"hologram", "waiter"}, desktop: true},
}

// ciMode reports HOLOGRAM_CI=1: what would skip must fail.
func ciMode() bool { return os.Getenv("HOLOGRAM_CI") == "1" }

// need fails (CI) or skips the test when a tool is missing.
func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			msg := tool + " is missing (see .ci/deps.sh)"
			if ciMode() {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

// distDir is where make packages wrote the packages: $HOLOGRAM_DIST or dist/.
func distDir() string {
	if d := os.Getenv("HOLOGRAM_DIST"); d != "" {
		return d
	}
	return filepath.Join(repoRoot, "dist")
}

// binDir holds the binaries the packages were made of: $HOLOGRAM_BIN or bin/.
func binDir() string {
	if d := os.Getenv("HOLOGRAM_BIN"); d != "" {
		return d
	}
	return filepath.Join(repoRoot, "bin")
}

// pkgFiles are one variant's three files.
type pkgFiles struct {
	deb, rpm, tgz string
	version       string
}

// findPackages returns the files of every variant in dist/, one of each; a missing dist/
// fails (CI) or skips.
func findPackages(t *testing.T) map[string]pkgFiles {
	t.Helper()
	out := map[string]pkgFiles{}
	for _, v := range variants {
		var f pkgFiles
		for _, m := range []struct {
			pat string
			dst *string
		}{{v.pkg + "_*_amd64.deb", &f.deb}, {v.pkg + "-*-1.x86_64.rpm", &f.rpm}, {v.pkg + "-*-linux-amd64.tar.gz", &f.tgz}} {
			got, _ := filepath.Glob(filepath.Join(distDir(), m.pat))
			switch {
			case len(got) == 0:
				msg := "no " + m.pat + " in " + distDir() + ": run make packages"
				if ciMode() {
					t.Fatal(msg)
				}
				t.Skip(msg)
			case len(got) > 1:
				t.Fatalf("%d files match %s in %s, want 1: %q", len(got), m.pat, distDir(), got)
			}
			*m.dst = got[0]
		}
		f.version = strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f.deb), v.pkg+"_"), "_amd64.deb")
		out[v.name] = f
	}
	return out
}

// run runs a command and returns its stdout; a failure fails the test with its output.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// controlField reads one field of dpkg-deb -I or rpm -qi output ("Name: value" lines).
func controlField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
		// rpm -qi pads names: "Name        : hologram-full".
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
