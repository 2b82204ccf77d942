package main

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// An entry is one file of a package.
type entry struct {
	Src  string      // the file on disk
	Dst  string      // its absolute path once installed
	Mode fs.FileMode // 0755 or 0644
	// Type is nfpm's content type: "" for a plain file, "doc" or "license" (the .rpm marks
	// them %doc and %license).
	Type string
	// Only limits the entry to one output: "deb", "rpm" or "tar"; empty is all three.
	Only string
}

// pkg is one variant being packaged.
type pkg struct {
	o       options
	v       variant
	version string
	time    time.Time // HEAD's commit time: every generated date and mtime
	maint   string
	gen     string // o.Work/<variant>: generated files
	entries []entry
	license string // the SPDX expression of everything in the package (addCopyright)
}

// build makes every package of o.Variants and SHA256SUMS, returning the files written.
func build(ctx context.Context, o options, log io.Writer) ([]string, error) {
	if err := checkTools(append(requiredTools, tool{o.NFPM, "it: make packages installs nfpm into build/tools"})); err != nil {
		return nil, err
	}
	g, err := readGit(ctx, o.Root)
	if err != nil {
		return nil, err
	}
	version := o.Version
	if version == "" {
		if version, err = packageVersion(g); err != nil {
			return nil, err
		}
	}
	maint := o.Maintainer
	if maint == "" {
		maint = maintainer
	}
	if err := os.RemoveAll(o.Work); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	lic := newLicenseScanner(o)
	// The variants are independent: build them at once (nfpm and gzip are single-threaded).
	results := make([][]string, len(o.Variants))
	errs := make([]error, len(o.Variants))
	var wg sync.WaitGroup
	for i, name := range o.Variants {
		v, _ := variantByName(name)
		p := &pkg{o: o, v: v, version: version, time: g.Time, maint: maint, gen: filepath.Join(o.Work, v.Name)}
		fmt.Fprintf(log, "mkpkg: %s %s\n", v.Package, version)
		wg.Add(1)
		go func() {
			defer wg.Done()
			files, err := p.build(ctx, lic)
			if err != nil {
				err = fmt.Errorf("%s: %w", v.Package, err)
			}
			results[i], errs[i] = files, err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var written []string
	for _, files := range results {
		written = append(written, files...)
	}
	sums, err := writeSums(o.Out)
	if err != nil {
		return nil, err
	}
	return append(written, sums), nil
}

// build stages p's files and writes its .deb, .rpm and .tar.gz.
func (p *pkg) build(ctx context.Context, lic *licenseScanner) ([]string, error) {
	if err := os.MkdirAll(p.gen, 0o755); err != nil {
		return nil, err
	}
	if err := removeOld(p.o.Out, p.v.Package); err != nil {
		return nil, err
	}
	steps := []func(context.Context) error{p.addBinaries, p.addKernelFiles, p.addDesktopFiles, p.addUnits, p.addMetainfo, p.addChangelog}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	if err := p.addCopyright(ctx, lic); err != nil {
		return nil, err
	}
	if err := p.addLintianOverrides(); err != nil {
		return nil, err
	}
	deps, err := p.dependencies(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, format := range p.o.Formats {
		if format == "tar" {
			tgz := filepath.Join(p.o.Out, p.tarName())
			if err := writeTarball(tgz, p.tarRoot(), p.entries, p.time); err != nil {
				return nil, err
			}
			out = append(out, tgz)
			continue
		}
		f, err := p.nfpm(ctx, format, deps)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func (p *pkg) add(e entry) { p.entries = append(p.entries, e) }

// genFile writes a generated file under p.gen and returns its path.
func (p *pkg) genFile(name string, data []byte) (string, error) {
	f := filepath.Join(p.gen, name)
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		return "", err
	}
	return f, os.WriteFile(f, data, 0o644)
}

func (p *pkg) addBinaries(ctx context.Context) error {
	for _, b := range p.v.Bins {
		src := filepath.Join(p.o.Bin, b.File)
		if err := isExecutable(src); err != nil {
			return fmt.Errorf("%w (run make build first)", err)
		}
		stripped, err := p.strip(ctx, src, "/usr/bin/"+b.Name)
		if err != nil {
			return err
		}
		p.add(entry{Src: stripped, Dst: "/usr/bin/" + b.Name, Mode: 0o755})
		man, err := p.manPage(ctx, src, b)
		if err != nil {
			return err
		}
		p.add(entry{Src: man, Dst: "/usr/share/man/man1/" + b.Name + ".1.gz", Mode: 0o644})
	}
	return nil
}

// addKernelFiles adds the built-in plugins and the memory's assets (kernel variants only).
func (p *pkg) addKernelFiles(ctx context.Context) error {
	if !p.v.Kernel {
		return nil
	}
	// Built-in plugins: every bin/plugins/<name>/ whole, so a new plugin (binary, plugin.json,
	// assets) needs no change here.
	plugins, err := filepath.Glob(filepath.Join(p.o.Bin, "plugins", "*"))
	if err != nil {
		return err
	}
	for _, dir := range plugins {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "plugin.json")); err != nil {
			return fmt.Errorf("built-in plugin %s has no plugin.json: %w", dir, err)
		}
		if examplePlugins[filepath.Base(dir)] && !p.v.Examples {
			continue
		}
		if err := p.addTree(ctx, dir, path.Join(libDir, "plugins", filepath.Base(dir)), nil); err != nil {
			return err
		}
	}
	// Assets. jieba's dictionaries are required (the memory segments Chinese with them); ONNX
	// Runtime and the OCR models are shipped when present. Their LICENSE and SOURCE files go
	// into the copyright file instead.
	skip := map[string]bool{"LICENSE": true, "SOURCE": true}
	for _, a := range assetDirs {
		src := filepath.Join(p.o.Assets, filepath.FromSlash(a.Dir))
		if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
			if a.Required {
				return fmt.Errorf("%s is missing (run make %s)", src, a.Target)
			}
			continue
		}
		if err := p.addTree(ctx, src, path.Join(libDir, a.Dir), skip); err != nil {
			return err
		}
	}
	return nil
}

// assetDirs are the asset folders under build/ and their install dirs under /usr/lib/hologram.
var assetDirs = []struct {
	Dir, Target string // the folder and the make target that fills it
	Required    bool
}{
	{"jieba", "jieba-dict", true},
	{"onnxruntime", "onnxruntime", false},
	{"models/ocr", "ocr-models", false},
	{"models/vad", "vad-model", false},
}

// addTree adds every regular file under dir as dst/<relative path>, executables 0755 (and
// stripped, when they are programs).
func (p *pkg) addTree(ctx context.Context, dir, dst string, skip map[string]bool) error {
	var n int
	err := filepath.WalkDir(dir, func(f string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, f)
		if skip[rel] {
			return nil
		}
		fi, err := os.Stat(f)
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", f)
		}
		mode := fs.FileMode(0o644)
		src, to := f, path.Join(dst, filepath.ToSlash(rel))
		if fi.Mode()&0o111 != 0 {
			mode = 0o755
			if !isSharedLib(to) {
				if src, err = p.strip(ctx, f, to); err != nil {
					return err
				}
			}
		}
		p.add(entry{Src: src, Dst: to, Mode: mode})
		n++
		return nil
	})
	if err == nil && n == 0 {
		err = fmt.Errorf("%s holds no file", dir)
	}
	return err
}

func (p *pkg) addDesktopFiles(ctx context.Context) error {
	if !p.v.Desktop {
		return nil
	}
	p.add(entry{Src: filepath.Join(p.o.Root, "packaging", "desktop", appID+".desktop"), Dst: "/usr/share/applications/" + appID + ".desktop", Mode: 0o644})
	svg := filepath.Join(p.o.Root, "gui", "assets", "icon.svg")
	p.add(entry{Src: svg, Dst: "/usr/share/icons/hicolor/scalable/apps/" + appID + ".svg", Mode: 0o644})
	for _, size := range iconSizes {
		png := filepath.Join(p.gen, "icons", fmt.Sprintf("%d.png", size))
		if err := os.MkdirAll(filepath.Dir(png), 0o755); err != nil {
			return err
		}
		s := fmt.Sprint(size)
		if _, err := runCmd(ctx, "", nil, "rsvg-convert", "--width", s, "--height", s, "--format", "png", "--output", png, svg); err != nil {
			return fmt.Errorf("rendering the %d px icon: %w", size, err)
		}
		p.add(entry{Src: png, Dst: fmt.Sprintf("/usr/share/icons/hicolor/%dx%d/apps/%s.png", size, size, appID), Mode: 0o644})
	}
	return nil
}

// iconSizes are the hicolor sizes rendered from gui/assets/icon.svg.
var iconSizes = []int{16, 22, 24, 32, 48, 64, 128, 256, 512}

// addUnits adds homed's systemd units: the user unit (full, installed disabled) and
// the system unit (server). The .deb puts system units in /lib/systemd/system (Debian 12), the
// .rpm in /usr/lib/systemd/system, the .tar.gz (extracted into /usr/local) in lib/systemd.
func (p *pkg) addUnits(context.Context) error {
	type unit struct{ tmpl, dir string }
	var units []unit
	if p.v.UserUnit {
		units = append(units, unit{"hologram-user.service", "systemd/user"})
	}
	if p.v.SystemUnit {
		units = append(units, unit{"hologram.service", "systemd/system"})
	}
	for _, u := range units {
		tmpl, err := os.ReadFile(filepath.Join(p.o.Root, "packaging", "systemd", u.tmpl))
		if err != nil {
			return err
		}
		pkgUnit, err := p.genFile(filepath.Join("units", "pkg", u.dir, unitName), []byte(strings.ReplaceAll(string(tmpl), "@BINDIR@", "/usr/bin")))
		if err != nil {
			return err
		}
		tarUnit, err := p.genFile(filepath.Join("units", "tar", u.dir, unitName), []byte(strings.ReplaceAll(string(tmpl), "@BINDIR@", "/usr/local/bin")))
		if err != nil {
			return err
		}
		if u.dir == "systemd/system" {
			p.add(entry{Src: pkgUnit, Dst: "/lib/systemd/system/" + unitName, Mode: 0o644, Only: "deb"})
		} else {
			p.add(entry{Src: pkgUnit, Dst: "/usr/lib/systemd/user/" + unitName, Mode: 0o644, Only: "deb"})
		}
		p.add(entry{Src: pkgUnit, Dst: "/usr/lib/" + u.dir + "/" + unitName, Mode: 0o644, Only: "rpm"})
		p.add(entry{Src: tarUnit, Dst: "/usr/lib/" + u.dir + "/" + unitName, Mode: 0o644, Only: "tar"})
	}
	return nil
}

func (p *pkg) addChangelog(ctx context.Context) error {
	text, err := changelog(ctx, p.o.Root, p.v.Package, p.version, p.maint)
	if err != nil {
		return fmt.Errorf("changelog: %w", err)
	}
	gz, err := gzipBytes([]byte(text))
	if err != nil {
		return err
	}
	f, err := p.genFile("changelog.gz", gz)
	if err != nil {
		return err
	}
	p.add(entry{Src: f, Dst: "/usr/share/doc/" + p.v.Package + "/changelog.gz", Mode: 0o644, Type: "doc"})
	return nil
}

func (p *pkg) addLintianOverrides() error {
	src := filepath.Join(p.o.Root, "packaging", "lintian", p.v.Package)
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	p.add(entry{Src: src, Dst: "/usr/share/lintian/overrides/" + p.v.Package, Mode: 0o644, Only: "deb"})
	return nil
}

// elfFiles are the package's ELF files (binaries, plugins, shared libraries), sorted.
func (p *pkg) elfFiles() []entry {
	var out []entry
	seen := map[string]bool{}
	for _, e := range p.entries {
		if seen[e.Src] {
			continue
		}
		seen[e.Src] = true
		if f, err := elf.Open(e.Src); err == nil {
			f.Close()
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dst < out[j].Dst })
	return out
}

func (p *pkg) tarRoot() string { return p.v.Package + "-" + p.version + "-linux-" + arch }
func (p *pkg) tarName() string { return p.tarRoot() + ".tar.gz" }

// removeOld deletes the outputs of an earlier build of the package from dir.
func removeOld(dir, pkgName string) error {
	for _, pat := range []string{pkgName + "_*.deb", pkgName + "-*.rpm", pkgName + "-*.tar.gz"} {
		old, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return err
		}
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// strip returns a copy of the program src without symbols and debug information, as Debian's
// dh_strip makes it (Go's stack traces need neither): the same build, whose Go build ID
// (.note.go.buildid) and build information stay, which strip checks. A file that is not ELF
// is returned as it is.
func (p *pkg) strip(ctx context.Context, src, dst string) (string, error) {
	before, err := goBuildID(src)
	if errors.Is(err, errNotELF) {
		return src, nil
	} else if err != nil {
		return "", err
	}
	out := filepath.Join(p.gen, "stripped", filepath.FromSlash(dst))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	if _, err := runCmd(ctx, "", nil, "strip", "--remove-section=.comment", "--remove-section=.note", "-o", out, src); err != nil {
		return "", err
	}
	after, err := goBuildID(out)
	if err != nil {
		return "", err
	}
	if before != after {
		return "", fmt.Errorf("strip changed the Go build ID of %s (%q, was %q)", src, after, before)
	}
	return out, nil
}

var errNotELF = errors.New("not an ELF file")

// goBuildID reads the Go build ID note of an ELF file ("" for a program not built by Go).
func goBuildID(f string) (string, error) {
	ef, err := elf.Open(f)
	if err != nil {
		return "", errNotELF
	}
	defer ef.Close()
	s := ef.Section(".note.go.buildid")
	if s == nil {
		return "", nil
	}
	data, err := s.Data()
	if err != nil {
		return "", fmt.Errorf("%s: %w", f, err)
	}
	return string(data), nil
}

func isExecutable(f string) error {
	fi, err := os.Stat(f)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", f)
	}
	return nil
}
