// Package jsonfile keeps a built-in plugin's state in one versioned JSON document on disk (the
// calendar's calendar.json, the feeds' feeds.json): read once when the plugin starts, and
// rewritten whole and atomically after every change (a synced temporary file in the same
// directory, renamed over the old one), so a crash leaves the old document or the new one,
// never a torn one.
//
// The package imports only the standard library: it is linked into the plugins' binaries.
package jsonfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Spec describes a plugin's state file.
type Spec struct {
	// Plugin names the plugin in messages ("calendar").
	Plugin string
	// What names the document in messages ("the calendar").
	What string
	// Version is the version of the document the plugin writes and reads: the document is a JSON
	// object whose "version" member holds it.
	Version int
}

// File is one state file. Its methods do not lock: the plugin serialises its loads and saves
// (it holds its store's mutex).
type File struct {
	path string
	spec Spec
}

// Open creates dir (0700) when it is missing and returns the state file dir/name.
func Open(dir, name string, spec Spec) (*File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%s dir: %w", spec.Plugin, err)
	}
	return &File{path: filepath.Join(dir, name), spec: spec}, nil
}

// Path returns the file's path.
func (f *File) Path() string { return f.path }

// Load decodes the document into v and checks its version. found is false (and v untouched)
// when the file does not exist yet.
func (f *File) Load(v any) (found bool, err error) {
	raw, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", f.spec.What, err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("reading %s: %w", f.path, err)
	}
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return false, fmt.Errorf("reading %s: %w", f.path, err)
	}
	if head.Version != f.spec.Version {
		return false, fmt.Errorf("%s has version %d; this %s plugin reads version %d", f.path, head.Version, f.spec.Plugin, f.spec.Version)
	}
	return true, nil
}

// Save writes v, indented, as the whole document: to a temporary file beside the file, synced,
// then renamed over it. v carries the version (see [Spec.Version]).
func (f *File) Save(v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", f.spec.What, err)
	}
	base := filepath.Base(f.path)
	ext := filepath.Ext(base)
	tmp, err := os.CreateTemp(filepath.Dir(f.path), "."+strings.TrimSuffix(base, ext)+"-*"+ext)
	if err != nil {
		return fmt.Errorf("saving %s: %w", f.spec.What, err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("saving %s: %w", f.spec.What, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("saving %s: %w", f.spec.What, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving %s: %w", f.spec.What, err)
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return fmt.Errorf("saving %s: %w", f.spec.What, err)
	}
	return nil
}

// Put sets m[k] to v, the in-memory side of a state file, and calls save to write the file;
// when save fails, m is left as it was and save's error is returned. The caller holds the lock
// that guards m.
func Put[K comparable, V any](m map[K]V, k K, v V, save func() error) error {
	old, had := m[k]
	m[k] = v
	if err := save(); err != nil {
		if had {
			m[k] = old
		} else {
			delete(m, k)
		}
		return err
	}
	return nil
}

// Delete is [Put] for removing m[k]: when save fails, m[k] is back.
func Delete[K comparable, V any](m map[K]V, k K, save func() error) error {
	old, had := m[k]
	delete(m, k)
	if err := save(); err != nil {
		if had {
			m[k] = old
		}
		return err
	}
	return nil
}
