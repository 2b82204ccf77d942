package webui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

// assetsFS holds the page and its assets. icon.png and icon.svg are the desktop app's icon
// (gui/assets), copied by `make webui-icons` and committed so a fresh clone builds without make.
//
//go:embed assets
var assetsFS embed.FS

// asset is one embedded file, with its gzip form (when smaller) and a strong validator.
type asset struct {
	body, gz []byte
	ctype    string
	etag     string
}

// loadAssets reads and compresses every embedded file once.
func loadAssets() (map[string]*asset, error) {
	out := map[string]*asset{}
	err := fs.WalkDir(assetsFS, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := assetsFS.ReadFile(p)
		if err != nil {
			return err
		}
		a := &asset{body: body, ctype: contentType(p)}
		sum := sha256.Sum256(body)
		a.etag = `"` + hex.EncodeToString(sum[:12]) + `"`
		if compressible(a.ctype) {
			var b bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
			_, _ = zw.Write(body)
			if err := zw.Close(); err != nil {
				return err
			}
			if b.Len() < len(body) {
				a.gz = b.Bytes()
			}
		}
		out["/"+strings.TrimPrefix(p, "assets/")] = a
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("webui assets: %w", err)
	}
	if out["/index.html"] == nil {
		return nil, fmt.Errorf("webui assets: index.html is missing")
	}
	return out, nil
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".webmanifest":
		return "application/manifest+json"
	case ".svg":
		return "image/svg+xml"
	}
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || strings.Contains(ctype, "json") || strings.Contains(ctype, "svg")
}

// pageCSP is the page's Content-Security-Policy: its own scripts, styles and API only (media
// from blob: URLs: a reply read aloud is fetched, then played).
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src blob:; connect-src 'self'; " +
	"manifest-src 'self'; worker-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// serveAsset answers GET / and the assets. Every answer is revalidated (no-cache + ETag: an
// unchanged asset costs a 304), served gzip-compressed to clients that take it.
func (u *UI) serveAsset(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if p == "/" {
		p = "/index.html"
	}
	a := u.assets[p]
	if a == nil {
		writeError(w, http.StatusNotFound, "no web UI asset "+clip(r.URL.Path))
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	h.Set("Vary", "Accept-Encoding")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("Referrer-Policy", "same-origin")
	if p == "/sw.js" {
		h.Set("Service-Worker-Allowed", "/")
	}
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatch(match, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if a.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		body = a.gz
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

func etagMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether an Accept-Encoding header takes gzip (and does not refuse it with q=0).
func acceptsGzip(h string) bool {
	for _, part := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// FirstLoad returns the bytes a first visit downloads gzip-compressed: the page, its style
// sheet and its scripts (the icons and the service worker load later).
func (u *UI) FirstLoad() int {
	n := 0
	for p, a := range u.assets {
		if strings.HasSuffix(p, ".html") || strings.HasSuffix(p, ".css") || strings.HasSuffix(p, ".js") && p != "/sw.js" || strings.HasSuffix(p, ".webmanifest") {
			if a.gz != nil {
				n += len(a.gz)
			} else {
				n += len(a.body)
			}
		}
	}
	return n
}
