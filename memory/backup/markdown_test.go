package backup_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
)

// readTar returns the files of a tar stream by name, in order.
func readTar(t *testing.T, b []byte) (names []string, files map[string]string) {
	t.Helper()
	files = map[string]string{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, files
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || h.Mode != 0o644 || !h.ModTime.Equal(created) {
			t.Errorf("%s: type %c mode %o time %v", h.Name, h.Typeflag, h.Mode, h.ModTime)
		}
		if _, dup := files[h.Name]; dup {
			t.Errorf("%s twice in the tar", h.Name)
		}
		names = append(names, h.Name)
		files[h.Name] = string(body)
	}
}

func TestExportMarkdown(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	fill(t, s)
	// Names that make awkward file names.
	for _, name := range []string{"../../etc/passwd", "A/B", "a b", "北京 大学", "..", "Alice!"} {
		if _, err := s.PutEntity(ctx, memory.Entity{Name: name, Kind: "note"}); err != nil {
			t.Fatalf("PutEntity(%q): %v", name, err)
		}
	}
	var buf bytes.Buffer
	if err := backup.ExportMarkdown(ctx, s, &buf, backup.Options{Clock: func() time.Time { return created }}); err != nil {
		t.Fatal(err)
	}
	names, files := readTar(t, buf.Bytes())
	for _, n := range names {
		dir, file := path.Split(n)
		if (dir != "entities/" && dir != "log/") || strings.Contains(file, "..") || !strings.HasSuffix(file, ".md") || path.Clean(n) != n {
			t.Errorf("unsafe or unexpected name %q", n)
		}
	}
	for _, want := range []string{"entities/alice.md", "entities/alice-2.md", "entities/etc-passwd.md", "entities/a-b.md",
		"entities/a-b-2.md", "entities/北京-大学.md", "entities/entity.md", "entities/project-x.md",
		"log/2024-05-06.md", "log/2024-05-07.md", "log/2024-05-08.md"} {
		if _, ok := files[want]; !ok {
			t.Errorf("no %s in %q", want, names)
		}
	}

	alice := files["entities/alice.md"]
	for _, want := range []string{"# Alice\n", "- Kind: person\n", "- Scope: private\n", "- Pinned: yes\n", "Oberkampf",
		"Alice — lives in → London", "superseded by #", "Alice — lives in → Berlin", "current", "source events ",
		"Alice — knows → Bob", "origin owner"} {
		if !strings.Contains(alice, want) {
			t.Errorf("alice.md lacks %q:\n%s", want, alice)
		}
	}
	if p := files["entities/project-x.md"]; !strings.Contains(p, "- Scope: group:g1\n") || !strings.Contains(p, "first line\n\nsecond line") {
		t.Errorf("project-x.md:\n%s", p)
	}

	day := files["log/2024-05-06.md"]
	for _, want := range []string{"# 2024-05-06\n", "## 09:30:00 · Owner chat (owner) · user\n", "I moved to London last year",
		"Called tool `weather` (17 characters of arguments).", "## 09:32:00 · Owner chat (owner) · tool weather\n",
		"Tool result of `weather` (ok, 12 characters).", "Attachment: image photo.png (512 bytes)."} {
		if !strings.Contains(day, want) {
			t.Errorf("log/2024-05-06.md lacks %q:\n%s", want, day)
		}
	}
	if strings.Contains(day, "rainy") {
		t.Errorf("a tool result's content is summarised, not copied:\n%s", day)
	}
	if d := files["log/2024-05-08.md"]; !strings.Contains(d, "QQ group (qq-g1) · user bob") || !strings.Contains(d, "Bob likes hiking") {
		t.Errorf("log/2024-05-08.md:\n%s", d)
	}

	// Days follow the location asked for.
	buf.Reset()
	tz := time.FixedZone("UTC+14", 14*3600)
	if err := backup.ExportMarkdown(ctx, s, &buf, backup.Options{Clock: func() time.Time { return created }, Location: tz}); err != nil {
		t.Fatal(err)
	}
	if _, files := readTar(t, buf.Bytes()); !strings.Contains(files["log/2024-05-06.md"], "## 23:30:00 ·") {
		t.Errorf("log in UTC+14 does not start the first event at 23:30")
	}
}
