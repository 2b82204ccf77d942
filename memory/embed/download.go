package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Install downloads a catalogue model from the hubs (in order, per file), resuming any
// interrupted download (HTTP Range into a .part file), reports progress (nil: none), verifies
// every file's SHA-256 (pinned, or recorded at the first download) and opens the model with
// ONNX Runtime before it counts as installed. A checksum mismatch deletes the bad file; a
// model that does not open is not installed (its files are deleted). An installed model is
// returned as is.
func (m *Manager) Install(ctx context.Context, id string, progress func(Progress)) (ModelInfo, error) {
	spec, err := m.spec(id)
	if err != nil {
		return ModelInfo{}, err
	}
	if m.rt == nil {
		return ModelInfo{}, fmt.Errorf("embed: install %s: the model manager has no ONNX Runtime to validate it", id)
	}
	defer m.lock(id)()
	if _, err := m.readManifest(id); err == nil {
		return m.Info(id)
	}
	stage := m.stagingDir(id)
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return ModelInfo{}, fmt.Errorf("embed: install %s: %w", id, err)
	}
	var (
		files   []InstalledFile
		sources []string
	)
	for _, f := range spec.Files {
		inst, from, err := m.fetchFile(ctx, spec, f, stage, progress)
		if err != nil && f.Optional && ctx.Err() == nil {
			// Configuration kept for reference only: the model works without it.
			m.log.Warn("optional model file skipped", "model", id, "file", f.Path, "err", err)
			continue
		}
		if err != nil {
			return ModelInfo{}, fmt.Errorf("embed: install %s: %w", id, err)
		}
		if from != "" && !slices.Contains(sources, from) {
			sources = append(sources, from)
		}
		files = append(files, inst)
	}
	hub := strings.Join(sources, ", ")
	if hub == "" {
		hub = "an earlier download"
	}
	if err := m.activate(spec, stage, files, hub); err != nil {
		// A model that does not open is corrupt: drop its files so a later install fetches
		// them again.
		os.RemoveAll(stage)
		return ModelInfo{}, fmt.Errorf("embed: install %s: %w", id, err)
	}
	for _, f := range files {
		if f.Check == "recorded" {
			if err := m.record(spec, f); err != nil {
				return ModelInfo{}, fmt.Errorf("embed: install %s: %w", id, err)
			}
		}
	}
	m.log.Info("model installed", "model", id, "source", hub)
	return m.Info(id)
}

// fileURL is where a hub serves a repository file.
func fileURL(hub string, s ModelSpec, file string) string {
	segs := strings.Split(file, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return hub + "/" + s.Repo + "/resolve/" + url.PathEscape(s.Revision) + "/" + strings.Join(segs, "/")
}

// fetchFile downloads one file into the staging directory (verified, under its final name)
// and returns its record and the hub that served it ("" when an earlier attempt had).
func (m *Manager) fetchFile(ctx context.Context, s ModelSpec, f ModelFile, stage string, progress func(Progress)) (InstalledFile, string, error) {
	final := filepath.Join(stage, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return InstalledFile{}, "", err
	}
	if _, err := os.Stat(final); err == nil {
		// Verified by an earlier, interrupted install.
		inst, err := m.verify(s, f, final)
		if err == nil {
			report(progress, Progress{Model: s.ID, File: f.Path, Done: inst.Size, Total: inst.Size})
			return inst, "", nil
		}
		os.Remove(final)
	}
	part := final + ".part"
	var errs []error
	for round := range m.attempts {
		if round > 0 {
			if err := m.sleep(ctx, time.Duration(round)*2*time.Second); err != nil {
				return InstalledFile{}, "", fmt.Errorf("download %s: %w", f.Path, err)
			}
		}
		errs = errs[:0]
		for _, hub := range m.hubs {
			err := m.fetchFrom(ctx, hub, s, f, part, progress)
			if err == nil {
				inst, verr := m.verify(s, f, part)
				if verr != nil {
					os.Remove(part)
					return InstalledFile{}, "", verr
				}
				if err := os.Rename(part, final); err != nil {
					return InstalledFile{}, "", err
				}
				return inst, hub, nil
			}
			if ctx.Err() != nil {
				return InstalledFile{}, "", fmt.Errorf("download %s: %w (the part downloaded is kept; install again to resume)", f.Path, ctx.Err())
			}
			m.log.Warn("model download failed", "model", s.ID, "file", f.Path, "hub", hub, "err", err)
			errs = append(errs, fmt.Errorf("%s: %w", hub, err))
		}
	}
	return InstalledFile{}, "", fmt.Errorf("download %s failed from every hub (%d rounds; the part downloaded is kept, install again to resume): %w",
		f.Path, m.attempts, errors.Join(errs...))
}

func report(progress func(Progress), p Progress) {
	if progress != nil {
		progress(p)
	}
}

// fetchFrom downloads the rest of one file from one hub into part.
func (m *Manager) fetchFrom(ctx context.Context, hub string, s ModelSpec, f ModelFile, part string, progress func(Progress)) error {
	out, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	have, err := out.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	u := fileURL(hub, s, f.Path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "HologramAgent model manager")
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var total int64
	switch resp.StatusCode {
	case http.StatusOK:
		// A full body (the hub ignored the range): start over.
		if err := out.Truncate(0); err != nil {
			return err
		}
		if _, err := out.Seek(0, io.SeekStart); err != nil {
			return err
		}
		have, total = 0, resp.ContentLength
	case http.StatusPartialContent:
		start, size, err := parseContentRange(resp.Header.Get("Content-Range"))
		if err != nil {
			return fmt.Errorf("GET %s: %w", u, err)
		}
		if start != have {
			return fmt.Errorf("GET %s: asked for bytes from %d, got from %d", u, have, start)
		}
		total = size
	case http.StatusRequestedRangeNotSatisfiable:
		if have > 0 {
			return nil // the part already holds the whole file; verification decides
		}
		fallthrough
	default:
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if total < 0 {
		total = 0
	}
	if f.Size > 0 && total > 0 && total != f.Size {
		return fmt.Errorf("GET %s: the hub serves %d bytes, the catalogue says %d", u, total, f.Size)
	}
	p := Progress{Model: s.ID, File: f.Path, Hub: hub, Done: have, Total: total}
	report(progress, p)
	buf := make([]byte, 256<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if _, err := out.Write(buf[:n]); err != nil {
				return err
			}
			p.Done += int64(n)
			report(progress, p)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("GET %s: after %d of %d bytes: %w", u, p.Done, total, rerr)
		}
	}
	if total > 0 && p.Done != total {
		return fmt.Errorf("GET %s: got %d of %d bytes", u, p.Done, total)
	}
	return out.Close()
}

// parseContentRange reads "bytes START-END/SIZE" (SIZE may be "*": 0).
func parseContentRange(v string) (start, size int64, err error) {
	rest, ok := strings.CutPrefix(v, "bytes ")
	span, sizeStr, ok2 := strings.Cut(rest, "/")
	from, _, ok3 := strings.Cut(span, "-")
	if !ok || !ok2 || !ok3 {
		return 0, 0, fmt.Errorf("bad Content-Range %q", v)
	}
	if start, err = strconv.ParseInt(from, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("bad Content-Range %q", v)
	}
	if sizeStr != "*" {
		if size, err = strconv.ParseInt(sizeStr, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("bad Content-Range %q", v)
		}
	}
	return start, size, nil
}

// verify checks a downloaded file against its pinned hash, or the hash recorded at its first
// download.
func (m *Manager) verify(s ModelSpec, f ModelFile, file string) (InstalledFile, error) {
	sum, size, err := fileHash(file)
	if err != nil {
		return InstalledFile{}, err
	}
	inst := InstalledFile{Path: f.Path, Size: size, SHA256: sum}
	switch {
	case f.SHA256 != "":
		if sum != f.SHA256 {
			return inst, fmt.Errorf("checksum mismatch for %s: sha256 %s, the published hash is %s (the file is deleted and not installed)", f.Path, sum, f.SHA256)
		}
		inst.Check = "pinned"
	default:
		rec, err := m.recorded(s, f)
		if err != nil {
			return inst, err
		}
		switch {
		case rec == "":
			inst.Check = "recorded"
		case rec == sum:
			inst.Check = "matches record"
		default:
			return inst, fmt.Errorf("checksum mismatch for %s: sha256 %s, but %s was recorded at its first download (the file is deleted and not installed; if the publisher changed the file, delete its entry from %s)",
				f.Path, sum, rec, m.recordPath())
		}
	}
	if f.Size > 0 && size != f.Size {
		return inst, fmt.Errorf("size mismatch for %s: %d bytes, want %d (the file is deleted and not installed)", f.Path, size, f.Size)
	}
	return inst, nil
}

func (m *Manager) recordPath() string { return filepath.Join(m.dir, "recorded-sha256.json") }

func recordKey(s ModelSpec, f ModelFile) string { return s.Repo + "@" + s.Revision + "/" + f.Path }

func (m *Manager) readRecords() (map[string]string, error) {
	recs := map[string]string{}
	data, err := os.ReadFile(m.recordPath())
	if errors.Is(err, fs.ErrNotExist) {
		return recs, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &recs); err != nil {
		return nil, fmt.Errorf("corrupt %s: %w", m.recordPath(), err)
	}
	return recs, nil
}

func (m *Manager) recorded(s ModelSpec, f ModelFile) (string, error) {
	m.recordMu.Lock()
	defer m.recordMu.Unlock()
	recs, err := m.readRecords()
	if err != nil {
		return "", err
	}
	return recs[recordKey(s, f)], nil
}

func (m *Manager) record(s ModelSpec, f InstalledFile) error {
	m.recordMu.Lock()
	defer m.recordMu.Unlock()
	recs, err := m.readRecords()
	if err != nil {
		return err
	}
	recs[recordKey(s, ModelFile{Path: f.Path})] = f.SHA256
	data, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(m.recordPath(), append(data, '\n'))
}

// activate opens the staged model (tokenizer and ONNX validation) and moves it into place with
// its manifest.
func (m *Manager) activate(s ModelSpec, stage string, files []InstalledFile, source string) error {
	e, err := m.open(s, stage, hashes(files))
	if err != nil {
		return err
	}
	if err := e.close(); err != nil {
		return err
	}
	mf := manifest{ID: s.ID, Repo: s.Repo, Revision: s.Revision, Source: source, InstalledAt: m.now().UTC(), Files: files}
	data, err := json.MarshalIndent(mf, "", "  ")
	if err != nil {
		return err
	}
	dir := m.modelDir(s.ID)
	tmp := dir + ".new"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(stage, filepath.Join(tmp, "files")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "manifest.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

func hashes(files []InstalledFile) map[string]string {
	h := make(map[string]string, len(files))
	for _, f := range files {
		h[f.Path] = f.SHA256
	}
	return h
}
