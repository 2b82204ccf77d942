package client

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strings"
)

// Chat history imports and cooling everything at once: the client side.

// GCProgress is how far a [MemoryAdmin.CoolAll] is: Phase "cooling" (Done of Total sessions)
// then "distilling" (Done events so far; Total is 0, unknown).
type GCProgress struct {
	Phase string `json:"phase"`
	Done  int    `json:"done"`
	Total int    `json:"total"`
}

// The events of POST /api/v1/memory/cool-all (Server-Sent Events).
const (
	GCEventProgress = "progress" // data: a GCProgress
	GCEventDone     = "done"     // data: the GCReport
	GCEventError    = "error"    // data: an Error
)

// GC phases.
const (
	GCPhaseCooling    = "cooling"
	GCPhaseDistilling = "distilling"
)

// CoolAll cools every session and distils every cold event now (POST /api/v1/memory/cool-all,
// answered as Server-Sent Events). It has no timeout of its own: cancel ctx instead.
func (c *HTTP) CoolAll(ctx context.Context, progress func(GCProgress)) (GCReport, error) {
	req, err := c.newRequest(ctx, http.MethodPost, "/api/v1/memory/cool-all", nil)
	if err != nil {
		return GCReport{}, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.send(req)
	if err != nil {
		return GCReport{}, fmt.Errorf("cool all: %w", err)
	}
	defer resp.Body.Close()
	var (
		out  GCReport
		done bool
		fail error
	)
	err = readSSE(resp.Body, func(name string, data []byte) error {
		switch name {
		case GCEventProgress:
			var p GCProgress
			if err := json.Unmarshal(data, &p); err != nil {
				return fmt.Errorf("decode %q event: %w", name, err)
			}
			if progress != nil {
				progress(p)
			}
		case GCEventDone:
			if err := json.Unmarshal(data, &out); err != nil {
				return fmt.Errorf("decode %q event: %w", name, err)
			}
			done = true
		case GCEventError:
			var e Error
			if err := json.Unmarshal(data, &e); err != nil {
				return fmt.Errorf("decode %q event: %w", name, err)
			}
			if e.Status == 0 {
				e.Status = http.StatusInternalServerError
			}
			fail = &e
		}
		return nil
	})
	switch {
	case fail != nil:
		return GCReport{}, fmt.Errorf("cool all: %w", fail)
	case done:
		return out, nil
	case ctx.Err() != nil:
		return GCReport{}, fmt.Errorf("cool all: %w", ctx.Err())
	case err != nil:
		return GCReport{}, fmt.Errorf("cool all: %w", err)
	}
	return GCReport{}, fmt.Errorf("cool all: %w", ErrStreamEnded)
}

// ImportFile is a file opened for [MemoryAdmin.ImportMemory]: the bytes to send and how many
// there are (-1: unknown), for a progress bar.
type ImportFile struct {
	io.Reader
	Size int64
	// Name is what is read: the file, or "FILE.zip: conversations.json".
	Name    string
	closers []io.Closer
}

// Close closes what OpenImportFile opened.
func (f *ImportFile) Close() error {
	var errs []error
	for i := len(f.closers) - 1; i >= 0; i-- {
		errs = append(errs, f.closers[i].Close())
	}
	return errors.Join(errs...)
}

// zipMagic starts every zip file.
var zipMagic = []byte("PK\x03\x04")

// OpenImportFile opens a file to import in format. A ChatGPT data export may be given as the
// .zip the export comes in: its conversations.json is read from it on this side (a zip cannot
// be read as a stream), so only that file travels to the kernel.
func OpenImportFile(name, format string) (*ImportFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("import: %w", err)
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("import: %s is a directory", name)
	}
	head := make([]byte, len(zipMagic))
	n, _ := io.ReadFull(f, head)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("import: %w", err)
	}
	if !bytes.Equal(head[:n], zipMagic) {
		return &ImportFile{Reader: f, Size: st.Size(), Name: name, closers: []io.Closer{f}}, nil
	}
	if format != FormatChatGPT {
		f.Close()
		return nil, fmt.Errorf("import: %s is a zip archive; only a ChatGPT export (--format chatgpt) is read from one, unpack it first: %w", name, ErrInvalid)
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("import: %s: %w", name, err)
	}
	var best *zip.File
	for _, zf := range zr.File {
		if path.Base(zf.Name) != "conversations.json" || zf.FileInfo().IsDir() {
			continue
		}
		if best == nil || strings.Count(zf.Name, "/") < strings.Count(best.Name, "/") {
			best = zf
		}
	}
	if best == nil {
		f.Close()
		return nil, fmt.Errorf("import: %s holds no conversations.json (is it a ChatGPT data export?): %w", name, ErrInvalid)
	}
	rc, err := best.Open()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("import: %s: %s: %w", name, best.Name, err)
	}
	size := int64(-1)
	if best.UncompressedSize64 <= 1<<62 {
		size = int64(best.UncompressedSize64)
	}
	return &ImportFile{Reader: rc, Size: size, Name: name + ": " + best.Name, closers: []io.Closer{f, rc}}, nil
}
