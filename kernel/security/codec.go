package security

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// SealedPrefix starts every sealed value; values without it are legacy
// plaintext.
const SealedPrefix = "enc:"

var (
	// ErrCorrupt is returned by [Codec.Open] for a sealed value whose body
	// is malformed, truncated, tampered with, or sealed for another domain.
	ErrCorrupt = errors.New("sealed value is corrupt")
	// ErrUnknownKey is returned by [Codec.Open] when the value names a key
	// that is not in the key set.
	ErrUnknownKey = errors.New("sealed with an unknown key")
	// ErrUnsupportedVersion is returned by [Codec.Open] for an unknown
	// format version.
	ErrUnsupportedVersion = errors.New("unsupported sealed value version")
)

// Codec seals and opens values at rest with AES-256-GCM. Each domain (e.g.
// "provider-key") gets its own key derived with HKDF-SHA256 from the master
// key (info "hologram/"+domain) and is bound as additional data, so a value
// sealed for one domain does not open in another. A Codec is safe for
// concurrent use.
type Codec struct {
	ks KeySet

	mu    sync.Mutex
	aeads map[string]cipher.AEAD // keyed by key id + "\x00" + domain
}

// NewCodec returns a Codec that seals with ks.Current and opens with any key
// in ks.
func NewCodec(ks KeySet) *Codec {
	return &Codec{ks: ks, aeads: make(map[string]cipher.AEAD)}
}

func (c *Codec) aead(k Key, domain string) (cipher.AEAD, error) {
	cacheKey := k.ID + "\x00" + domain
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.aeads[cacheKey]; ok {
		return a, nil
	}
	dk, err := hkdf.Key(sha256.New, k.Secret, nil, "hologram/"+domain, 32)
	if err != nil {
		return nil, fmt.Errorf("derive key: %w", err)
	}
	block, err := aes.NewCipher(dk)
	if err != nil {
		return nil, fmt.Errorf("derive key: %w", err)
	}
	a, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("derive key: %w", err)
	}
	c.aeads[cacheKey] = a
	return a, nil
}

// Seal encrypts plaintext for domain with the current key and returns
// "enc:v1:<keyid>:<base64url(nonce||ciphertext)>".
func (c *Codec) Seal(domain string, plaintext []byte) (string, error) {
	if domain == "" {
		return "", errors.New("seal: empty domain")
	}
	if len(c.ks.Current.Secret) == 0 {
		return "", errors.New("seal: no current key")
	}
	a, err := c.aead(c.ks.Current, domain)
	if err != nil {
		return "", fmt.Errorf("seal %s: %w", domain, err)
	}
	nonce := make([]byte, a.NonceSize(), a.NonceSize()+len(plaintext)+a.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal %s: nonce: %w", domain, err)
	}
	body := a.Seal(nonce, nonce, plaintext, []byte(domain))
	return SealedPrefix + "v1:" + c.ks.Current.ID + ":" + base64.RawURLEncoding.EncodeToString(body), nil
}

// Open decrypts a value sealed for domain. A value without the "enc:"
// prefix is legacy plaintext and is returned unchanged.
func (c *Codec) Open(domain, s string) ([]byte, error) {
	if !IsSealed(s) {
		return []byte(s), nil
	}
	parts := strings.SplitN(s, ":", 4)
	if len(parts) < 2 || parts[1] != "v1" {
		version := ""
		if len(parts) >= 2 {
			version = parts[1]
		}
		return nil, fmt.Errorf("open %s: %w %q", domain, ErrUnsupportedVersion, version)
	}
	if len(parts) != 4 {
		return nil, fmt.Errorf("open %s: %w: missing key id or body", domain, ErrCorrupt)
	}
	k, ok := c.ks.Lookup(parts[2])
	if !ok {
		return nil, fmt.Errorf("open %s: %w %q", domain, ErrUnknownKey, parts[2])
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil {
		return nil, fmt.Errorf("open %s: %w: bad base64", domain, ErrCorrupt)
	}
	a, err := c.aead(k, domain)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", domain, err)
	}
	if len(body) < a.NonceSize()+a.Overhead() {
		return nil, fmt.Errorf("open %s: %w: too short", domain, ErrCorrupt)
	}
	nonce, ct := body[:a.NonceSize()], body[a.NonceSize():]
	plain, err := a.Open(nil, nonce, ct, []byte(domain))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w: authentication failed (tampered or another domain)", domain, ErrCorrupt)
	}
	if plain == nil {
		plain = []byte{}
	}
	return plain, nil
}

// SealString is [Codec.Seal] for a string.
func (c *Codec) SealString(domain, plaintext string) (string, error) {
	return c.Seal(domain, []byte(plaintext))
}

// OpenString is [Codec.Open] returning a string.
func (c *Codec) OpenString(domain, s string) (string, error) {
	b, err := c.Open(domain, s)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// IsSealed reports whether s carries the sealed-value prefix.
func IsSealed(s string) bool {
	return strings.HasPrefix(s, SealedPrefix)
}
