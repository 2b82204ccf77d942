package main

import (
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/google/licensecheck"
)

// A licensePara is one Files paragraph of a DEP-5 copyright file.
type licensePara struct {
	Files     string // the Files pattern
	Copyright string
	License   string // short name; SPDX ids joined by " and "
	Texts     []licenseText
	Comment   string
}

// A licenseText is one licence or notice file of a paragraph.
type licenseText struct {
	Name string // the file's name
	ID   string // what identify named it; empty for a notice
	Text string
}

// debCommonLicenses are the licences whose text Debian ships in /usr/share/common-licenses:
// the .deb's copyright file refers to it instead of repeating it (lintian requires so).
var debCommonLicenses = map[string]string{
	"Apache-2.0": "Apache-2.0", "MPL-2.0": "MPL-2.0", "CC0-1.0": "CC0-1.0",
	"GPL-2.0": "GPL-2", "GPL-3.0": "GPL-3", "LGPL-2.1": "LGPL-2.1", "LGPL-3.0": "LGPL-3",
}

// text is the paragraph's licence text: every file in full, each after its name when there are
// several; with common, a licence Debian ships is a reference to its file instead.
func (p licensePara) text(common bool) string {
	var parts []string
	for _, t := range p.Texts {
		body := strings.Trim(t.Text, "\n")
		if f, ok := debCommonLicenses[t.ID]; ok && common {
			body = "On Debian systems, the full text of the " + t.ID + " licence is in /usr/share/common-licenses/" + f + "."
		}
		if len(p.Texts) > 1 {
			body = "[" + t.Name + "]\n" + body
		}
		parts = append(parts, body)
	}
	return strings.Join(parts, "\n\n")
}

// A goModule is a module linked into some of a package's programs.
type goModule struct {
	Path, Version, Dir string
	// Licenses are the licence files that apply to the linked packages, by path relative to
	// Dir ("LICENSE", "glfw/LICENSE.md").
	Licenses map[string]bool
	// Into are the installed paths of the programs that link it.
	Into map[string]bool
}

// licenseScanner finds what a package bundles and under which licences. It caches `go list`
// per program; it is safe for concurrent use.
type licenseScanner struct {
	o     options
	mu    sync.Mutex
	lists map[string][]listedPkg
}

func newLicenseScanner(o options) *licenseScanner {
	return &licenseScanner{o: o, lists: map[string][]listedPkg{}}
}

// listedPkg is one line of `go list -deps` for a program.
type listedPkg struct {
	Dir, ModPath, ModVersion, ModDir string
	Cgo                              bool
	Embeds                           []string // files embedded with //go:embed, relative to Dir
}

// goVersionOf reads a Go program's build information; ok is false for other files.
func goVersionOf(f string) (*buildinfo.BuildInfo, bool) {
	bi, err := buildinfo.ReadFile(f)
	return bi, err == nil
}

// modules returns the third-party modules linked into the package's Go programs with the
// licence files that apply to the linked packages, and the Go version that built them. A
// program whose linked modules differ from what `go list` finds in this tree is stale: it
// was not built from this tree.
func (l *licenseScanner) modules(ctx context.Context, p *pkg) (map[string]*goModule, string, error) {
	mods := map[string]*goModule{}
	goVersion := ""
	for _, e := range p.elfFiles() {
		bi, ok := goVersionOf(e.Src)
		if !ok {
			continue
		}
		if goVersion == "" {
			goVersion = bi.GoVersion
		}
		listed, err := l.list(ctx, bi)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", e.Src, err)
		}
		want := map[string]string{}
		for _, d := range bi.Deps {
			m := d
			if d.Replace != nil {
				m = d.Replace
			}
			want[d.Path] = m.Version
		}
		got := map[string]string{}
		for _, lp := range listed {
			if lp.ModPath == bi.Main.Path {
				continue // ours
			}
			got[lp.ModPath] = lp.ModVersion
			m := mods[lp.ModPath+"@"+lp.ModVersion]
			if m == nil {
				m = &goModule{Path: lp.ModPath, Version: lp.ModVersion, Dir: lp.ModDir, Licenses: map[string]bool{}, Into: map[string]bool{}}
				mods[lp.ModPath+"@"+lp.ModVersion] = m
			}
			m.Into[e.Dst] = true
			files, err := licenseFiles(lp)
			if err != nil {
				return nil, "", err
			}
			for _, f := range files {
				m.Licenses[f] = true
			}
		}
		for p, v := range want {
			if got[p] != v {
				return nil, "", fmt.Errorf("%s links %s %s but this tree's packages use %q: it is stale (run make build)", e.Src, p, v, got[p])
			}
		}
		for p, v := range got {
			if _, ok := want[p]; !ok {
				return nil, "", fmt.Errorf("%s does not link %s %s, which this tree's packages use: it is stale (run make build)", e.Src, p, v)
			}
		}
	}
	for _, m := range mods {
		if len(m.Licenses) == 0 {
			return nil, "", fmt.Errorf("module %s %s has no licence file in %s", m.Path, m.Version, m.Dir)
		}
	}
	return mods, goVersion, nil
}

// list runs `go list -deps` for the main package of the program bi describes, with its build
// tags and platform.
func (l *licenseScanner) list(ctx context.Context, bi *buildinfo.BuildInfo) ([]listedPkg, error) {
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	key := bi.Path + " " + settings["-tags"] + " " + settings["GOOS"] + "/" + settings["GOARCH"] + " " + settings["CGO_ENABLED"]
	l.mu.Lock()
	defer l.mu.Unlock()
	if pkgs, ok := l.lists[key]; ok {
		return pkgs, nil
	}
	args := []string{"list", "-deps"}
	if t := settings["-tags"]; t != "" {
		args = append(args, "-tags="+t)
	}
	args = append(args, "-f", `{{with .Module}}{{$.Dir}}{{"\t"}}{{.Path}}{{"\t"}}{{.Version}}{{"\t"}}{{if .Replace}}{{.Replace.Dir}}{{else}}{{.Dir}}{{end}}{{"\t"}}{{len $.CgoFiles}}{{"\t"}}{{join $.EmbedFiles "\x00"}}{{end}}`, bi.Path)
	var env []string
	for _, k := range []string{"GOOS", "GOARCH", "CGO_ENABLED"} {
		if v := settings[k]; v != "" {
			env = append(env, k+"="+v)
		}
	}
	out, err := runCmd(ctx, l.o.Root, env, l.o.Go, args...)
	if err != nil {
		return nil, err
	}
	var pkgs []listedPkg
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 6 {
			return nil, fmt.Errorf("go list printed %q", line)
		}
		lp := listedPkg{Dir: f[0], ModPath: f[1], ModVersion: f[2], ModDir: f[3], Cgo: f[4] != "0"}
		if f[5] != "" {
			lp.Embeds = strings.Split(f[5], "\x00")
		}
		pkgs = append(pkgs, lp)
	}
	l.lists[key] = pkgs
	return pkgs, nil
}

// licenseFiles are the licence files that apply to the package lp: those in its directory and
// in each parent up to the module's root; those beside the files it embeds (fonts, say); for a
// cgo package also those below its directory (the C sources it compiles live there, e.g.
// GLFW's or cppjieba's), test data excepted. Paths are relative to the module's root.
func licenseFiles(lp listedPkg) ([]string, error) {
	var files []string
	embedDirs := map[string]bool{}
	for _, e := range lp.Embeds {
		for d := filepath.Dir(filepath.Join(lp.Dir, filepath.FromSlash(e))); len(d) > len(lp.Dir); d = filepath.Dir(d) {
			embedDirs[d] = true
		}
	}
	for d := range embedDirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !e.IsDir() && isLicenseName(e.Name()) {
				r, _ := filepath.Rel(lp.ModDir, filepath.Join(d, e.Name()))
				files = append(files, filepath.ToSlash(r))
			}
		}
	}
	rel, err := filepath.Rel(lp.ModDir, lp.Dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("package dir %s is outside its module %s", lp.Dir, lp.ModDir)
	}
	for d := lp.Dir; ; d = filepath.Dir(d) {
		ents, err := os.ReadDir(d)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !e.IsDir() && isLicenseName(e.Name()) {
				r, _ := filepath.Rel(lp.ModDir, filepath.Join(d, e.Name()))
				files = append(files, filepath.ToSlash(r))
			}
		}
		if d == lp.ModDir || len(d) <= len(lp.ModDir) {
			break
		}
	}
	if lp.Cgo {
		err := filepath.WalkDir(lp.Dir, func(f string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if !d.IsDir() && filepath.Dir(f) != lp.Dir && isLicenseName(d.Name()) {
				r, _ := filepath.Rel(lp.ModDir, f)
				files = append(files, filepath.ToSlash(r))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

func isLicenseName(name string) bool {
	u := strings.ToUpper(name)
	switch strings.ToLower(filepath.Ext(name)) {
	case ".go", ".c", ".h", ".cc", ".cpp", ".hpp", ".s", ".json", ".html", ".js":
		return false
	}
	for _, p := range []string{"LICENSE", "LICENCE", "COPYING", "NOTICE", "UNLICENSE", "PATENTS"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// namedByHand names the licence texts licensecheck does not know, by the sha256 of the text
// (a changed text must be read again). Each entry says why.
var namedByHand = map[string]string{
	// fyne.io/fyne/v2 theme/font/LICENSE_DejaVu-Powerline.txt (the embedded monospace font):
	// the Bitstream Vera fonts licence, DejaVu's changes in the public domain, and the Arev fonts
	// licence (Vera's terms, by Tavmjong Bah), which has no SPDX id.
	"a30f2466a95cd1eaeff6041692f43469edcca052d002e877015a819c6e31c194": "Bitstream-Vera and LicenseRef-Arev-Fonts",
}

// identify names the licence of text by SPDX ids (licensecheck, else namedByHand), joined by
// " and ".
func identify(what string, text []byte) (string, error) {
	sum := sha256.Sum256(text)
	if name, ok := namedByHand[hex.EncodeToString(sum[:])]; ok {
		return name, nil
	}
	cov := licensecheck.Scan(text)
	ids := map[string]bool{}
	for _, m := range cov.Match {
		if !m.IsURL {
			ids[m.ID] = true
		}
	}
	if len(ids) == 0 || cov.Percent < 50 {
		return "", fmt.Errorf("the licence of %s is not recognised (%.0f%% of its text matched a known licence): name it in namedByHand (sha256 %x)", what, cov.Percent, sum)
	}
	var names []string
	for id := range ids {
		names = append(names, id)
	}
	sort.Strings(names)
	return strings.Join(names, " and "), nil
}

var (
	// A notice: "Copyright" (perhaps with "(c)" or "©") then a year or a capitalised name, or
	// "(c)" or "©" then a year.
	copyrightRE     = regexp.MustCompile(`^(?:(?i:copyright)\s*(?:(?i:\(c\))|©)?\s*(?:[0-9]{4}|[A-Z])|(?:(?i:\(c\))|©)\s*[0-9]{4})`)
	copyrightSkipRE = regexp.MustCompile(`(?i)\[yyyy\]|\{yyyy\}|<year>|notice|free software foundation|liable|warrant|holders and|owner or|provided`)
)
