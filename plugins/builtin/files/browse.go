package main

// files_list and files_search: a root's entries and the lines that hold a text.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/hologramagent/hologram/plugins/builtin/internal/toolargs"
	"github.com/hologramagent/hologram/plugins/sdk"
)

// entryLine describes one directory entry: type, size, time and path.
func entryLine(name string, d fs.DirEntry) string {
	fi, err := d.Info()
	if err != nil {
		return fmt.Sprintf("?  %s (%v)", name, err)
	}
	switch {
	case d.IsDir():
		return fmt.Sprintf("d  %10s  %s  %s/", "-", fi.ModTime().UTC().Format("2006-01-02 15:04"), name)
	case fi.Mode().IsRegular():
		return fmt.Sprintf("f  %10d  %s  %s", fi.Size(), fi.ModTime().UTC().Format("2006-01-02 15:04"), name)
	}
	return fmt.Sprintf("-  %10s  %s  %s (%s)", "-", fi.ModTime().UTC().Format("2006-01-02 15:04"), name, kind(fi.Mode()))
}

// list is files_list.
func (f *files) list(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct {
		Path      string `json:"path"`
		Recursive bool   `json:"recursive"`
	}
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	if strings.TrimSpace(a.Path) == "" && len(f.roots) > 1 && !a.Recursive {
		return sdk.Text("roots:\n" + strings.ReplaceAll(f.rootList(), ", ", "\n")), nil
	}
	r, rel, err := f.resolve(a.Path)
	if err != nil {
		return sdk.Result{}, err
	}
	fi, err := r.r.Stat(rel)
	if err != nil {
		return sdk.Result{}, r.fail("list", rel, err)
	}
	if !fi.IsDir() {
		return sdk.Text(entryLine(r.show(rel), fs.FileInfoToDirEntry(fi))), nil
	}
	var lines []string
	truncated := false
	fsys := r.r.FS()
	err = fs.WalkDir(fsys, fsPath(rel), func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			lines = append(lines, fmt.Sprintf("!  %s: %v", p, err))
			return nil
		}
		if p == fsPath(rel) {
			return nil
		}
		if len(lines) >= maxListEntries {
			truncated = true
			return fs.SkipAll
		}
		name, _ := filepath.Rel(rel, filepath.FromSlash(p))
		lines = append(lines, entryLine(name, d))
		if d.IsDir() && !a.Recursive {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return sdk.Result{}, fmt.Errorf("list %s: %w", r.show(rel), err)
	}
	head := r.show(rel) + ":"
	if len(lines) == 0 {
		return sdk.Text(head + " empty"), nil
	}
	out := head + "\n" + strings.Join(lines, "\n")
	if truncated {
		out += fmt.Sprintf("\n[stopped after %d entries: list a subfolder]", maxListEntries)
	}
	return sdk.Text(out), nil
}

// search is files_search.
func (f *files) search(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct {
		Query      string `json:"query"`
		Path       string `json:"path"`
		Content    *bool  `json:"content"`
		MaxResults int    `json:"max_results"`
	}
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	q := strings.ToLower(strings.TrimSpace(a.Query))
	switch {
	case q == "":
		return sdk.Result{}, errors.New("query is required")
	case a.MaxResults < 0 || a.MaxResults > maxMaxResults:
		return sdk.Result{}, fmt.Errorf("max_results must be from 1 to %d, got %d", maxMaxResults, a.MaxResults)
	case a.MaxResults == 0:
		a.MaxResults = defaultMaxResults
	}
	content := a.Content == nil || *a.Content
	type scope struct {
		r   *root
		rel string
	}
	var scopes []scope
	if strings.TrimSpace(a.Path) == "" {
		for _, r := range f.roots {
			scopes = append(scopes, scope{r, "."})
		}
	} else {
		r, rel, err := f.resolve(a.Path)
		if err != nil {
			return sdk.Result{}, err
		}
		if fi, err := r.r.Stat(rel); err != nil {
			return sdk.Result{}, r.fail("search", rel, err)
		} else if !fi.IsDir() {
			return sdk.Result{}, fmt.Errorf("%s is not a directory: search a folder", r.show(rel))
		}
		scopes = append(scopes, scope{r, rel})
	}
	var hits []string
	scanned, full := 0, false
	for _, sc := range scopes {
		fsys := sc.r.r.FS()
		err := fs.WalkDir(fsys, fsPath(sc.rel), func(p string, d fs.DirEntry, err error) error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil || p == "." {
				return nil
			}
			if len(hits) >= a.MaxResults || scanned >= maxScannedFiles {
				full = true
				return fs.SkipAll
			}
			show := filepath.Join(sc.r.path, filepath.FromSlash(p))
			if strings.Contains(strings.ToLower(d.Name()), q) {
				hits = append(hits, show+" (name)")
			}
			if !content || !d.Type().IsRegular() {
				return nil
			}
			scanned++
			for _, h := range grepFile(fsys, p, q, a.MaxResults-len(hits)) {
				hits = append(hits, show+":"+h)
			}
			return nil
		})
		if err != nil {
			return sdk.Result{}, fmt.Errorf("search %s: %w", sc.r.show(sc.rel), err)
		}
		if full {
			break
		}
	}
	if len(hits) == 0 {
		return sdk.Text(fmt.Sprintf("no file name or line contains %q", a.Query)), nil
	}
	out := strings.Join(hits, "\n")
	if full {
		out += fmt.Sprintf("\n[stopped at %d results or %d files: narrow the query or the path]", a.MaxResults, maxScannedFiles)
	}
	return sdk.Text(out), nil
}

// grepFile returns up to n "line: text" matches of q (lower case) in the text file p; binary
// and large files give none.
func grepFile(fsys fs.FS, p, q string, n int) []string {
	if n <= 0 {
		return nil
	}
	fh, err := fsys.Open(p)
	if err != nil {
		return nil
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > searchFileMax {
		return nil
	}
	br := bufio.NewReaderSize(fh, 64<<10)
	if head, _ := br.Peek(binarySniff); bytes.IndexByte(head, 0) >= 0 {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), searchFileMax)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.Contains(strings.ToLower(text), q) {
			out = append(out, fmt.Sprintf("%d: %s", line, oneLine(text, 200)))
			if len(out) >= n {
				break
			}
		}
	}
	return out
}

// oneLine trims s to at most n runes on one line.
func oneLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
