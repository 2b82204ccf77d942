package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/hologramagent/hologram/plugins/builtin/internal/toolargs"
	"github.com/hologramagent/hologram/plugins/sdk"
)

// Bounds of listing and searching.
const (
	maxListEntries    = 2000
	defaultMaxResults = 50
	maxMaxResults     = 500
	searchFileMax     = 2 << 20 // files larger than this are matched by name only
	maxScannedFiles   = 20000
	binarySniff       = 8000 // a NUL byte in the first bytes marks a binary file
)

// root is one configured root, opened with os.Root: every access below it is resolved by the
// kernel beneath the root's descriptor, so neither ".." nor a symbolic link can leave it.
type root struct {
	path string // resolved absolute path
	conf string // as configured (for absolute paths given through it)
	r    *os.Root
}

// files is the plugin: its roots and limits.
type files struct {
	roots    []*root
	maxRead  int64
	maxWrite int64
	readOnly bool
	conf     string // the configuration file, for messages
}

// newFiles opens the roots of cfg, refusing / and the home directory.
func newFiles(cfg Config) (*files, error) {
	f := &files{maxRead: cfg.MaxReadBytes, maxWrite: cfg.MaxWriteBytes, readOnly: cfg.ReadOnly, conf: cfg.where()}
	for _, c := range cfg.Roots {
		p, err := checkRoot(c, cfg.home)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", cfg.where(), err)
		}
		r, err := os.OpenRoot(p)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: root %q: %w", cfg.where(), c, err)
		}
		f.roots = append(f.roots, &root{path: p, conf: filepath.Clean(c), r: r})
	}
	return f, nil
}

// Close closes the roots.
func (f *files) Close() {
	for _, r := range f.roots {
		r.r.Close()
	}
}

// rootList names the roots for descriptions and messages.
func (f *files) rootList() string {
	ps := make([]string, len(f.roots))
	for i, r := range f.roots {
		ps[i] = r.path
	}
	return strings.Join(ps, ", ")
}

// plugin returns the sdk plugin.
func (f *files) plugin() sdk.Plugin {
	where := " Paths are relative to " + f.roots[0].path + ", or absolute inside a root. Roots: " + f.rootList() + "."
	tools := []sdk.Tool{
		{Name: "files_read", Title: "Read a file",
			Description: "Reads a text file (or any file as base64) inside the configured roots." + where +
				fmt.Sprintf(" At most %d bytes per read: read larger files in parts with offset and length.", f.maxRead),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},` +
				`"offset":{"type":"integer","minimum":0},"length":{"type":"integer","minimum":1},` +
				`"encoding":{"type":"string","enum":["text","base64"]}},"required":["path"]}`),
			ReadOnly: true, Run: f.read},
		{Name: "files_list", Title: "List a directory",
			Description: "Lists a directory inside the configured roots (type, size, modification time, name)." + where,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"recursive":{"type":"boolean"}}}`),
			ReadOnly:    true, Run: f.list},
		{Name: "files_search", Title: "Search files",
			Description: "Finds files inside the configured roots whose name contains the query, and lines of text files " +
				"containing it (case-insensitive). content=false matches names only." + where,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"path":{"type":"string"},` +
				`"content":{"type":"boolean"},"max_results":{"type":"integer","minimum":1,"maximum":500}},"required":["query"]}`),
			ReadOnly: true, Run: f.search},
	}
	if !f.readOnly {
		tools = append(tools, sdk.Tool{Name: "files_write", Title: "Write a file",
			Description: "Writes a file inside the configured roots, creating missing folders. mode: write (create or " +
				"replace, the default), create (fail if it exists) or append. encoding base64 writes bytes." + where,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},` +
				`"mode":{"type":"string","enum":["write","create","append"]},"encoding":{"type":"string","enum":["text","base64"]}},` +
				`"required":["path","content"]}`),
			Run: f.write})
	}
	return sdk.Plugin{Name: "files", Version: "1.0.0", Tools: tools,
		Start: func(ctx context.Context, k *sdk.Kernel) error {
			k.Logger().Info("files started", "roots", f.rootList(), "max_read", f.maxRead, "read_only", f.readOnly)
			return nil
		}}
}

// within reports whether p is base or below it (both clean and absolute).
func within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// resolve maps a path argument to its root and the path relative to it. A relative path is
// relative to the first root; ".." may not climb out of it.
func (f *files) resolve(p string) (*root, string, error) {
	p = strings.TrimSpace(p)
	if strings.ContainsRune(p, 0) {
		return nil, "", errors.New("the path contains a NUL byte")
	}
	if p == "" {
		return f.roots[0], ".", nil
	}
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		for _, r := range f.roots {
			for _, base := range []string{r.path, r.conf} {
				if within(base, c) {
					rel, _ := filepath.Rel(base, c)
					return r, rel, nil
				}
			}
		}
		return nil, "", fmt.Errorf("path %s is outside the roots (%s); the owner adds roots in %s", c, f.rootList(), f.conf)
	}
	c := filepath.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return nil, "", fmt.Errorf("path %q climbs out of the root %s with \"..\": refused", p, f.roots[0].path)
	}
	return f.roots[0], c, nil
}

// show is the absolute path of rel in r, for messages.
func (r *root) show(rel string) string { return filepath.Join(r.path, rel) }

// fail explains an error of an os.Root operation on rel: a missing file, or a path that a
// symbolic link leads out of the root (os.Root refuses those, and absolute links).
func (r *root) fail(op, rel string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s %s: no such file or directory", op, r.show(rel))
	}
	if resolved, e := filepath.EvalSymlinks(r.show(rel)); e == nil && !within(r.path, resolved) {
		return fmt.Errorf("%s %s: a symbolic link leads out of the root %s (to %s): refused", op, r.show(rel), r.path, resolved)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes") {
		return fmt.Errorf("%s %s: a symbolic link leads out of the root %s, or is absolute: refused", op, r.show(rel), r.path)
	}
	return fmt.Errorf("%s %s: %w", op, r.show(rel), err)
}

// kind names a file's type for refusals.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "a regular file"
}

// notRegular is the refusal of a file that is not a regular one.
func notRegular(where string, m fs.FileMode) error {
	if m.IsDir() {
		return fmt.Errorf("%s is a directory: use files_list", where)
	}
	return fmt.Errorf("%s is %s, not a regular file: device files, pipes and sockets are refused", where, kind(m))
}

// openRegular opens rel for reading, refusing anything but a regular file (checked before the
// open, so a pipe never blocks it, and again on the descriptor).
func (r *root) openRegular(rel string) (*os.File, fs.FileInfo, error) {
	fi, err := r.r.Stat(rel)
	if err != nil {
		return nil, nil, r.fail("read", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, notRegular(r.show(rel), fi.Mode())
	}
	fh, err := r.r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, r.fail("read", rel, err)
	}
	fi, err = fh.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(r.show(rel), fi.Mode())
	}
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	return fh, fi, nil
}

// read is files_read.
func (f *files) read(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct {
		Path     string `json:"path"`
		Offset   int64  `json:"offset"`
		Length   int64  `json:"length"`
		Encoding string `json:"encoding"`
	}
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	switch {
	case strings.TrimSpace(a.Path) == "":
		return sdk.Result{}, errors.New("path is required")
	case a.Offset < 0:
		return sdk.Result{}, fmt.Errorf("offset must be >= 0, got %d", a.Offset)
	case a.Length < 0:
		return sdk.Result{}, fmt.Errorf("length must be >= 1, got %d", a.Length)
	case a.Length > f.maxRead:
		return sdk.Result{}, fmt.Errorf("length %d is more than the %d bytes one read returns", a.Length, f.maxRead)
	case a.Encoding != "" && a.Encoding != "text" && a.Encoding != "base64":
		return sdk.Result{}, fmt.Errorf(`encoding must be "text" or "base64", got %q`, a.Encoding)
	}
	r, rel, err := f.resolve(a.Path)
	if err != nil {
		return sdk.Result{}, err
	}
	fh, fi, err := r.openRegular(rel)
	if err != nil {
		return sdk.Result{}, err
	}
	defer fh.Close()
	size := fi.Size()
	if a.Offset > size {
		return sdk.Result{}, fmt.Errorf("offset %d is past the end of %s (%d bytes)", a.Offset, r.show(rel), size)
	}
	n := a.Length
	if n == 0 {
		n = size - a.Offset
		if n > f.maxRead {
			return sdk.Result{}, fmt.Errorf("%s has %d bytes, more than the %d one read returns: read it in parts with offset and length",
				r.show(rel), size, f.maxRead)
		}
	}
	n = min(n, size-a.Offset)
	buf := make([]byte, n)
	if _, err := io.ReadFull(io.NewSectionReader(fh, a.Offset, n), buf); err != nil {
		return sdk.Result{}, fmt.Errorf("read %s: %w", r.show(rel), err)
	}
	var out string
	if a.Encoding == "base64" {
		out = base64.StdEncoding.EncodeToString(buf)
	} else {
		if !utf8.Valid(buf) {
			return sdk.Result{}, fmt.Errorf("%s is not UTF-8 text (at this range): read it with encoding base64", r.show(rel))
		}
		out = string(buf)
	}
	res := sdk.Text(out)
	if a.Offset > 0 || a.Offset+n < size {
		res.Content = append(res.Content, sdk.Content{Type: "text",
			Text: fmt.Sprintf("[bytes %d to %d of %d in %s]", a.Offset, a.Offset+n, size, r.show(rel))})
	}
	return res, nil
}

// write is files_write.
func (f *files) write(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct {
		Path     string `json:"path"`
		Content  string `json:"content"`
		Mode     string `json:"mode"`
		Encoding string `json:"encoding"`
	}
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	if a.Mode == "" {
		a.Mode = "write"
	}
	switch {
	case strings.TrimSpace(a.Path) == "":
		return sdk.Result{}, errors.New("path is required")
	case a.Mode != "write" && a.Mode != "create" && a.Mode != "append":
		return sdk.Result{}, fmt.Errorf(`mode must be "write", "create" or "append", got %q`, a.Mode)
	case a.Encoding != "" && a.Encoding != "text" && a.Encoding != "base64":
		return sdk.Result{}, fmt.Errorf(`encoding must be "text" or "base64", got %q`, a.Encoding)
	}
	data := []byte(a.Content)
	if a.Encoding == "base64" {
		var err error
		if data, err = base64.StdEncoding.DecodeString(a.Content); err != nil {
			return sdk.Result{}, fmt.Errorf("content is not base64: %w", err)
		}
	}
	if int64(len(data)) > f.maxWrite {
		return sdk.Result{}, fmt.Errorf("content has %d bytes, more than the %d one write takes", len(data), f.maxWrite)
	}
	r, rel, err := f.resolve(a.Path)
	if err != nil {
		return sdk.Result{}, err
	}
	if rel == "." {
		return sdk.Result{}, fmt.Errorf("%s is the root directory, not a file", r.path)
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := r.r.MkdirAll(dir, 0o700); err != nil {
			return sdk.Result{}, r.fail("create folder", dir, err)
		}
	}
	flag := os.O_WRONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
	switch fi, err := r.r.Stat(rel); {
	case err == nil && a.Mode == "create":
		return sdk.Result{}, fmt.Errorf("%s exists (mode create): use mode write to replace it", r.show(rel))
	case err == nil && !fi.Mode().IsRegular():
		return sdk.Result{}, notRegular(r.show(rel), fi.Mode())
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := r.r.Lstat(rel); lerr == nil {
			return sdk.Result{}, fmt.Errorf("%s is a symbolic link to nothing: refused", r.show(rel))
		}
		flag |= os.O_CREATE | os.O_EXCL
	default:
		return sdk.Result{}, r.fail("write", rel, err)
	}
	if a.Mode == "append" {
		flag |= os.O_APPEND
	}
	fh, err := r.r.OpenFile(rel, flag, 0o600)
	if err != nil {
		return sdk.Result{}, r.fail("write", rel, err)
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err != nil || !fi.Mode().IsRegular() {
		if err != nil {
			return sdk.Result{}, fmt.Errorf("write %s: %w", r.show(rel), err)
		}
		return sdk.Result{}, notRegular(r.show(rel), fi.Mode())
	}
	if a.Mode == "write" {
		if err := fh.Truncate(0); err != nil {
			return sdk.Result{}, fmt.Errorf("write %s: %w", r.show(rel), err)
		}
	}
	if _, err := fh.Write(data); err != nil {
		return sdk.Result{}, fmt.Errorf("write %s: %w", r.show(rel), err)
	}
	if err := fh.Close(); err != nil {
		return sdk.Result{}, fmt.Errorf("write %s: %w", r.show(rel), err)
	}
	verb := "wrote"
	if a.Mode == "append" {
		verb = "appended"
	}
	return sdk.Text(fmt.Sprintf("%s %d bytes to %s", verb, len(data), r.show(rel))), nil
}

// fsPath converts a relative OS path for fs.FS ("." for the root).
func fsPath(rel string) string {
	if rel == "" {
		return "."
	}
	return filepath.ToSlash(rel)
}

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
