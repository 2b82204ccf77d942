package main

// debian/copyright: the Go modules' and bundled assets' license paragraphs and copyright lines.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
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
