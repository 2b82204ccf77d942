package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"slices"
	"strings"
	"time"
)

// certValidity is how long a generated self-signed certificate is valid.
const certValidity = 10 * 365 * 24 * time.Hour

// LoadOrCreateSelfSigned loads the certificate and key at certPath and
// keyPath, or generates a self-signed ECDSA P-256 pair valid for 10 years
// when neither exists. The certificate's SANs are hosts (IP addresses and
// DNS names) plus 127.0.0.1, ::1 and localhost. Both files are written with
// mode 0600. It returns the certificate and its [Fingerprint]. An existing
// key file accessible by group or others is refused, and a pair with only
// one file present is an error rather than being overwritten.
func LoadOrCreateSelfSigned(certPath, keyPath string, hosts []string) (tls.Certificate, string, error) {
	_, certErr := os.Stat(certPath)
	_, keyErr := os.Stat(keyPath)
	certMissing, keyMissing := errors.Is(certErr, fs.ErrNotExist), errors.Is(keyErr, fs.ErrNotExist)
	switch {
	case certMissing && keyMissing:
		if err := generateSelfSigned(certPath, keyPath, hosts); err != nil {
			return tls.Certificate{}, "", err
		}
	case certMissing != keyMissing:
		return tls.Certificate{}, "", fmt.Errorf("tls: only one of %s and %s exists; remove it or provide both", certPath, keyPath)
	}
	return loadPair(certPath, keyPath)
}

func loadPair(certPath, keyPath string) (tls.Certificate, string, error) {
	keyPEM, err := readPrivateFile(keyPath)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("tls key: %w", err)
	}
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("tls certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("tls pair %s, %s: %w", certPath, keyPath, err)
	}
	return cert, Fingerprint(cert.Certificate[0]), nil
}

func generateSelfSigned(certPath, keyPath string, hosts []string) error {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("tls: generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return fmt.Errorf("tls: serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"HologramAgent"}, CommonName: "HologramAgent kernel"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, h := range append(slices.Clone(hosts), "127.0.0.1", "::1", "localhost") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if ip := net.ParseIP(strings.Trim(h, "[]")); ip != nil {
			if !slices.ContainsFunc(tmpl.IPAddresses, ip.Equal) {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
		} else if !slices.Contains(tmpl.DNSNames, h) {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		return fmt.Errorf("tls: create certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return fmt.Errorf("tls: marshal key: %w", err)
	}
	if err := writePrivateFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), true); err != nil {
		return fmt.Errorf("tls key: %w", err)
	}
	if err := writePrivateFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), true); err != nil {
		return fmt.Errorf("tls certificate: %w", err)
	}
	return nil
}

// Fingerprint returns the lowercase hex SHA-256 of a DER certificate,
// without separators.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// NormalizeFingerprint turns a user-supplied SHA-256 fingerprint into the
// form [Fingerprint] returns. It accepts upper case, colons, surrounding
// space and an optional "sha256:" prefix, and rejects anything that is not
// 64 hex digits.
func NormalizeFingerprint(s string) (string, error) {
	f := strings.TrimSpace(s)
	if len(f) >= 7 && strings.EqualFold(f[:7], "sha256:") {
		f = f[7:]
	}
	f = strings.ToLower(strings.ReplaceAll(f, ":", ""))
	if len(f) != sha256.Size*2 {
		return "", fmt.Errorf("fingerprint %q: %d hex digits, want %d", s, len(f), sha256.Size*2)
	}
	if _, err := hex.DecodeString(f); err != nil {
		return "", fmt.Errorf("fingerprint %q: not hex", s)
	}
	return f, nil
}
