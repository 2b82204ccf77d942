package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/plugins/builtin/internal/toolargs"
	"github.com/hologramagent/hologram/plugins/sdk"
)

// Limits of what a run's files bring back.
const (
	maxImages     = 8
	maxImageBytes = 8 << 20
	maxTextFiles  = 8
	maxTextBytes  = 16 << 10
	maxInputFiles = 64
)

// code is the plugin: the sandbox and the sessions' workspaces.
type code struct {
	box   *box
	locks sync.Map // workspace root → *sync.Mutex: one run at a time per session
	rec   *recorder
}

// plugin returns the sdk plugin.
func (c *code) plugin() sdk.Plugin {
	return sdk.Plugin{Name: "code", Version: "1.0.0",
		Tools: []sdk.Tool{
			{Name: "code_run", Title: "Run code",
				Description: "Runs code in a sandbox that sees only the system's programs, a workspace kept for this " +
					"conversation and a private /tmp: no network, none of the owner's files. language: python (python3, " +
					"py; numpy and matplotlib where installed), javascript (node, js), bash (sh) or go (a main package). " +
					"files (optional) are written into the workspace first ({\"data.csv\": \"…\"}). Returns the exit " +
					"status, stdout and stderr (1 MiB each at most) and the files the code wrote in its working directory " +
					"(images, e.g. a matplotlib PNG, come back as images). timeout is in seconds: 60 by default, at most 600.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{` +
					`"language":{"type":"string","description":"python, javascript, bash or go"},` +
					`"code":{"type":"string","description":"the program"},` +
					`"files":{"type":"object","additionalProperties":{"type":"string"},"description":"workspace files to write first: relative path to text content"},` +
					`"timeout":{"type":"integer","minimum":1,"maximum":600,"description":"seconds (default 60)"}},` +
					`"required":["language","code"]}`),
				Run: c.run},
			{Name: "code_languages", Title: "List code languages",
				Description: "Lists the languages code_run offers here and how the sandbox confines a run.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{}}`), ReadOnly: true, Run: c.languages},
			{Name: "code_files", Title: "List or read workspace files",
				Description: "Lists the files in this conversation's code workspace, or returns one (path): an image as an image, text as text.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a file in the workspace"}}}`),
				ReadOnly:    true, Run: c.files},
			{Name: "code_reset", Title: "Empty the code workspace",
				Description: "Deletes every file in this conversation's code workspace.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{}}`), Run: c.reset},
		},
		Start: func(ctx context.Context, k *sdk.Kernel) error {
			k.Logger().Info("code started", "sandbox", c.box.mode(), "refusal", c.box.refusal(), "config", c.box.cfg.path)
			return nil
		}}
}

var plainSession = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// workspace returns the workspace of ctx's session ("default" outside a session).
func (c *code) workspace(ctx context.Context) (string, workspace) {
	session, ok := sdk.SessionFrom(ctx)
	if !ok {
		session = "default"
	}
	name := session
	if !plainSession.MatchString(name) || name == "." || name == ".." {
		sum := sha256.Sum256([]byte(session))
		name = "h-" + hex.EncodeToString(sum[:12])
	}
	root := filepath.Join(c.box.cfg.data, "sessions", name)
	return session, workspace{root: root, work: filepath.Join(root, "work"), tmp: filepath.Join(root, "tmp"), cache: c.box.cfg.Cache}
}

// lock holds the session's workspace for one run or reset.
func (c *code) lock(ws workspace) func() {
	m, _ := c.locks.LoadOrStore(ws.root, &sync.Mutex{})
	m.(*sync.Mutex).Lock()
	return m.(*sync.Mutex).Unlock
}

// languages is code_languages.
func (c *code) languages(ctx context.Context, k *sdk.Kernel, _ json.RawMessage) (sdk.Result, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "languages: %s\nsandbox: %s\n", strings.Join(offered(c.box.cfg), "; "), c.box.mode())
	if r := c.box.refusal(); r != "" {
		b.WriteString("code_run is " + r + "\n")
	} else if c.box.bwrap == "" && !c.box.landlock {
		b.WriteString("UNSAFE: no bubblewrap and no Landlock; the owner allowed it (unsafe = true)\n")
	}
	fmt.Fprintf(&b, "limits: %d MiB of memory, timeout 60 s by default (at most %s), 1 MiB of stdout and of stderr", c.box.cfg.MemoryBytes>>20, maxTimeout)
	return sdk.Text(b.String()), nil
}

// run is code_run.
func (c *code) run(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct {
		Language string            `json:"language"`
		Code     string            `json:"code"`
		Files    map[string]string `json:"files"`
		Timeout  int               `json:"timeout"`
	}
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	if r := c.box.refusal(); r != "" {
		return sdk.Result{}, errors.New(r)
	}
	l, err := findLanguage(c.box.cfg, a.Language)
	if err != nil {
		return sdk.Result{}, err
	}
	timeout := defaultTimeout
	switch {
	case a.Timeout < 0 || time.Duration(a.Timeout)*time.Second > maxTimeout:
		return sdk.Result{}, fmt.Errorf("timeout must be from 1 to %d seconds, got %d", int(maxTimeout/time.Second), a.Timeout)
	case a.Timeout > 0:
		timeout = time.Duration(a.Timeout) * time.Second
	case strings.TrimSpace(a.Code) == "":
		return sdk.Result{}, errors.New("code is empty")
	case len(a.Files) > maxInputFiles:
		return sdk.Result{}, fmt.Errorf("at most %d files, got %d", maxInputFiles, len(a.Files))
	}
	session, ws := c.workspace(ctx)
	defer c.lock(ws)()
	if err := os.MkdirAll(ws.work, 0o700); err != nil {
		return sdk.Result{}, err
	}
	if err := writeFiles(ws.work, a.Files); err != nil {
		return sdk.Result{}, err
	}
	before := snapshot(ws.work)
	network := slices.Contains(c.box.cfg.NetworkSessions, session)
	o, err := c.box.run(ctx, ws, l, a.Code, timeout, network)
	if err != nil {
		return sdk.Result{}, err
	}
	if o.setup != "" {
		k.Logger().Error("the sandbox did not start", "language", l.name, "err", o.setup)
		c.rec.record(session, l.name, a.Code, o, nil)
		return sdk.Result{}, fmt.Errorf("the sandbox did not start: %s", o.setup)
	}
	changed := changedFiles(ws.work, before)
	k.Logger().Info("code ran", "session", session, "language", l.name, "status", o.status, "took", o.took.Round(time.Millisecond),
		"stdout_bytes", o.stdout.total, "stderr_bytes", o.stderr.total, "files", len(changed))
	c.rec.record(session, l.name, a.Code, o, changed)
	show := maxOutput
	if !k.SharedMemory() {
		show = pipeShow
	}
	return result(l, o, ws.work, changed, show), nil
}

// pipeShow is what a result shows of each stream when the plugin has no shared memory with
// the kernel: the result must then fit in one pipe frame (1 MiB).
const pipeShow = 384 << 10

// result renders a run: the status, the two streams (show bytes of each at most) and the
// files it wrote.
func result(l language, o *outcome, work string, changed []string, show int) sdk.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s after %s\n", l.name, o.status, o.took.Round(time.Millisecond))
	for _, s := range []struct {
		name string
		c    *capped
	}{{"stdout", &o.stdout}, {"stderr", &o.stderr}} {
		if s.c.total == 0 {
			continue
		}
		kept := s.c.buf[:min(len(s.c.buf), show)]
		fmt.Fprintf(&b, "--- %s ---\n%s", s.name, strings.ToValidUTF8(string(kept), "\uFFFD"))
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		if s.c.total > int64(len(s.c.buf)) {
			fmt.Fprintf(&b, "[%s truncated: %d bytes written, the first %d kept, the rest dropped]\n", s.name, s.c.total, len(s.c.buf))
		}
		if len(kept) < len(s.c.buf) {
			fmt.Fprintf(&b, "[%s: %d of the %d bytes kept shown: without shared memory the result must fit the pipe]\n", s.name, len(kept), len(s.c.buf))
		}
	}
	res := sdk.Result{IsError: o.exit != 0}
	var items []sdk.Content
	if len(changed) > 0 {
		b.WriteString("files written in the workspace:")
		images, texts := 0, 0
		for _, rel := range changed {
			item, size, kind := fileItem(work, rel)
			fmt.Fprintf(&b, " %s (%d bytes)", rel, size)
			switch {
			case kind == "image" && images < maxImages:
				images++
				items = append(items, item)
			case kind == "text" && texts < maxTextFiles:
				texts++
				items = append(items, item)
			}
		}
		b.WriteByte('\n')
	}
	res.Content = append([]sdk.Content{{Type: "text", Text: strings.TrimRight(b.String(), "\n")}}, items...)
	return res
}

// imageTypes are the file endings returned as images.
var imageTypes = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}

// fileItem reads the workspace file rel as a content item: kind "image", "text" (small UTF-8),
// or "" (listed only). It never follows a symbolic link nor reads a file with other names (a
// hard link), whatever the code made of its workspace.
func fileItem(work, rel string) (sdk.Content, int64, string) {
	f, err := os.OpenFile(filepath.Join(work, rel), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return sdk.Content{}, 0, ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return sdk.Content{}, 0, ""
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return sdk.Content{}, fi.Size(), ""
	}
	mime, image := imageTypes[strings.ToLower(filepath.Ext(rel))]
	limit := int64(maxTextBytes)
	if image {
		limit = maxImageBytes
	}
	if fi.Size() > limit {
		return sdk.Content{}, fi.Size(), ""
	}
	data := make([]byte, fi.Size())
	if _, err := f.ReadAt(data, 0); err != nil && fi.Size() > 0 {
		return sdk.Content{}, fi.Size(), ""
	}
	if image {
		return sdk.Content{Type: "image", MIME: mime, Data: data}, fi.Size(), "image"
	}
	if !utf8.Valid(data) {
		return sdk.Content{}, fi.Size(), ""
	}
	return sdk.Content{Type: "text", Text: "--- file " + rel + " ---\n" + string(data)}, fi.Size(), "text"
}

// fileState is what snapshot keeps of a file.
type fileState struct {
	size  int64
	mtime time.Time
}

// snapshot lists the regular files below dir (symbolic links are not followed).
func snapshot(dir string) map[string]fileState {
	m := map[string]fileState{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || len(m) > 10000 {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			rel, _ := filepath.Rel(dir, p)
			m[rel] = fileState{fi.Size(), fi.ModTime()}
		}
		return nil
	})
	return m
}

// changedFiles are the files below dir that are new or changed since before, sorted.
func changedFiles(dir string, before map[string]fileState) []string {
	var out []string
	for rel, st := range snapshot(dir) {
		if old, ok := before[rel]; !ok || old != st {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}

// writeFiles writes the call's files into the workspace.
func writeFiles(work string, files map[string]string) error {
	for name, content := range files {
		rel := filepath.Clean(name)
		if name == "" || filepath.IsAbs(name) || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			return fmt.Errorf("file %q: give a path inside the workspace", name)
		}
		p := filepath.Join(work, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := noLinkBelow(work, filepath.Dir(rel)); err != nil {
			return fmt.Errorf("file %q: %w", name, err)
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return fmt.Errorf("file %q: %w", name, err)
		}
		_, err = f.WriteString(content)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("file %q: %w", name, err)
		}
	}
	return nil
}

// noLinkBelow refuses a directory path inside work that passes through a symbolic link (one
// the code made, pointing out of the workspace).
func noLinkBelow(work, rel string) error {
	p := work
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return errors.New("a directory on its path is a symbolic link")
		}
	}
	return nil
}

// files is code_files.
func (c *code) files(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	_, ws := c.workspace(ctx)
	if a.Path == "" {
		list := snapshot(ws.work)
		if len(list) == 0 {
			return sdk.Text("the workspace is empty"), nil
		}
		names := make([]string, 0, len(list))
		for rel := range list {
			names = append(names, rel)
		}
		sort.Strings(names)
		var b strings.Builder
		fmt.Fprintf(&b, "%d files in the workspace:\n", len(names))
		for _, rel := range names {
			fmt.Fprintf(&b, "  %s (%d bytes, %s)\n", rel, list[rel].size, list[rel].mtime.UTC().Format(time.RFC3339))
		}
		return sdk.Text(strings.TrimRight(b.String(), "\n")), nil
	}
	rel := filepath.Clean(a.Path)
	if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
		return sdk.Result{}, fmt.Errorf("path %q is not inside the workspace", a.Path)
	}
	if err := noLinkBelow(ws.work, filepath.Dir(rel)); err != nil {
		return sdk.Result{}, fmt.Errorf("%s: %w", a.Path, err)
	}
	item, size, kind := fileItem(ws.work, rel)
	switch kind {
	case "image", "text":
		return sdk.Result{Content: []sdk.Content{item}}, nil
	case "":
		if size == 0 {
			return sdk.Result{}, fmt.Errorf("%s: no such file in the workspace", a.Path)
		}
	}
	return sdk.Text(fmt.Sprintf("%s: %d bytes, not shown (binary, too large, or linked elsewhere)", rel, size)), nil
}

// reset is code_reset.
func (c *code) reset(ctx context.Context, k *sdk.Kernel, _ json.RawMessage) (sdk.Result, error) {
	session, ws := c.workspace(ctx)
	defer c.lock(ws)()
	n := len(snapshot(ws.work))
	for _, d := range []string{ws.work, ws.tmp} {
		if err := os.RemoveAll(d); err != nil {
			return sdk.Result{}, err
		}
	}
	k.Logger().Info("code workspace reset", "session", session, "files", n)
	return sdk.Text(fmt.Sprintf("the workspace is empty (%d files deleted)", n)), nil
}
