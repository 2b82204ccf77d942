package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
)

// manPage generates the man page of the binary src with help2man, from its --help and
// --version output (so the flag definitions are the source), and returns the gzipped file.
// The binary runs with HOME=~ and an XDG_RUNTIME_DIR of /run/user/$UID so that the defaults it
// prints are the ones a user sees, not the build machine's paths.
func (p *pkg) manPage(ctx context.Context, src string, b program) (string, error) {
	out := filepath.Join(p.gen, "man", b.Name+".1")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	bin, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	env := []string{
		"HOME=~", "XDG_RUNTIME_DIR=/run/user/$UID", "XDG_CONFIG_HOME=", "XDG_DATA_HOME=", "XDG_CACHE_HOME=",
		"HOLOGRAM_SOCKET=", "HOLOGRAM_DATA=", "HOLOGRAM_CONFIG=",
		// A locale Fyne can parse (it logs an error for "C"), and help2man's date.
		"LANG=en_US.UTF-8", "LC_ALL=", "SOURCE_DATE_EPOCH=" + strconv.FormatInt(p.time.Unix(), 10),
	}
	// --no-discard-stderr: hologram prints its usage on stderr (Go's flag package).
	if _, err := runCmd(ctx, "", env, "help2man", "--no-info", "--no-discard-stderr", "--section=1",
		"--name="+b.ManDesc, "--source=HologramAgent "+p.version, "--manual=HologramAgent", "--output="+out, bin); err != nil {
		return "", fmt.Errorf("man page of %s: %w", b.Name, err)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		return "", err
	}
	if !bytes.Contains(page, []byte(".SH DESCRIPTION")) {
		return "", fmt.Errorf("man page of %s: help2man found no usage in %s --help", b.Name, src)
	}
	gz, err := gzipBytes(page)
	if err != nil {
		return "", err
	}
	return p.genFile(filepath.Join("man", b.Name+".1.gz"), gz)
}

// gzipBytes compresses data at the best level with no name or time in the header, so the
// output depends on data alone.
func gzipBytes(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// metainfo is the data of packaging/desktop/metainfo.xml.tmpl.
type metainfo struct {
	Package, Type, ID, NameSuffix, Summary, Version, Date string
	Description, Binaries                                 []string
	Desktop                                               bool
}

// addMetainfo renders the package's AppStream metainfo: a desktop application for full and
// client, a console application for server.
func (p *pkg) addMetainfo(context.Context) error {
	tmpl, err := template.New("metainfo.xml.tmpl").Funcs(template.FuncMap{"xml": xmlText}).
		ParseFiles(filepath.Join(p.o.Root, "packaging", "desktop", "metainfo.xml.tmpl"))
	if err != nil {
		return err
	}
	m := metainfo{Package: p.v.Package, Type: "desktop-application", ID: appID, Desktop: p.v.Desktop,
		Summary: "Your own AI agent with long-term memory and plugins", Description: p.v.Description,
		Version: p.version, Date: p.time.UTC().Format("2006-01-02")}
	if !p.v.Desktop {
		m.Type, m.ID, m.NameSuffix = "console-application", appID+".server", " server"
		m.Summary = "Your own AI agent with long-term memory and plugins, as a service"
	}
	for _, b := range p.v.Bins {
		m.Binaries = append(m.Binaries, b.Name)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, m); err != nil {
		return fmt.Errorf("metainfo: %w", err)
	}
	f, err := p.genFile(filepath.Join("metainfo", m.ID+".metainfo.xml"), buf.Bytes())
	if err != nil {
		return err
	}
	p.add(entry{Src: f, Dst: "/usr/share/metainfo/" + m.ID + ".metainfo.xml", Mode: 0o644})
	return nil
}

// xmlText escapes s for XML character data and attribute values.
func xmlText(s string) (string, error) {
	var b strings.Builder
	err := xml.EscapeText(&b, []byte(s))
	return b.String(), err
}

// descriptionText is the package description: the summary, then the paragraphs wrapped at 79
// columns, separated by "." lines (Debian's control format; nfpm indents them).
func (v variant) descriptionText() string {
	var paras []string
	for _, p := range v.Description {
		paras = append(paras, strings.Join(wrap(p, 79), "\n"))
	}
	return v.Summary + "\n" + strings.Join(paras, "\n.\n")
}

// wrap breaks text into lines of at most width columns at spaces (a longer word stays whole).
func wrap(text string, width int) []string {
	var lines []string
	var cur []rune
	for _, w := range strings.Fields(text) {
		rw := []rune(w)
		if len(cur) > 0 && len(cur)+1+len(rw) > width {
			lines = append(lines, string(cur))
			cur = cur[:0]
		}
		if len(cur) > 0 {
			cur = append(cur, ' ')
		}
		cur = append(cur, rw...)
	}
	if len(cur) > 0 {
		lines = append(lines, string(cur))
	}
	return lines
}
