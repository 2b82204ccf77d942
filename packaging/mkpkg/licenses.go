package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

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

// copyrightLines extracts the copyright notices of a licence text, or a note that it has none.
func copyrightLines(what string, text []byte) string {
	var lines []string
	seen := map[string]bool{}
	for _, l := range strings.Split(string(text), "\n") {
		l = strings.TrimSpace(l)
		if !copyrightRE.MatchString(l) || copyrightSkipRE.MatchString(l) || seen[l] {
			continue
		}
		seen[l] = true
		lines = append(lines, l)
	}
	if len(lines) == 0 && what != "" {
		return "the authors of " + what + " (the licence text names no holder)"
	}
	return strings.Join(lines, "\n")
}

// addCopyright writes /usr/share/doc/<package>/copyright in the DEP-5 format: ours first, then
// the Go standard library, every third-party Go module linked into the package's programs
// (one paragraph per licence file), and the bundled assets.
func (p *pkg) addCopyright(ctx context.Context, l *licenseScanner) error {
	license, err := os.ReadFile(filepath.Join(p.o.Root, "LICENSE"))
	if err != nil {
		return err
	}
	years, err := copyrightYears(ctx, p.o.Root, p.time)
	if err != nil {
		return err
	}
	paras := []licensePara{{Files: "*", Copyright: years + " The HologramAgent authors", License: ourLicense, Texts: []licenseText{{Name: "LICENSE", Text: string(license)}}}}

	mods, goVersion, err := l.modules(ctx, p)
	if err != nil {
		return err
	}
	if goVersion != "" {
		goroot, err := runCmd(ctx, p.o.Root, nil, p.o.Go, "env", "GOROOT")
		if err != nil {
			return err
		}
		gr := strings.TrimSpace(string(goroot))
		files := []string{filepath.Join(gr, "LICENSE")}
		if _, err := os.Stat(filepath.Join(gr, "PATENTS")); err == nil {
			files = append(files, filepath.Join(gr, "PATENTS"))
		}
		para, err := dirParagraph(files, "go/*", "The Go standard library and runtime ("+goVersion+"), linked into every program.", "Go")
		if err != nil {
			return err
		}
		paras = append(paras, para)
	}
	var keys []string
	for k := range mods {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m := mods[k]
		var into []string
		for d := range m.Into {
			into = append(into, d)
		}
		sort.Strings(into)
		byDir := map[string][]string{}
		for f := range m.Licenses {
			byDir[path.Dir(f)] = append(byDir[path.Dir(f)], filepath.Join(m.Dir, filepath.FromSlash(f)))
		}
		var dirs []string
		for d := range byDir {
			dirs = append(dirs, d)
		}
		sort.Strings(dirs)
		for _, dir := range dirs {
			pattern, where := m.Path+"/*", ""
			if dir != "." {
				pattern, where = m.Path+"/"+dir+"/*", " ("+dir+")"
			}
			comment := fmt.Sprintf("Go module %s %s%s, linked into %s.", m.Path, m.Version, where, strings.Join(into, ", "))
			para, err := dirParagraph(byDir[dir], pattern, comment, m.Path)
			if err != nil {
				return err
			}
			paras = append(paras, para)
		}
	}
	assets, err := p.assetParagraphs(mods)
	if err != nil {
		return err
	}
	paras = append(paras, assets...)

	// The .deb refers to Debian's common licences; the .rpm and the .tar.gz carry every text.
	full, err := p.genFile("copyright", []byte(renderCopyright(p.maint, paras, false)))
	if err != nil {
		return err
	}
	deb, err := p.genFile("copyright.deb", []byte(renderCopyright(p.maint, paras, true)))
	if err != nil {
		return err
	}
	dst := "/usr/share/doc/" + p.v.Package + "/copyright"
	p.add(entry{Src: deb, Dst: dst, Mode: 0o644, Only: "deb"})
	p.add(entry{Src: full, Dst: dst, Mode: 0o644, Type: "license", Only: "rpm"})
	p.add(entry{Src: full, Dst: dst, Mode: 0o644, Only: "tar"})
	ids := map[string]bool{}
	for _, para := range paras {
		for _, id := range strings.Split(para.License, " and ") {
			ids[id] = true
		}
	}
	delete(ids, ourLicense)
	var others []string
	for id := range ids {
		others = append(others, id)
	}
	sort.Strings(others)
	p.license = strings.Join(append([]string{ourLicense}, others...), " AND ")
	return nil
}

// assetParagraphs are the paragraphs of the assets the package installs under /usr/lib/hologram.
func (p *pkg) assetParagraphs(mods map[string]*goModule) ([]licensePara, error) {
	has := func(dir string) bool {
		for _, e := range p.entries {
			if strings.HasPrefix(e.Dst, libDir+"/"+dir+"/") {
				return true
			}
		}
		return false
	}
	var paras []licensePara
	if has("jieba") {
		var jieba *goModule
		for _, m := range mods {
			if m.Path == "github.com/yanyiwu/gojieba" {
				jieba = m
			}
		}
		if jieba == nil {
			return nil, fmt.Errorf("%s/jieba is installed but no program links github.com/yanyiwu/gojieba, whose dictionaries they are", libDir)
		}
		para, err := fileParagraph(filepath.Join(jieba.Dir, "deps", "cppjieba", "LICENSE"), "usr/lib/hologram/jieba/*",
			fmt.Sprintf("The dictionaries of cppjieba, from the Go module %s %s (deps/cppjieba/dict).", jieba.Path, jieba.Version), "cppjieba")
		if err != nil {
			return nil, err
		}
		paras = append(paras, para)
	}
	for _, dir := range []string{"onnxruntime", "models/ocr", "models/vad"} {
		if !has(dir) {
			continue
		}
		src := filepath.Join(p.o.Assets, filepath.FromSlash(dir))
		comment := "Installed from " + src + "."
		if s, err := os.ReadFile(filepath.Join(src, "SOURCE")); err == nil {
			comment = "From the npm package " + strings.Join(strings.Fields(string(s)), ", integrity ") + "."
		}
		para, err := fileParagraph(filepath.Join(src, "LICENSE"), "usr/lib/hologram/"+dir+"/*", comment, dir)
		if err != nil {
			return nil, fmt.Errorf("%w (every bundled asset needs its licence)", err)
		}
		paras = append(paras, para)
	}
	return paras, nil
}

// fileParagraph is the paragraph of the licence file f.
func fileParagraph(f, files, comment, what string) (licensePara, error) {
	return dirParagraph([]string{f}, files, comment, what)
}

// dirParagraph is the paragraph of the licence files of one directory: the licences their
// texts name, joined by " and ", and every text in full, each after its file's name when there
// are several. Notices (NOTICE, PATENTS) are included but name no licence.
func dirParagraph(files []string, pattern, comment, what string) (licensePara, error) {
	sort.Slice(files, func(i, j int) bool {
		ni, nj := isNoticeName(filepath.Base(files[i])), isNoticeName(filepath.Base(files[j]))
		if ni != nj {
			return !ni
		}
		return files[i] < files[j]
	})
	ids := map[string]bool{}
	var texts []licenseText
	var holders []string
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			return licensePara{}, err
		}
		lt := licenseText{Name: filepath.Base(f), Text: string(text)}
		if !isNoticeName(filepath.Base(f)) {
			id, err := identify(what+" ("+f+")", text)
			if err != nil {
				return licensePara{}, err
			}
			lt.ID = id
			for _, i := range strings.Split(id, " and ") {
				ids[i] = true
			}
			if c := copyrightLines("", text); c != "" {
				holders = append(holders, c)
			}
		}
		texts = append(texts, lt)
	}
	if len(ids) == 0 {
		return licensePara{}, fmt.Errorf("%s: %s holds notices but no licence", what, filepath.Dir(files[0]))
	}
	var names []string
	for id := range ids {
		names = append(names, id)
	}
	sort.Strings(names)
	cr := strings.Join(holders, "\n")
	if cr == "" {
		cr = "the authors of " + what + " (the licence text names no holder)"
	}
	return licensePara{Files: pattern, Copyright: cr, License: strings.Join(names, " and "), Texts: texts, Comment: comment}, nil
}

func isNoticeName(name string) bool {
	u := strings.ToUpper(name)
	return strings.HasPrefix(u, "NOTICE") || strings.HasPrefix(u, "PATENTS")
}

// copyrightYears is "2025" or "2025-2026": the root commit's year to HEAD's.
func copyrightYears(ctx context.Context, root string, head time.Time) (string, error) {
	out, err := runCmd(ctx, root, nil, "git", "log", "--max-parents=0", "--format=%ct", "HEAD")
	if err != nil {
		return "", err
	}
	first := head.Year()
	for _, f := range strings.Fields(string(out)) {
		sec, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return "", fmt.Errorf("root commit time %q: %w", f, err)
		}
		if y := time.Unix(sec, 0).UTC().Year(); y < first {
			first = y
		}
	}
	if first == head.Year() {
		return strconv.Itoa(first), nil
	}
	return fmt.Sprintf("%d-%d", first, head.Year()), nil
}

// renderCopyright writes paras as a DEP-5 (copyright-format 1.0) file; common refers to
// /usr/share/common-licenses for the licences Debian ships.
func renderCopyright(maint string, paras []licensePara, common bool) string {
	var b bytes.Buffer
	b.WriteString("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n")
	b.WriteString("Upstream-Name: HologramAgent\n")
	b.WriteString("Upstream-Contact: " + maint + "\n")
	b.WriteString("Source: " + homepage + "\n")
	b.WriteString(field("Comment", "The programs are built from the Go module github.com/hologramagent/hologram. Files patterns of the form <module path>/* stand for the Go modules linked into them (the versions are in each paragraph's comment); usr/lib/hologram/* patterns for the installed assets."))
	for _, p := range paras {
		b.WriteString("\n")
		b.WriteString("Files: " + p.Files + "\n")
		b.WriteString(field("Copyright", p.Copyright))
		b.WriteString(field("License", p.License+"\n"+p.text(common)))
		if p.Comment != "" {
			b.WriteString(field("Comment", p.Comment))
		}
	}
	return b.String()
}

// field formats a DEP-5 field: the first line after the name, each further line indented by
// one space, empty lines as " .".
func field(name, value string) string {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(value, "\r\n", "\n"), "\n \t"), "\n")
	// Drop leading empty lines of the continuation (a licence text starting with blank lines).
	for len(lines) > 1 && strings.TrimSpace(lines[1]) == "" {
		lines = append(lines[:1], lines[2:]...)
	}
	var b strings.Builder
	b.WriteString(name + ": " + strings.TrimSpace(lines[0]) + "\n")
	for _, l := range lines[1:] {
		l = strings.TrimRight(strings.ReplaceAll(l, "\f", ""), " \t")
		if strings.TrimSpace(l) == "" {
			b.WriteString(" .\n")
		} else {
			b.WriteString(" " + l + "\n")
		}
	}
	return b.String()
}
