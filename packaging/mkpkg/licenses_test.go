package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const mitText = `MIT License

Copyright (c) 2021 Ann Example

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`

func TestIdentify(t *testing.T) {
	if got, err := identify("m", []byte(mitText)); err != nil || got != "MIT" {
		t.Errorf("identify(MIT) = %q, %v", got, err)
	}
	_, err := identify("m (LICENSE)", []byte("You may do what you like with this, mostly.\n"))
	if err == nil || !strings.Contains(err.Error(), "namedByHand") || !strings.Contains(err.Error(), "m (LICENSE)") {
		t.Errorf("identify(unknown) error = %v, want one naming the file and namedByHand", err)
	}
}

func TestCopyrightLines(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{mitText, "Copyright (c) 2021 Ann Example"},
		{"Copyright 2009 The Go Authors.\n\nRedistribution and use ...\nTHIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS\n", "Copyright 2009 The Go Authors."},
		{"© 2024 Guten Ye\n(c) You must retain, in the Source form\n", "© 2024 Guten Ye"},
		{"   copyright license to reproduce, prepare Derivative Works of,\nCopyright [yyyy] [name of copyright owner]\n", "the authors of m (the licence text names no holder)"},
		{"COPYRIGHT OWNER OR CONTRIBUTORS BE LIABLE\nCopyright (C) 2018 Fyne.io developers\nCopyright (C) 2018 Fyne.io developers\n", "Copyright (C) 2018 Fyne.io developers"},
	} {
		if got := copyrightLines("m", []byte(tc.text)); got != tc.want {
			t.Errorf("copyrightLines(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestField(t *testing.T) {
	got := field("License", "MIT\n\nline one\n\n  indented\t \nlast\n\n")
	want := "License: MIT\n line one\n .\n   indented\n last\n"
	if got != want {
		t.Errorf("field = %q, want %q", got, want)
	}
}

func TestRenderCopyright(t *testing.T) {
	paras := []licensePara{
		{Files: "*", Copyright: "2026 The HologramAgent authors", License: "AGPL-3.0-only", Texts: []licenseText{{Name: "LICENSE", Text: "GNU AFFERO GENERAL PUBLIC LICENSE\n\nVersion 3"}}},
		{Files: "example.org/m/*", Copyright: "Copyright (c) 2021 Ann Example\nCopyright 2022 Bob", License: "MIT", Texts: []licenseText{{Name: "LICENSE", ID: "MIT", Text: mitText}}, Comment: "Go module example.org/m v1.0.0."},
		{Files: "example.org/a/*", Copyright: "Copyright 2020 Apache Person", License: "Apache-2.0", Texts: []licenseText{{Name: "LICENSE", ID: "Apache-2.0", Text: "Apache License\nVersion 2.0, January 2004"}, {Name: "NOTICE", Text: "Made by A."}}},
	}
	out := renderCopyright("Ann <ann@example.org>", paras, false)
	deb := renderCopyright("Ann <ann@example.org>", paras, true)
	if !strings.Contains(out, "\nLicense: Apache-2.0\n [LICENSE]\n Apache License\n Version 2.0, January 2004\n .\n [NOTICE]\n Made by A.\n") {
		t.Errorf("full copyright: the Apache text and the notice, each named:\n%s", out)
	}
	if !strings.Contains(deb, "\nLicense: Apache-2.0\n [LICENSE]\n On Debian systems, the full text of the Apache-2.0 licence is in /usr/share/common-licenses/Apache-2.0.\n .\n [NOTICE]\n Made by A.\n") ||
		!strings.Contains(deb, " MIT License\n") {
		t.Errorf("deb copyright: Apache by reference, the notice and MIT in full:\n%s", deb)
	}
	for _, want := range []string{
		"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n",
		"\nFiles: *\nCopyright: 2026 The HologramAgent authors\nLicense: AGPL-3.0-only\n GNU AFFERO GENERAL PUBLIC LICENSE\n .\n Version 3\n",
		"\nFiles: example.org/m/*\nCopyright: Copyright (c) 2021 Ann Example\n Copyright 2022 Bob\nLicense: MIT\n MIT License\n .\n Copyright (c) 2021 Ann Example\n",
		"Comment: Go module example.org/m v1.0.0.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("copyright lacks %q:\n%s", want, out)
		}
	}
	// Paragraphs are separated by one empty line and no other line is empty.
	if strings.Count(out, "\n\n") != 3 {
		t.Errorf("want 3 paragraph breaks, got %d:\n%s", strings.Count(out, "\n\n"), out)
	}
}

func writeFile(t *testing.T, f, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLicenseFiles(t *testing.T) {
	mod := t.TempDir()
	for _, f := range []string{"LICENSE", "PATENTS", "sub/NOTICE.txt", "sub/pkg/c/LICENSE.md", "sub/pkg/testdata/LICENSE",
		"sub/pkg/fonts/OFL.txt", "sub/pkg/fonts/LICENSE_Font.txt", "sub/pkg/license.go", "other/LICENSE"} {
		writeFile(t, filepath.Join(mod, f), "text")
	}
	pkgDir := filepath.Join(mod, "sub", "pkg")
	for _, tc := range []struct {
		name string
		lp   listedPkg
		want []string
	}{
		{"plain", listedPkg{Dir: pkgDir, ModDir: mod}, []string{"LICENSE", "PATENTS", "sub/NOTICE.txt"}},
		{"cgo", listedPkg{Dir: pkgDir, ModDir: mod, Cgo: true}, []string{"LICENSE", "PATENTS", "sub/NOTICE.txt", "sub/pkg/c/LICENSE.md", "sub/pkg/fonts/LICENSE_Font.txt"}},
		{"embeds", listedPkg{Dir: pkgDir, ModDir: mod, Embeds: []string{"fonts/a.ttf"}}, []string{"LICENSE", "PATENTS", "sub/NOTICE.txt", "sub/pkg/fonts/LICENSE_Font.txt"}},
		{"module root", listedPkg{Dir: mod, ModDir: mod}, []string{"LICENSE", "PATENTS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := licenseFiles(tc.lp)
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("licenseFiles = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := licenseFiles(listedPkg{Dir: t.TempDir(), ModDir: mod}); err == nil {
		t.Error("a package outside its module: no error")
	}
}

func TestDirParagraph(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "LICENSE"), mitText)
	writeFile(t, filepath.Join(dir, "PATENTS"), "Additional IP Rights Grant (Patents)\n")
	p, err := dirParagraph([]string{filepath.Join(dir, "PATENTS"), filepath.Join(dir, "LICENSE")}, "example.org/m/*", "c", "example.org/m")
	if err != nil {
		t.Fatal(err)
	}
	if p.License != "MIT" || p.Copyright != "Copyright (c) 2021 Ann Example" {
		t.Errorf("license %q, copyright %q", p.License, p.Copyright)
	}
	if txt := p.text(false); !strings.HasPrefix(txt, "[LICENSE]\nMIT License") || !strings.Contains(txt, "\n\n[PATENTS]\nAdditional IP Rights Grant") {
		t.Errorf("text: licence first, then the notice, each named:\n%s", txt)
	}
	if _, err := dirParagraph([]string{filepath.Join(dir, "PATENTS")}, "x/*", "c", "x"); err == nil || !strings.Contains(err.Error(), "notices but no licence") {
		t.Errorf("notice alone: %v", err)
	}
}
