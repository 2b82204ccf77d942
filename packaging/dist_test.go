//go:build integration

package packaging

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const appID = "com.github.hologramagent.hologram"

// A fileSum identifies a packaged file: its sha256 and, for a Go program, its Go build ID
// (which stripping keeps).
type fileSum struct{ sha, goid string }

// debFiles lists a .deb's regular files (paths without the leading ".").
func debFiles(t *testing.T, deb string) map[string]fileSum {
	t.Helper()
	cmd := exec.Command("dpkg-deb", "--fsys-tarfile", deb)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dpkg-deb --fsys-tarfile %s: %v", deb, err)
	}
	return tarFiles(t, bytes.NewReader(out), ".")
}

// tarFiles lists the regular files of a tar stream, names without prefix.
func tarFiles(t *testing.T, r io.Reader, prefix string) map[string]fileSum {
	t.Helper()
	files := map[string]fileSum{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		files[strings.TrimPrefix(h.Name, prefix)] = fileSum{sha: hex.EncodeToString(sum[:]), goid: goBuildID(data)}
	}
	return files
}

// goBuildID is the Go build ID note of an ELF program, "" for anything else.
func goBuildID(data []byte) string {
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return ""
	}
	s := ef.Section(".note.go.buildid")
	if s == nil {
		return ""
	}
	id, err := s.Data()
	if err != nil {
		return ""
	}
	return string(id)
}

// sumFile is what the packages must hold of the repository's file f: the same Go build (a
// program, which the packages strip) or the same bytes.
func sumFile(t *testing.T, f string) string {
	t.Helper()
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if id := goBuildID(data); id != "" {
		return "goid:" + id
	}
	s := sha256.Sum256(data)
	return "sha:" + hex.EncodeToString(s[:])
}

func sha256File(t *testing.T, f string) string {
	t.Helper()
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// expectedFiles are the files a variant must have (the .deb's paths) and the prefixes it must
// not have anything under. They come from the repository's bin/ and build/ (the packages hold
// these very files).
func expectedFiles(t *testing.T, v variant) (want map[string]string, forbidden []string) {
	t.Helper()
	want = map[string]string{}
	doc := "/usr/share/doc/" + v.pkg + "/"
	for _, f := range []string{doc + "copyright", doc + "changelog.gz"} {
		want[f] = ""
	}
	for _, b := range v.bins {
		src := filepath.Join(binDir(), b)
		if b == "hologram" && v.name == "client" {
			src = filepath.Join(binDir(), "hologram-client")
		}
		want["/usr/bin/"+b] = sumFile(t, src)
		want["/usr/share/man/man1/"+b+".1.gz"] = ""
	}
	if v.userUnit {
		want["/usr/lib/systemd/user/hologram.service"] = ""
	} else {
		forbidden = append(forbidden, "/usr/lib/systemd/user/")
	}
	if v.kernel {
		for _, a := range []string{"jieba", "onnxruntime", "models/ocr", "models/vad"} {
			dir := filepath.Join(repoRoot, "build", filepath.FromSlash(a))
			ents, err := os.ReadDir(dir)
			if err != nil && a == "jieba" {
				t.Fatalf("%s: %v", dir, err)
			}
			for _, e := range ents {
				if e.Name() == "LICENSE" || e.Name() == "SOURCE" {
					continue
				}
				want["/usr/lib/hologram/"+a+"/"+e.Name()] = sumFile(t, filepath.Join(dir, e.Name()))
			}
		}
		plugins, _ := filepath.Glob(filepath.Join(binDir(), "plugins", "*", "*"))
		for _, f := range plugins {
			rel, _ := filepath.Rel(binDir(), f)
			if strings.HasPrefix(filepath.ToSlash(rel), "plugins/echo/") && !v.userUnit {
				continue // the example plugin: full only
			}
			want["/usr/lib/hologram/"+filepath.ToSlash(rel)] = sumFile(t, f)
		}
		if !v.userUnit {
			forbidden = append(forbidden, "/usr/lib/hologram/plugins/echo/")
		}
	} else {
		forbidden = append(forbidden, "/usr/lib/hologram/", "/usr/lib/systemd/", "/usr/bin/homed")
	}
	if v.system {
		want["/lib/systemd/system/hologram.service"] = ""
	} else {
		forbidden = append(forbidden, "/lib/systemd/system/")
	}
	if v.desktop {
		want["/usr/share/applications/"+appID+".desktop"] = ""
		want["/usr/share/icons/hicolor/scalable/apps/"+appID+".svg"] = sumFile(t, filepath.Join(repoRoot, "gui", "assets", "icon.svg"))
		for _, s := range []int{16, 22, 24, 32, 48, 64, 128, 256, 512} {
			want[fmt.Sprintf("/usr/share/icons/hicolor/%dx%d/apps/%s.png", s, s, appID)] = ""
		}
		want["/usr/share/metainfo/"+appID+".metainfo.xml"] = ""
	} else {
		forbidden = append(forbidden, "/usr/share/applications/", "/usr/share/icons/", "/usr/bin/hologram")
		want["/usr/share/metainfo/"+appID+".server.metainfo.xml"] = ""
	}
	return want, forbidden
}

func checkFiles(t *testing.T, what string, got map[string]fileSum, want map[string]string, forbidden []string) {
	t.Helper()
	for f, sum := range want {
		g, ok := got[f]
		switch {
		case !ok:
			t.Errorf("%s lacks %s", what, f)
		case strings.HasPrefix(sum, "goid:") && "goid:"+g.goid != sum:
			t.Errorf("%s: %s is another build than the repository's (not the binaries make build left)", what, f)
		case strings.HasPrefix(sum, "sha:") && "sha:"+g.sha != sum:
			t.Errorf("%s: %s differs from the repository's file", what, f)
		}
	}
	for f := range got {
		for _, p := range forbidden {
			if strings.HasPrefix(f, p) {
				t.Errorf("%s has %s, which this variant must not have", what, f)
			}
		}
	}
}

func TestDebContentsAndControl(t *testing.T) {
	need(t, "dpkg-deb")
	pkgs := findPackages(t)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			f := pkgs[v.name]
			files := debFiles(t, f.deb)
			want, forbidden := expectedFiles(t, v)
			checkFiles(t, filepath.Base(f.deb), files, want, forbidden)
			if c := run(t, "dpkg-deb", "-c", f.deb); !strings.Contains(c, "root/root") || strings.Contains(c, "hologram/hologram") {
				t.Errorf("files must belong to root:\n%s", c)
			}

			info := run(t, "dpkg-deb", "-I", f.deb)
			others := map[string]bool{}
			for _, w := range variants {
				if w.name != v.name {
					others[w.pkg] = true
				}
			}
			for field, want := range map[string]string{"Package": v.pkg, "Version": f.version, "Architecture": "amd64", "Provides": "hologram"} {
				if got := controlField(info, field); got != want {
					t.Errorf("%s: %q, want %q", field, got, want)
				}
			}
			for _, field := range []string{"Conflicts", "Replaces"} {
				got := map[string]bool{}
				for _, p := range strings.Split(controlField(info, field), ",") {
					got[strings.TrimSpace(p)] = true
				}
				if fmt.Sprint(got) != fmt.Sprint(others) {
					t.Errorf("%s: %v, want %v", field, got, others)
				}
			}
			depends := controlField(info, "Depends")
			if !regexp.MustCompile(`(^|, )libc6 \(>= 2\.[0-9]+\)`).MatchString(depends) {
				t.Errorf("Depends %q lacks a versioned libc6", depends)
			}
			gui := []string{"libgl1", "libx11-6", "libxcursor1", "libxrandr2", "libxinerama1", "libxi6", "libxxf86vm1", "fonts-noto-cjk"}
			for _, d := range gui {
				has := regexp.MustCompile(`(^|, )` + regexp.QuoteMeta(d) + `( |,|$)`).MatchString(depends)
				if has != v.desktop {
					t.Errorf("Depends %q: has %s = %v, want %v", depends, d, has, v.desktop)
				}
			}
			if has := regexp.MustCompile(`(^|, )espeak-ng( |,|$)`).MatchString(depends); has != v.kernel {
				t.Errorf("Depends %q: has espeak-ng = %v, want %v (a kernel speaks)", depends, has, v.kernel)
			}
			if v.system != strings.Contains(depends, "passwd") {
				t.Errorf("Depends %q: passwd (useradd) only for the server", depends)
			}
			var wantRec []string
			if v.desktop {
				wantRec = append(wantRec, "pulseaudio-utils | pipewire-bin | alsa-utils") // the Talk button's recorder
			}
			if v.kernel {
				wantRec = append(wantRec, "wordnet-base", "chromium", "bubblewrap", "ffmpeg") // web_browse, code_run, voice messages
			}
			if rec := controlField(info, "Recommends"); rec != strings.Join(wantRec, ", ") {
				t.Errorf("Recommends %q, want %q", rec, strings.Join(wantRec, ", "))
			}
			// The project's own maintainer address, never a placeholder or a committer's.
			maint := controlField(info, "Maintainer")
			if !regexp.MustCompile(`^HologramAgent maintainers <[a-z.]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}>$`).MatchString(maint) ||
				regexp.MustCompile(`(?i)example|invalid|localhost|noreply|seed|test`).MatchString(maint) {
				t.Errorf("Maintainer %q, want HologramAgent maintainers <a real-looking project address>", maint)
			}
			if v.system != strings.Contains(info, "postinst") {
				t.Errorf("maintainer scripts only for the server:\n%s", info)
			}
		})
	}
}

// rpmFiles lists an .rpm's regular files with their sha256 (rpm -qp --dump).
func rpmFiles(t *testing.T, rpm string) map[string]fileSum {
	t.Helper()
	files := map[string]fileSum{}
	for _, line := range strings.Split(strings.TrimSpace(run(t, "rpm", "-qp", "--dump", rpm)), "\n") {
		// path size mtime digest mode owner group isconfig isdoc rdev symlink
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasPrefix(f[4], "010") { // regular files only
			continue
		}
		files[f[0]] = fileSum{sha: f[3]}
	}
	return files
}

func TestRPMContentsAndHeader(t *testing.T) {
	need(t, "rpm")
	pkgs := findPackages(t)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			f := pkgs[v.name]
			want, forbidden := expectedFiles(t, v)
			if v.system {
				delete(want, "/lib/systemd/system/hologram.service")
				want["/usr/lib/systemd/system/hologram.service"] = ""
			}
			// The programs are the .deb's (whose build the .deb test checks), byte for byte.
			deb := debFiles(t, f.deb)
			for p, sum := range want {
				if strings.HasPrefix(sum, "goid:") {
					want[p] = "sha:" + deb[p].sha
				}
			}
			files := rpmFiles(t, f.rpm)
			checkFiles(t, filepath.Base(f.rpm), files, want, forbidden)
			for p := range files {
				if strings.HasPrefix(p, "/lib/") || strings.HasPrefix(p, "/usr/share/lintian/") {
					t.Errorf("%s: %s is Debian's place", filepath.Base(f.rpm), p)
				}
			}
			run(t, "rpm", "-K", "--nosignature", f.rpm)
			info := run(t, "rpm", "-qip", f.rpm)
			for field, want := range map[string]string{"Name": v.pkg, "Version": f.version, "Release": "1", "Architecture": "x86_64"} {
				if got := controlField(info, field); got != want {
					t.Errorf("%s: %q, want %q", field, got, want)
				}
			}
			if l := controlField(info, "License"); !strings.HasPrefix(l, "AGPL-3.0-only AND ") || !strings.Contains(l, "BSD-3-Clause") {
				t.Errorf("License %q: ours first, then every bundled licence", l)
			}
			requires := run(t, "rpm", "-qp", "--requires", f.rpm)
			for _, r := range []string{"libc.so.6()(64bit)", "libc.so.6(GLIBC_2.34)(64bit)"} {
				if !strings.Contains(requires, r+"\n") {
					t.Errorf("requires lack %s:\n%s", r, requires)
				}
			}
			for _, r := range []string{"libGL.so.1()(64bit)", "libX11.so.6()(64bit)", "libXcursor.so.1()(64bit)", "google-noto-sans-cjk-fonts"} {
				if strings.Contains(requires, r) != v.desktop {
					t.Errorf("requires: has %s = %v, want %v:\n%s", r, !v.desktop, v.desktop, requires)
				}
			}
			if strings.Contains(requires, "shadow-utils") != v.system {
				t.Errorf("requires: shadow-utils only for the server:\n%s", requires)
			}
			conflicts := strings.Fields(run(t, "rpm", "-qp", "--conflicts", f.rpm))
			sort.Strings(conflicts)
			var others []string
			for _, w := range variants {
				if w.name != v.name {
					others = append(others, w.pkg)
				}
			}
			sort.Strings(others)
			if strings.Join(conflicts, " ") != strings.Join(others, " ") {
				t.Errorf("conflicts %q, want %q", conflicts, others)
			}
			if o := strings.TrimSpace(run(t, "rpm", "-qp", "--obsoletes", f.rpm)); o != "" {
				t.Errorf("obsoletes %q: dnf would swap variants by itself", o)
			}
			if p := run(t, "rpm", "-qp", "--provides", f.rpm); !strings.Contains(p, "hologram\n") && !strings.HasPrefix(p, "hologram\n") {
				t.Errorf("provides lack hologram:\n%s", p)
			}
			scripts := run(t, "rpm", "-qp", "--scripts", f.rpm)
			if strings.Contains(scripts, "useradd") != v.system {
				t.Errorf("scripts (useradd only in the server):\n%s", scripts)
			}
		})
	}
}

func TestTarballs(t *testing.T) {
	pkgs := findPackages(t)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			f := pkgs[v.name]
			r, err := os.Open(f.tgz)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			zr, err := gzip.NewReader(r)
			if err != nil {
				t.Fatal(err)
			}
			root := v.pkg + "-" + f.version + "-linux-amd64/"
			files := tarFiles(t, zr, root)
			// The .deb's files, mapped into a /usr/local-like prefix.
			want := map[string]string{}
			for p, sum := range debFiles(t, f.deb) {
				switch {
				case strings.HasPrefix(p, "/usr/share/lintian/"):
				case strings.HasSuffix(p, "/copyright"):
					// The .deb's refers to Debian's common licences; the tarball's has every text.
					want[strings.TrimPrefix(p, "/usr/")] = ""
				case strings.HasPrefix(p, "/usr/"):
					want[strings.TrimPrefix(p, "/usr/")] = "sha:" + sum.sha
				case strings.HasPrefix(p, "/lib/"):
					want[strings.TrimPrefix(p, "/")] = ""
				default:
					t.Errorf("the .deb has %s, outside /usr and /lib", p)
				}
			}
			for p := range files {
				if _, ok := want[p]; !ok {
					t.Errorf("tarball has %s%s, which the .deb lacks", root, p)
				}
			}
			for p, sum := range want {
				got, ok := files[p]
				if !ok {
					t.Errorf("tarball lacks %s%s", root, p)
				} else if sum != "" && !strings.HasPrefix(p, "lib/systemd/") && "sha:"+got.sha != sum {
					t.Errorf("tarball's %s differs from the .deb's", p)
				}
			}
		})
	}
}

func TestSHA256SUMS(t *testing.T) {
	need(t, "sha256sum")
	pkgs := findPackages(t)
	cmd := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
	cmd.Dir = distDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sha256sum --check: %v\n%s", err, out)
	}
	for _, f := range pkgs {
		for _, p := range []string{f.deb, f.rpm, f.tgz} {
			if !strings.Contains(string(out), filepath.Base(p)+": OK") {
				t.Errorf("SHA256SUMS does not list %s:\n%s", filepath.Base(p), out)
			}
		}
	}
}

func TestLintianHasNoErrors(t *testing.T) {
	need(t, "lintian")
	pkgs := findPackages(t)
	args := []string{"--no-tag-display-limit"}
	for _, v := range variants {
		args = append(args, pkgs[v.name].deb)
	}
	cmd := exec.Command("lintian", args...)
	out, err := cmd.CombinedOutput()
	var errs, warnings []string
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "E: "):
			errs = append(errs, line)
		case strings.HasPrefix(line, "W: "):
			warnings = append(warnings, line)
		}
	}
	t.Logf("lintian: %d errors, %d warnings\n%s", len(errs), len(warnings), strings.Join(warnings, "\n"))
	if len(errs) > 0 || (err != nil && len(warnings) == 0) {
		t.Fatalf("lintian: %v\n%s", err, out)
	}
}

// extract unpacks a .deb into a temporary directory.
func extract(t *testing.T, deb string) string {
	t.Helper()
	dir := t.TempDir()
	run(t, "dpkg-deb", "-x", deb, dir)
	return dir
}

func TestDesktopFilesIconsAndMetainfo(t *testing.T) {
	need(t, "dpkg-deb", "desktop-file-validate", "appstreamcli")
	pkgs := findPackages(t)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			root := extract(t, pkgs[v.name].deb)
			id := appID
			if !v.desktop {
				id += ".server"
			}
			meta := filepath.Join(root, "usr/share/metainfo", id+".metainfo.xml")
			out, err := exec.Command("appstreamcli", "validate", "--no-net", "--pedantic", meta).CombinedOutput()
			if err != nil {
				t.Errorf("appstreamcli validate: %v\n%s", err, out)
			}
			data, _ := os.ReadFile(meta)
			if !strings.Contains(string(data), `<release version="`+pkgs[v.name].version+`"`) {
				t.Errorf("metainfo names another release:\n%s", data)
			}
			if !v.desktop {
				return
			}
			desktop := filepath.Join(root, "usr/share/applications", appID+".desktop")
			if out, err := exec.Command("desktop-file-validate", desktop).CombinedOutput(); err != nil || len(out) > 0 {
				t.Errorf("desktop-file-validate: %v\n%s", err, out)
			}
			for _, s := range []int{16, 22, 24, 32, 48, 64, 128, 256, 512} {
				f, err := os.Open(filepath.Join(root, fmt.Sprintf("usr/share/icons/hicolor/%dx%d/apps/%s.png", s, s, appID)))
				if err != nil {
					t.Fatal(err)
				}
				cfg, err := png.DecodeConfig(f)
				f.Close()
				if err != nil || cfg.Width != s || cfg.Height != s {
					t.Errorf("icon %d: %dx%d, %v", s, cfg.Width, cfg.Height, err)
				}
			}
		})
	}
}

func TestManPagesChangelogAndCopyright(t *testing.T) {
	need(t, "dpkg-deb", "dpkg-parsechangelog", "go")
	pkgs := findPackages(t)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			root := extract(t, pkgs[v.name].deb)
			for _, b := range v.bins {
				page := gunzip(t, filepath.Join(root, "usr/share/man/man1", b+".1.gz"))
				// The flag definitions are the source: each page shows its program's flags.
				flagOf := map[string]string{"homed": `\-key\-file`, "waiter": `\-\-remote`, "hologram": `\-remote`}
				if !strings.Contains(page, ".TH "+strings.ToUpper(b)+" \"1\"") || !strings.Contains(page, flagOf[b]) || !strings.Contains(page, pkgs[v.name].version) {
					t.Errorf("man page of %s lacks its title, a flag (%s) or the version:\n%.600s", b, flagOf[b], page)
				}
				if strings.Contains(page, "/root/") {
					t.Errorf("man page of %s shows the build machine's paths", b)
				}
			}

			doc := filepath.Join(root, "usr/share/doc", v.pkg)
			changelog := filepath.Join(t.TempDir(), "changelog")
			if err := os.WriteFile(changelog, []byte(gunzip(t, filepath.Join(doc, "changelog.gz"))), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(run(t, "dpkg-parsechangelog", "-l", changelog, "-S", "Version")); got != pkgs[v.name].version {
				t.Errorf("changelog version %q, want %q", got, pkgs[v.name].version)
			}
			if got := strings.TrimSpace(run(t, "dpkg-parsechangelog", "-l", changelog, "-S", "Source")); got != v.pkg {
				t.Errorf("changelog package %q, want %q", got, v.pkg)
			}

			cr, err := os.ReadFile(filepath.Join(doc, "copyright"))
			if err != nil {
				t.Fatal(err)
			}
			license, _ := os.ReadFile(filepath.Join(repoRoot, "LICENSE"))
			copyright := string(cr)
			for _, want := range []string{
				"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n",
				"\nFiles: *\nCopyright: ", "\nLicense: AGPL-3.0-only\n GNU AFFERO GENERAL PUBLIC LICENSE\n",
				"\nFiles: go/*\n",
				" " + strings.Split(strings.TrimSpace(string(license)), "\n")[len(strings.Split(strings.TrimSpace(string(license)), "\n"))-1],
			} {
				if !strings.Contains(copyright, want) {
					t.Errorf("copyright lacks %q", want)
				}
			}
			// Every module linked into a packaged program has its paragraph.
			for _, b := range v.bins {
				out := run(t, "go", "version", "-m", filepath.Join(root, "usr/bin", b))
				for _, line := range strings.Split(out, "\n") {
					f := strings.Fields(line)
					if len(f) >= 3 && f[0] == "dep" && !strings.Contains(copyright, "\nFiles: "+f[1]+"/*\n") {
						t.Errorf("copyright lacks the module %s %s, linked into %s", f[1], f[2], b)
					}
				}
			}
			for _, a := range []string{"jieba", "onnxruntime", "models/ocr", "models/vad"} {
				_, err := os.Stat(filepath.Join(root, "usr/lib/hologram", a))
				if has := strings.Contains(copyright, "\nFiles: usr/lib/hologram/"+a+"/*\n"); has != (err == nil) {
					t.Errorf("copyright paragraph for %s: %v, installed: %v", a, has, err == nil)
				}
			}
		})
	}
}

func gunzip(t *testing.T, f string) string {
	t.Helper()
	r, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	zr, err := gzip.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
