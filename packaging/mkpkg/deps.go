package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// elfdepsPath is rpm's dependency generator for ELF files, as rpmbuild runs it.
const elfdepsPath = "/usr/lib/rpm/elfdeps"

// deps are a package's relations, per format.
type deps struct {
	DebDepends, DebRecommends []string
	RPMRequires               []string
}

// glfwDlopen are the X11 libraries GLFW (the GUI's window library) loads with dlopen at run
// time: no NEEDED entry names them, so the ELF tools do not see them, but without them cursors,
// monitors (HiDPI scale) and input degrade. Each must appear in the GUI binary, which
// dependencies checks.
var glfwDlopen = []string{"libXcursor.so.1", "libXrandr.so.2", "libXinerama.so.1", "libXi.so.6", "libXxf86vm.so.1"}

// dependencies computes the package's relations from its ELF files, the way Debian and rpm
// tooling does: dpkg-shlibdeps for the .deb, rpm's elfdeps for the .rpm (minus what the
// package's own libraries provide). GUI programs add the libraries GLFW loads at run time and
// CJK fonts; kernel variants recommend WordNet (the memory's English lexicon); the server's
// scripts need useradd.
func (p *pkg) dependencies(ctx context.Context) (deps, error) {
	var d deps
	elves := p.elfFiles()
	if len(elves) == 0 {
		return d, fmt.Errorf("no ELF file to take dependencies from")
	}
	// .deb: dpkg-shlibdeps wants a source package layout; give it a minimal one.
	tmp, err := os.MkdirTemp("", "mkpkg-shlibdeps")
	if err != nil {
		return d, err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "debian"), 0o755); err != nil {
		return d, err
	}
	control := "Source: " + p.v.Package + "\n\nPackage: " + p.v.Package + "\nArchitecture: any\n"
	if err := os.WriteFile(filepath.Join(tmp, "debian", "control"), []byte(control), 0o644); err != nil {
		return d, err
	}
	args := []string{"-O", "--ignore-missing-info"}
	privDirs := map[string]bool{}
	for _, e := range elves {
		if isSharedLib(e.Dst) {
			abs, _ := filepath.Abs(filepath.Dir(e.Src))
			privDirs[abs] = true
		}
	}
	for dir := range privDirs {
		args = append(args, "-l"+dir)
	}
	for _, e := range elves {
		abs, err := filepath.Abs(e.Src)
		if err != nil {
			return d, err
		}
		args = append(args, "-e"+abs)
	}
	out, err := runCmd(ctx, tmp, nil, "dpkg-shlibdeps", args...)
	if err != nil {
		return d, err
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "shlibs:Depends="); ok {
			for _, dep := range strings.Split(v, ",") {
				if dep = strings.TrimSpace(dep); dep != "" {
					d.DebDepends = append(d.DebDepends, dep)
				}
			}
		}
	}
	if len(d.DebDepends) == 0 {
		return d, fmt.Errorf("dpkg-shlibdeps found no dependency (at least libc6): %s", out)
	}

	// .rpm: every ELF file's requirements, minus the sonames the package's libraries provide.
	provided := map[string]bool{}
	required := map[string]bool{}
	for _, e := range elves {
		if isSharedLib(e.Dst) {
			out, err := runCmd(ctx, "", nil, elfdepsPath, "--provides", e.Src)
			if err != nil {
				return d, err
			}
			for _, l := range strings.Fields(string(out)) {
				provided[l] = true
			}
		}
		out, err := runCmd(ctx, "", nil, elfdepsPath, "--requires", e.Src)
		if err != nil {
			return d, err
		}
		for _, l := range strings.Fields(string(out)) {
			required[l] = true
		}
	}
	for r := range required {
		if !provided[r] {
			d.RPMRequires = append(d.RPMRequires, r)
		}
	}
	sort.Strings(d.RPMRequires)

	if p.v.Desktop {
		gui, err := p.guiBinary()
		if err != nil {
			return d, err
		}
		for _, lib := range glfwDlopen {
			if !bytes.Contains(gui, []byte(lib+"\x00")) {
				return d, fmt.Errorf("the GUI binary no longer names %s: update glfwDlopen", lib)
			}
			pkgName, err := debPackageOf(ctx, lib)
			if err != nil {
				return d, err
			}
			d.DebDepends = append(d.DebDepends, pkgName)
			d.RPMRequires = append(d.RPMRequires, lib+"()(64bit)")
		}
		d.DebDepends = append(d.DebDepends, "fonts-noto-cjk")
		// A recorder for the chat's Talk button (gui/chat_mic.go tries parec, pw-record, arecord).
		d.DebRecommends = append(d.DebRecommends, "pulseaudio-utils | pipewire-bin | alsa-utils")
		d.RPMRequires = append(d.RPMRequires, "(google-noto-sans-cjk-fonts or google-noto-sans-cjk-ttc-fonts)")
	}
	if p.v.Kernel {
		// wordnet-base: the memory's lexicon; chromium: the web plugin's web_browse drives it
		// (web_fetch works without); bubblewrap: the code plugin's sandbox (Landlock alone
		// without it); ffmpeg: voice messages in other formats than WAV and speech as Ogg/Opus.
		d.DebRecommends = append(d.DebRecommends, "wordnet-base", "chromium", "bubblewrap", "ffmpeg")
		// espeak-ng: replies spoken aloud (POST /api/v1/speech, `waiter say`; kernel/speech runs
		// the command, so the kernel still starts without it).
		d.DebDepends = append(d.DebDepends, "espeak-ng")
		d.RPMRequires = append(d.RPMRequires, "espeak-ng")
	}
	if p.v.SystemUnit {
		d.DebDepends = append(d.DebDepends, "passwd")
		d.RPMRequires = append(d.RPMRequires, "shadow-utils")
	}
	return d, nil
}

// guiBinary reads the package's desktop app.
func (p *pkg) guiBinary() ([]byte, error) {
	for _, e := range p.entries {
		if e.Dst == "/usr/bin/hologram" {
			return os.ReadFile(e.Src)
		}
	}
	return nil, fmt.Errorf("a desktop package without /usr/bin/hologram")
}

// debPackageOf names the installed Debian package that holds the library soname.
func debPackageOf(ctx context.Context, soname string) (string, error) {
	out, err := runCmd(ctx, "", nil, "dpkg-query", "-S", "*/"+soname)
	if err != nil {
		return "", fmt.Errorf("which package holds %s (install the GUI's build dependencies, .ci/deps.sh): %w", soname, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		pkgs, _, ok := strings.Cut(line, ": ")
		if !ok || strings.HasPrefix(pkgs, "diversion") {
			continue
		}
		name, _, _ := strings.Cut(strings.Split(pkgs, ",")[0], ":")
		return strings.TrimSpace(name), nil
	}
	return "", fmt.Errorf("no package holds %s", soname)
}

// isSharedLib reports an installed path that is a shared library (lib*.so*).
func isSharedLib(dst string) bool {
	base := path.Base(dst)
	return strings.HasPrefix(base, "lib") && strings.Contains(base, ".so")
}
