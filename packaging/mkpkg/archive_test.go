package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteTarball(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "homed"), "#!/bin/sh\n")
	writeFile(t, filepath.Join(dir, "unit-pkg"), "ExecStart=/usr/bin/homed\n")
	writeFile(t, filepath.Join(dir, "unit-tar"), "ExecStart=/usr/local/bin/homed\n")
	mtime := time.Date(2026, 11, 30, 15, 50, 12, 0, time.UTC)
	entries := []entry{
		{Src: filepath.Join(dir, "homed"), Dst: "/usr/bin/homed", Mode: 0o755},
		{Src: filepath.Join(dir, "unit-pkg"), Dst: "/lib/systemd/system/hologram.service", Mode: 0o644, Only: "deb"},
		{Src: filepath.Join(dir, "unit-tar"), Dst: "/usr/lib/systemd/system/hologram.service", Mode: 0o644, Only: "tar"},
		{Src: filepath.Join(dir, "unit-pkg"), Dst: "/usr/share/lintian/overrides/x", Mode: 0o644, Only: "deb"},
	}
	tgz := filepath.Join(dir, "x.tar.gz")
	if err := writeTarball(tgz, "hologram-server-1.0.0-linux-amd64", entries, mtime); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(tgz)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		if !h.ModTime.Equal(mtime) || h.Uname != "root" || h.Uid != 0 {
			t.Errorf("%s: mtime %v owner %s/%d", h.Name, h.ModTime, h.Uname, h.Uid)
		}
		got = append(got, h.Name+" "+fs.FileMode(h.Mode).String()+" "+strings.TrimSpace(string(body)))
	}
	want := []string{
		"hologram-server-1.0.0-linux-amd64/ -rwxr-xr-x ",
		"hologram-server-1.0.0-linux-amd64/bin/ -rwxr-xr-x ",
		"hologram-server-1.0.0-linux-amd64/lib/ -rwxr-xr-x ",
		"hologram-server-1.0.0-linux-amd64/lib/systemd/ -rwxr-xr-x ",
		"hologram-server-1.0.0-linux-amd64/lib/systemd/system/ -rwxr-xr-x ",
		"hologram-server-1.0.0-linux-amd64/bin/homed -rwxr-xr-x #!/bin/sh",
		"hologram-server-1.0.0-linux-amd64/lib/systemd/system/hologram.service -rw-r--r-- ExecStart=/usr/local/bin/homed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tarball:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	bad := []entry{{Src: filepath.Join(dir, "homed"), Dst: "/etc/hologram/key", Mode: 0o600}}
	if err := writeTarball(filepath.Join(dir, "bad.tar.gz"), "r", bad, mtime); err == nil || !strings.Contains(err.Error(), "/etc/hologram/key") {
		t.Errorf("an /etc entry: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.tar.gz")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed tarball is left behind: %v", err)
	}
}

func TestWriteSums(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a_1_amd64.deb"), "deb")
	writeFile(t, filepath.Join(dir, "a-1-1.x86_64.rpm"), "rpm")
	writeFile(t, filepath.Join(dir, "a-1-linux-amd64.tar.gz"), "tgz")
	writeFile(t, filepath.Join(dir, "notes.txt"), "not a package")
	out, err := writeSums(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(out)
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	want := sum("rpm") + "  a-1-1.x86_64.rpm\n" + sum("tgz") + "  a-1-linux-amd64.tar.gz\n" + sum("deb") + "  a_1_amd64.deb\n"
	if string(data) != want {
		t.Errorf("SHA256SUMS:\n%s\nwant:\n%s", data, want)
	}
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"-nfpm", "n"}, ""},
		{[]string{}, "-nfpm is required"},
		{[]string{"-nfpm", "n", "-variants", "full,desktop"}, `unknown variant "desktop"`},
		{[]string{"-nfpm", "n", "-variants", " , "}, "names no variant"},
		{[]string{"-nfpm", "n", "-version", "1.0-1"}, `version "1.0-1"`},
		{[]string{"-nfpm", "n", "extra"}, "unexpected arguments"},
		{[]string{"-nfpm", "n", "-formats", "deb,apk"}, `unknown format "apk"`},
		{[]string{"-nfpm", "n", "-formats", ","}, "names no format"},
	} {
		o, err := parseFlags(tc.args, io.Discard)
		if tc.wantErr == "" {
			if err != nil || strings.Join(o.Variants, ",") != "full,server,client" || strings.Join(o.Formats, ",") != "deb,rpm,tar" {
				t.Errorf("parseFlags(%q) = %+v, %v", tc.args, o, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("parseFlags(%q) error = %v, want %q", tc.args, err, tc.wantErr)
		}
	}
	if _, err := parseFlags([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

func TestNFPMConfig(t *testing.T) {
	v, _ := variantByName("server")
	p := &pkg{o: options{Root: "../.."}, v: v, version: "1.2.3", time: time.Unix(0, 0), maint: "Ann <ann@example.org>", license: "AGPL-3.0-only AND MIT",
		entries: []entry{
			{Src: "a", Dst: "/usr/bin/homed", Mode: 0o755},
			{Src: "b", Dst: "/usr/share/doc/hologram-server/copyright", Mode: 0o644, Type: "license"},
			{Src: "c", Dst: "/lib/systemd/system/hologram.service", Mode: 0o644, Only: "deb"},
			{Src: "c", Dst: "/usr/lib/systemd/system/hologram.service", Mode: 0o644, Only: "rpm"},
			{Src: "d", Dst: "/usr/lib/systemd/system/hologram.service", Mode: 0o644, Only: "tar"},
		}}
	d := deps{DebDepends: []string{"libc6 (>= 2.34)"}, DebRecommends: []string{"wordnet-base"}, RPMRequires: []string{"libc.so.6()(64bit)"}}
	deb, err := p.nfpmConfigFor("deb", d)
	if err != nil {
		t.Fatal(err)
	}
	rpm, err := p.nfpmConfigFor("rpm", d)
	if err != nil {
		t.Fatal(err)
	}
	dsts := func(c nfpmConfig) string {
		var s []string
		for _, ct := range c.Contents {
			s = append(s, ct.Dst+":"+ct.Type)
		}
		return strings.Join(s, " ")
	}
	if got := dsts(deb); got != "/usr/bin/homed: /usr/share/doc/hologram-server/copyright: /lib/systemd/system/hologram.service:" {
		t.Errorf("deb contents %s", got)
	}
	if got := dsts(rpm); got != "/usr/bin/homed: /usr/share/doc/hologram-server/copyright:license /usr/lib/systemd/system/hologram.service:" {
		t.Errorf("rpm contents %s", got)
	}
	if strings.Join(deb.Replaces, ",") != "hologram-full,hologram-client" || len(rpm.Replaces) != 0 {
		t.Errorf("replaces: deb %q, rpm %q (rpm would turn them into Obsoletes)", deb.Replaces, rpm.Replaces)
	}
	for _, c := range []nfpmConfig{deb, rpm} {
		if strings.Join(c.Conflicts, ",") != "hologram-full,hologram-client" || strings.Join(c.Provides, ",") != "hologram" {
			t.Errorf("conflicts %q provides %q", c.Conflicts, c.Provides)
		}
		if c.VersionSchema != "none" || c.Scripts["postinstall"] == "" || c.License != "AGPL-3.0-only AND MIT" {
			t.Errorf("config %+v", c)
		}
	}
	if deb.Depends[0] != "libc6 (>= 2.34)" || deb.Recommends[0] != "wordnet-base" || rpm.Depends[0] != "libc.so.6()(64bit)" || rpm.Release != "1" || deb.Release != "" {
		t.Errorf("deb depends %q recommends %q release %q; rpm requires %q release %q", deb.Depends, deb.Recommends, deb.Release, rpm.Depends, rpm.Release)
	}
	// nfpm reads YAML; JSON is YAML.
	if _, err := json.Marshal(deb); err != nil {
		t.Fatal(err)
	}
	if _, err := p.nfpmConfigFor("apk", d); err == nil {
		t.Error("an unknown format: no error")
	}
}
