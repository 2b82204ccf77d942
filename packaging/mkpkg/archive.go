package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// tarPath maps an installed path to its place in the .tar.gz, which is laid out for
// extraction into a prefix such as /usr/local (bin/, lib/hologram/, share/, lib/systemd/).
func tarPath(dst string) (string, error) {
	switch {
	case strings.HasPrefix(dst, "/usr/"):
		return strings.TrimPrefix(dst, "/usr/"), nil
	case strings.HasPrefix(dst, "/lib/"):
		return strings.TrimPrefix(dst, "/"), nil
	}
	return "", fmt.Errorf("%s has no place in the .tar.gz (only /usr and /lib)", dst)
}

// writeTarball writes the entries meant for the .tar.gz under the directory root, with their
// parent directories, every time mtime and root as owner, in a stable order.
func writeTarball(file, root string, entries []entry, mtime time.Time) (err error) {
	type item struct {
		name string
		e    entry
	}
	var items []item
	dirs := map[string]bool{root: true}
	for _, e := range entries {
		if e.Only != "" && e.Only != "tar" {
			continue
		}
		rel, err := tarPath(e.Dst)
		if err != nil {
			return err
		}
		name := path.Join(root, rel)
		items = append(items, item{name, e})
		for d := path.Dir(name); d != root && d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].name < items[j].name })
	var dirList []string
	for d := range dirs {
		dirList = append(dirList, d)
	}
	sort.Strings(dirList)

	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(file)
		}
	}()
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	hdr := func(name string, mode int64, size int64, typ byte) *tar.Header {
		return &tar.Header{Name: name, Mode: mode, Size: size, Typeflag: typ, ModTime: mtime, Uname: "root", Gname: "root", Format: tar.FormatPAX}
	}
	for _, d := range dirList {
		if err := tw.WriteHeader(hdr(d+"/", 0o755, 0, tar.TypeDir)); err != nil {
			return err
		}
	}
	for _, it := range items {
		src, err := os.Open(it.e.Src)
		if err != nil {
			return err
		}
		fi, err := src.Stat()
		if err == nil {
			err = tw.WriteHeader(hdr(it.name, int64(it.e.Mode), fi.Size(), tar.TypeReg))
		}
		if err == nil {
			_, err = io.Copy(tw, src)
		}
		src.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// writeSums writes SHA256SUMS (sha256sum -c reads it) for every package file in dir.
func writeSums(dir string) (string, error) {
	var files []string
	for _, pat := range []string{"*.deb", "*.rpm", "*.tar.gz"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return "", err
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	var b strings.Builder
	for _, f := range files {
		sum, err := fileSHA256(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, filepath.Base(f))
	}
	out := filepath.Join(dir, "SHA256SUMS")
	return out, os.WriteFile(out, []byte(b.String()), 0o644)
}

func fileSHA256(f string) (string, error) {
	r, err := os.Open(f)
	if err != nil {
		return "", err
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
