// Package security holds the kernel's secret handling: the master key file
// and its rotation ([KeySet]), the [Codec] that seals values at rest with
// AES-256-GCM per domain, API bearer tokens, and self-signed TLS
// certificates with SHA-256 fingerprints for pinning.
//
// Secrets live in files with mode 0600 inside directories with mode 0700;
// files readable by group or others are refused. The package imports only
// the standard library. All functions are safe for concurrent use; the API
// is internal to the kernel and may change between releases.
package security

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrInsecurePermissions is returned when a secret file is accessible by
// group or others.
var ErrInsecurePermissions = errors.New("insecure permissions")

// checkPrivate refuses a secret file whose mode grants any access to group
// or others.
func checkPrivate(path string, info fs.FileInfo) error {
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s has mode %04o, readable by group or others (%w): run chmod 600 %s", path, perm, ErrInsecurePermissions, path)
	}
	return nil
}

// ensureDir creates dir with mode 0700 when it does not exist.
func ensureDir(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("stat %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("chmod %s: %w", dir, err)
	}
	return nil
}

// writePrivateFile atomically writes data to path with mode 0600, creating
// the parent directory with mode 0700. With exclusive set it fails with
// fs.ErrExist if path already exists.
func writePrivateFile(path string, data []byte, exclusive bool) error {
	dir := filepath.Dir(path)
	if err := ensureDir(dir); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName) // no-op after a successful rename or link
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if exclusive {
		// link fails if path exists, so a concurrent creator wins cleanly.
		if err := os.Link(tmpName, path); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	if err := os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// readPrivateFile reads a secret file after checking its permissions.
func readPrivateFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if err := checkPrivate(path, info); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}
