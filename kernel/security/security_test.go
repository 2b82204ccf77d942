package security

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

func newKeySet(t *testing.T) (KeySet, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "conf", "hologram", "key")
	ks, err := LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return ks, path
}

func TestKeyFile(t *testing.T) {
	ks, path := newKeySet(t)
	if got := mode(t, path); got != 0o600 {
		t.Errorf("key file mode %04o, want 0600", got)
	}
	if got := mode(t, filepath.Dir(path)); got != 0o700 {
		t.Errorf("key dir mode %04o, want 0700", got)
	}
	if len(ks.Current.Secret) != KeySize || ks.Current.ID != KeyID(ks.Current.Secret) || len(ks.Current.ID) != 8 {
		t.Fatalf("bad key: id %q, %d bytes", ks.Current.ID, len(ks.Current.Secret))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "v1 " + ks.Current.ID + " " + base64.StdEncoding.EncodeToString(ks.Current.Secret) + "\n"
	if string(data) != want {
		t.Fatalf("file = %q, want %q", data, want)
	}
	again, err := LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if again.Current.ID != ks.Current.ID || !bytes.Equal(again.Current.Secret, ks.Current.Secret) {
		t.Fatal("reload produced a different key")
	}

	rotated, err := RotateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Current.ID == ks.Current.ID || len(rotated.Old) != 1 || rotated.Old[0].ID != ks.Current.ID {
		t.Fatalf("rotation: current %s old %v", rotated.Current.ID, rotated.Old)
	}
	reloaded, err := LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if reloaded.Current.ID != rotated.Current.ID || len(reloaded.Old) != 1 || reloaded.Old[0].ID != ks.Current.ID {
		t.Fatalf("reload after rotation: %+v", reloaded)
	}
	if got := mode(t, path); got != 0o600 {
		t.Errorf("key file mode after rotation %04o, want 0600", got)
	}
}

func TestKeyFileErrors(t *testing.T) {
	valid := func() string {
		k, err := newKey()
		if err != nil {
			t.Fatal(err)
		}
		return "v1 " + k.ID + " " + base64.StdEncoding.EncodeToString(k.Secret) + "\n"
	}()
	tests := []struct {
		name    string
		content string
		perm    os.FileMode
		wantErr []string
	}{
		{"group readable", valid, 0o644, []string{"chmod 600", "key"}},
		{"bad format", "hello\n", 0o600, []string{"line 1"}},
		{"wrong id", "v1 deadbeef " + strings.Fields(valid)[2] + "\n", 0o600, []string{"does not match"}},
		{"short key", "v1 00000000 " + base64.StdEncoding.EncodeToString([]byte("short")) + "\n", 0o600, []string{"want 32"}},
		{"empty", "\n", 0o600, []string{"no keys"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "key")
			if err := os.WriteFile(path, []byte(tt.content), tt.perm); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.perm); err != nil {
				t.Fatal(err)
			}
			_, err := LoadOrCreateKeyFile(path)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err %q does not mention %q", err, w)
				}
			}
			if tt.perm == 0o644 {
				if !errors.Is(err, ErrInsecurePermissions) || !strings.Contains(err.Error(), path) {
					t.Errorf("err %q: want ErrInsecurePermissions naming %s", err, path)
				}
				if _, err := RotateKeyFile(path); !errors.Is(err, ErrInsecurePermissions) {
					t.Errorf("RotateKeyFile err = %v", err)
				}
			}
		})
	}
}

func TestCodecRoundTrip(t *testing.T) {
	ks, _ := newKeySet(t)
	c := NewCodec(ks)
	tests := []struct {
		domain    string
		plaintext []byte
	}{
		{"provider-key", []byte("sk-secret-value")},
		{"plugin-secret", []byte("密码 with unicode")},
		{"empty", []byte{}},
		{"binary", []byte{0, 1, 2, 255}},
	}
	for _, tt := range tests {
		t.Run(tt.domain, func(t *testing.T) {
			sealed, err := c.Seal(tt.domain, tt.plaintext)
			if err != nil {
				t.Fatal(err)
			}
			if !IsSealed(sealed) || !strings.HasPrefix(sealed, "enc:v1:"+ks.Current.ID+":") {
				t.Fatalf("sealed = %q", sealed)
			}
			if len(tt.plaintext) > 3 && strings.Contains(sealed, string(tt.plaintext)) {
				t.Fatal("plaintext visible in sealed value")
			}
			got, err := c.Open(tt.domain, sealed)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.plaintext) {
				t.Fatalf("Open = %q, want %q", got, tt.plaintext)
			}
			again, err := c.Seal(tt.domain, tt.plaintext)
			if err != nil {
				t.Fatal(err)
			}
			if again == sealed {
				t.Fatal("two seals are identical: nonce reused")
			}
		})
	}
	s, err := c.SealString("provider-key", "hello")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.OpenString("provider-key", s); err != nil || got != "hello" {
		t.Fatalf("OpenString = %q, %v", got, err)
	}
	if _, err := c.Seal("", []byte("x")); err == nil {
		t.Fatal("empty domain accepted")
	}
}

func TestCodecOpenErrors(t *testing.T) {
	ks, _ := newKeySet(t)
	c := NewCodec(ks)
	sealed, err := c.SealString("provider-key", "sk-secret")
	if err != nil {
		t.Fatal(err)
	}
	prefix := "enc:v1:" + ks.Current.ID + ":"
	body := strings.TrimPrefix(sealed, prefix)
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] ^= 1
	tampered := prefix + base64.RawURLEncoding.EncodeToString(raw)

	tests := []struct {
		name    string
		domain  string
		in      string
		wantErr error
	}{
		{"other domain", "plugin-secret", sealed, ErrCorrupt},
		{"tampered", "provider-key", tampered, ErrCorrupt},
		{"bad base64", "provider-key", prefix + "!!!not base64!!!", ErrCorrupt},
		{"short body", "provider-key", prefix + base64.RawURLEncoding.EncodeToString([]byte("short")), ErrCorrupt},
		{"empty body", "provider-key", prefix, ErrCorrupt},
		{"missing parts", "provider-key", "enc:v1:" + ks.Current.ID, ErrCorrupt},
		{"unknown key", "provider-key", "enc:v1:00000000:" + body, ErrUnknownKey},
		{"unknown version", "provider-key", "enc:v9:" + ks.Current.ID + ":" + body, ErrUnsupportedVersion},
		{"no version", "provider-key", "enc:", ErrUnsupportedVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.Open(tt.domain, tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Open = %q, %v; want %v", got, err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "sk-secret") {
				t.Fatalf("error leaks plaintext: %v", err)
			}
		})
	}
}

func TestCodecLegacyPassthrough(t *testing.T) {
	ks, _ := newKeySet(t)
	c := NewCodec(ks)
	for _, in := range []string{"", "sk-plain-legacy", "encrypted? no", "ENC:v1:upper is not the prefix"} {
		t.Run(in, func(t *testing.T) {
			if IsSealed(in) {
				t.Fatal("IsSealed = true")
			}
			got, err := c.OpenString("provider-key", in)
			if err != nil || got != in {
				t.Fatalf("OpenString = %q, %v", got, err)
			}
		})
	}
}

func TestCodecRotation(t *testing.T) {
	ks, path := newKeySet(t)
	before, err := NewCodec(ks).SealString("provider-key", "old secret")
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := RotateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCodec(rotated)
	if got, err := c.OpenString("provider-key", before); err != nil || got != "old secret" {
		t.Fatalf("old value after rotation: %q, %v", got, err)
	}
	after, err := c.SealString("provider-key", "new secret")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(after, "enc:v1:"+rotated.Current.ID+":") {
		t.Fatalf("new seal %q does not use current key %s", after, rotated.Current.ID)
	}
	if _, err := NewCodec(ks).Open("provider-key", after); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("pre-rotation codec opening new value: %v, want ErrUnknownKey", err)
	}
}

func TestTokens(t *testing.T) {
	tok, err := GenerateToken()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(raw) != 32 {
		t.Fatalf("token %q: %d bytes, %v", tok, len(raw), err)
	}

	path := filepath.Join(t.TempDir(), "cfg", "token")
	created, err := LoadOrCreateToken(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode(t, path) != 0o600 || mode(t, filepath.Dir(path)) != 0o700 {
		t.Fatalf("modes file %04o dir %04o", mode(t, path), mode(t, filepath.Dir(path)))
	}
	loaded, err := LoadOrCreateToken(path)
	if err != nil || loaded != created {
		t.Fatalf("reload = %q, %v; want %q", loaded, err, created)
	}
	if read, err := ReadTokenFile(path); err != nil || read != created {
		t.Fatalf("ReadTokenFile = %q, %v", read, err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateToken(path); !errors.Is(err, ErrInsecurePermissions) {
		t.Fatalf("group-readable token accepted: %v", err)
	}

	dir := t.TempDir()
	files := []struct {
		name    string
		content string
		want    string
		wantErr bool
	}{
		{"trims whitespace", "  abc\n\n", "abc", false},
		{"empty", "", "", true},
		{"only whitespace", " \n\t", "", true},
	}
	for _, tt := range files {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
			if err := os.WriteFile(p, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadTokenFile(p)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("ReadTokenFile = %q, %v", got, err)
			}
		})
	}
	if _, err := ReadTokenFile(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("missing file accepted")
	}

	eq := []struct {
		got, want string
		ok        bool
	}{
		{"abc", "abc", true},
		{"abd", "abc", false},
		{"ab", "abc", false},
		{"", "", false},
		{"abc", "", false},
	}
	for _, tt := range eq {
		if got := TokenEqual(tt.got, tt.want); got != tt.ok {
			t.Errorf("TokenEqual(%q, %q) = %v, want %v", tt.got, tt.want, got, tt.ok)
		}
	}
}

func TestNormalizeFingerprint(t *testing.T) {
	const fp = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	colons := func(s string) string {
		var parts []string
		for i := 0; i < len(s); i += 2 {
			parts = append(parts, s[i:i+2])
		}
		return strings.Join(parts, ":")
	}
	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{"canonical", fp, false},
		{"upper", strings.ToUpper(fp), false},
		{"colons upper", colons(strings.ToUpper(fp)), false},
		{"sha256 prefix", "sha256:" + fp, false},
		{"SHA256 prefix with colons", "SHA256:" + colons(fp), false},
		{"spaces", "  " + fp + "\n", false},
		{"too short", fp[:62], true},
		{"too long", fp + "00", true},
		{"not hex", "zz" + fp[2:], true},
		{"empty", "", true},
		{"other algorithm", "sha1:" + fp, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeFingerprint(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("NormalizeFingerprint(%q) = %q, want error", tt.in, got)
				}
				return
			}
			if err != nil || got != fp {
				t.Fatalf("NormalizeFingerprint(%q) = %q, %v", tt.in, got, err)
			}
		})
	}
}

func TestSelfSigned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	cert, fp, err := LoadOrCreateSelfSigned(certPath, keyPath, []string{"homed.lan", "192.168.1.20", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{certPath, keyPath} {
		if got := mode(t, p); got != 0o600 {
			t.Errorf("%s mode %04o, want 0600", p, got)
		}
	}
	if got := mode(t, dir); got != 0o700 {
		t.Errorf("dir mode %04o, want 0700", got)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if fp != Fingerprint(cert.Certificate[0]) || len(fp) != 64 || strings.ToLower(fp) != fp {
		t.Fatalf("fingerprint %q", fp)
	}
	pub, ok := leaf.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		t.Fatalf("public key %T, want ECDSA P-256", leaf.PublicKey)
	}
	if life := leaf.NotAfter.Sub(leaf.NotBefore); life < certValidity {
		t.Fatalf("validity %v, want at least 10 years", life)
	}
	if !slices.Equal(leaf.DNSNames, []string{"homed.lan", "localhost"}) {
		t.Errorf("DNSNames = %v", leaf.DNSNames)
	}
	wantIPs := []net.IP{net.ParseIP("192.168.1.20"), net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	if !slices.EqualFunc(leaf.IPAddresses, wantIPs, net.IP.Equal) {
		t.Errorf("IPAddresses = %v", leaf.IPAddresses)
	}

	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	for _, name := range []string{"127.0.0.1", "::1", "localhost", "homed.lan", "192.168.1.20"} {
		t.Run("verifies for "+name, func(t *testing.T) {
			if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: leaf.NotBefore.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "evil.example", Roots: roots, CurrentTime: leaf.NotBefore.Add(time.Hour)}); err == nil {
		t.Error("verified for a host not in the SANs")
	}

	_, fp2, err := LoadOrCreateSelfSigned(certPath, keyPath, []string{"other.host"})
	if err != nil {
		t.Fatal(err)
	}
	if fp2 != fp {
		t.Fatalf("reload regenerated: %s != %s", fp2, fp)
	}

	if err := os.Chmod(keyPath, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateSelfSigned(certPath, keyPath, nil); !errors.Is(err, ErrInsecurePermissions) {
		t.Fatalf("world-readable TLS key accepted: %v", err)
	}
	if err := os.Remove(certPath); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateSelfSigned(certPath, keyPath, nil); err == nil || !strings.Contains(err.Error(), "only one") {
		t.Fatalf("half pair: %v", err)
	}
}
