package security

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// KeySize is the length in bytes of a master key.
const KeySize = 32

// Key is one master key and its short id (the first 8 hex digits of the
// SHA-256 of the key).
type Key struct {
	ID     string
	Secret []byte
}

// KeySet is the current master key plus older keys kept so values sealed
// before a rotation still open. It is a value; copies share key bytes and
// must not be modified.
type KeySet struct {
	// Current seals new values.
	Current Key
	// Old keys only open values, newest first.
	Old []Key
}

// Lookup returns the key with the given id.
func (ks KeySet) Lookup(id string) (Key, bool) {
	if ks.Current.ID == id && len(ks.Current.Secret) > 0 {
		return ks.Current, true
	}
	for _, k := range ks.Old {
		if k.ID == id {
			return k, true
		}
	}
	return Key{}, false
}

// KeyID returns the short id of a key: the first 8 hex digits of its
// SHA-256.
func KeyID(secret []byte) string {
	sum := sha256.Sum256(secret)
	return hex.EncodeToString(sum[:4])
}

func newKey() (Key, error) {
	secret := make([]byte, KeySize)
	if _, err := rand.Read(secret); err != nil {
		return Key{}, fmt.Errorf("generate key: %w", err)
	}
	return Key{ID: KeyID(secret), Secret: secret}, nil
}

// LoadOrCreateKeyFile reads the key file at path, or creates it (mode 0600,
// parent directory 0700) with a new random key when it is missing. A key
// file accessible by group or others is refused with an error naming the
// path and the chmod that fixes it.
//
// The format is one key per line, "v1 <id> <base64 key>"; the first line is
// the current key and the others are old keys.
func LoadOrCreateKeyFile(path string) (KeySet, error) {
	ks, err := readKeyFile(path)
	if err == nil {
		return ks, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return KeySet{}, err
	}
	k, err := newKey()
	if err != nil {
		return KeySet{}, err
	}
	ks = KeySet{Current: k}
	if err := writePrivateFile(path, formatKeyFile(ks), true); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKeyFile(path)
		}
		return KeySet{}, fmt.Errorf("create key file: %w", err)
	}
	return ks, nil
}

// RotateKeyFile makes a new random key current in the key file at path and
// keeps the previous keys as old keys. The file must exist.
func RotateKeyFile(path string) (KeySet, error) {
	ks, err := readKeyFile(path)
	if err != nil {
		return KeySet{}, err
	}
	k, err := newKey()
	if err != nil {
		return KeySet{}, err
	}
	rotated := KeySet{Current: k, Old: append([]Key{ks.Current}, ks.Old...)}
	if err := writePrivateFile(path, formatKeyFile(rotated), false); err != nil {
		return KeySet{}, fmt.Errorf("rotate key file: %w", err)
	}
	return rotated, nil
}

func formatKeyFile(ks KeySet) []byte {
	var b bytes.Buffer
	for _, k := range append([]Key{ks.Current}, ks.Old...) {
		fmt.Fprintf(&b, "v1 %s %s\n", k.ID, base64.StdEncoding.EncodeToString(k.Secret))
	}
	return b.Bytes()
}

func readKeyFile(path string) (KeySet, error) {
	data, err := readPrivateFile(path)
	if err != nil {
		return KeySet{}, fmt.Errorf("key file: %w", err)
	}
	var keys []Key
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 || fields[0] != "v1" {
			return KeySet{}, fmt.Errorf("key file %s line %d: want \"v1 <id> <base64 key>\"", path, i+1)
		}
		secret, err := base64.StdEncoding.DecodeString(fields[2])
		if err != nil {
			return KeySet{}, fmt.Errorf("key file %s line %d: %w", path, i+1, err)
		}
		if len(secret) != KeySize {
			return KeySet{}, fmt.Errorf("key file %s line %d: key is %d bytes, want %d", path, i+1, len(secret), KeySize)
		}
		if id := KeyID(secret); id != fields[1] {
			return KeySet{}, fmt.Errorf("key file %s line %d: id %s does not match key (want %s)", path, i+1, fields[1], id)
		}
		keys = append(keys, Key{ID: fields[1], Secret: secret})
	}
	if len(keys) == 0 {
		return KeySet{}, fmt.Errorf("key file %s: no keys", path)
	}
	return KeySet{Current: keys[0], Old: keys[1:]}, nil
}
