package main

import (
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
