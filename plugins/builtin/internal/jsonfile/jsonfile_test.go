package jsonfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// doc is a state document as plugins write it.
type doc struct {
	Version int      `json:"version"`
	Items   []string `json:"items"`
}

var spec = Spec{Plugin: "notes", What: "the notes", Version: 2}

// TestSaveLoad: a missing file is not found; what Save writes, Load reads back; the file is
// 0600 in a 0700 directory created on Open, and no temporary file is left beside it.
func TestSaveLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	f, err := Open(dir, "notes.json", spec)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("dir %v %v", fi, err)
	}
	var d doc
	if found, err := f.Load(&d); found || err != nil {
		t.Fatalf("Load of a missing file = %v, %v", found, err)
	}
	if err := f.Save(doc{Version: 2, Items: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(doc{Version: 2, Items: []string{"c"}}); err != nil {
		t.Fatal(err)
	}
	if found, err := f.Load(&d); !found || err != nil || len(d.Items) != 1 || d.Items[0] != "c" {
		t.Fatalf("Load = %v, %v, %+v", found, err, d)
	}
	if fi, err := os.Stat(f.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file %v %v", fi, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != "notes.json" {
		t.Fatalf("the directory holds %v (%v); want notes.json alone", entries, err)
	}
	raw, _ := os.ReadFile(f.Path())
	if !strings.HasPrefix(string(raw), "{\n  \"version\": 2,") || !strings.HasSuffix(string(raw), "}\n") {
		t.Fatalf("document %q: want it indented, ending in a newline", raw)
	}
}

// TestLoadErrors: a broken document, another version, and an unreadable file are errors that
// say which file and what.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, content string
		want          string // with %s for the file's path
	}{
		{"not JSON", "{", "reading %s: unexpected end of JSON input"},
		{"wrong type", `{"version":2,"items":3}`, "reading %s: json: cannot unmarshal number"},
		{"another version", `{"version":3,"items":[]}`, "%s has version 3; this notes plugin reads version 2"},
		{"no version", `{"items":[]}`, "%s has version 0; this notes plugin reads version 2"},
		{"a directory", "", "reading the notes: read %s: is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Open(t.TempDir(), "notes.json", spec)
			if err != nil {
				t.Fatal(err)
			}
			if tt.content == "" {
				err = os.Mkdir(f.Path(), 0o700)
			} else {
				err = os.WriteFile(f.Path(), []byte(tt.content), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			var d doc
			found, err := f.Load(&d)
			want := strings.ReplaceAll(tt.want, "%s", f.Path())
			if found || err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Load = %v, %v; want an error containing %q", found, err, want)
			}
		})
	}
}

// TestOpenAndSaveErrors: a directory that cannot be made, and a value JSON cannot encode.
func TestOpenAndSaveErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(file, "sub"), "notes.json", spec); err == nil || !strings.HasPrefix(err.Error(), "notes dir: ") {
		t.Fatalf("Open under a file = %v", err)
	}
	f, err := Open(t.TempDir(), "notes.json", spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Save(map[string]any{"version": 2, "bad": make(chan int)}); err == nil || !strings.HasPrefix(err.Error(), "encoding the notes: ") {
		t.Fatalf("Save of a channel = %v", err)
	}
	if _, err := os.Stat(f.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed save left a file: %v", err)
	}
}

// TestPutDelete: a failed save leaves the map as it was, for a new key, a replaced one and a
// removed one; a good save keeps the change.
func TestPutDelete(t *testing.T) {
	failed := errors.New("disk full")
	fail := func() error { return failed }
	ok := func() error { return nil }
	m := map[string]int{"a": 1}
	if err := Put(m, "b", 2, fail); err != failed || len(m) != 1 {
		t.Fatalf("failed Put of a new key: %v %v", err, m)
	}
	if err := Put(m, "a", 9, fail); err != failed || m["a"] != 1 {
		t.Fatalf("failed Put of a key: %v %v", err, m)
	}
	if err := Delete(m, "a", fail); err != failed || m["a"] != 1 {
		t.Fatalf("failed Delete: %v %v", err, m)
	}
	if err := Delete(m, "nothing", fail); err != failed || len(m) != 1 {
		t.Fatalf("failed Delete of a missing key: %v %v", err, m)
	}
	if err := Put(m, "b", 2, ok); err != nil || m["b"] != 2 {
		t.Fatalf("Put: %v %v", err, m)
	}
	if err := Delete(m, "a", ok); err != nil || len(m) != 1 {
		t.Fatalf("Delete: %v %v", err, m)
	}
}
