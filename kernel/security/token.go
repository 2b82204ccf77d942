package security

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// MinTokenLen is the shortest API token a kernel accepts, in characters after trimming
// whitespace: 32 characters leave a guess no chance even at a few characters of entropy each.
// [GenerateToken] makes 43 (256 random bits).
const MinTokenLen = 32

// CheckToken refuses a token shorter than [MinTokenLen] after trimming whitespace, with an error
// naming the minimum and how to make a good one.
func CheckToken(tok string) error {
	if n := len([]rune(strings.TrimSpace(tok))); n < MinTokenLen {
		return fmt.Errorf("token is %d characters, at least %d are needed (make one with: waiter token > FILE)", n, MinTokenLen)
	}
	return nil
}

// GenerateToken returns 32 random bytes encoded as unpadded base64url.
func GenerateToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// LoadOrCreateToken returns the API token stored at path, creating the file
// (mode 0600, parent directory 0700) with a new token when it is missing. An
// existing file accessible by group or others is refused.
func LoadOrCreateToken(path string) (string, error) {
	tok, err := loadPrivateToken(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return tok, err
	}
	tok, err = GenerateToken()
	if err != nil {
		return "", err
	}
	if err := writePrivateFile(path, []byte(tok+"\n"), true); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return loadPrivateToken(path)
		}
		return "", fmt.Errorf("create token file: %w", err)
	}
	return tok, nil
}

func loadPrivateToken(path string) (string, error) {
	data, err := readPrivateFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	return parseToken(path, data)
}

// ReadTokenFile reads a token from path, trimming surrounding whitespace. An
// empty file is an error.
func ReadTokenFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	return parseToken(path, data)
}

func parseToken(path string, data []byte) (string, error) {
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	return tok, nil
}

// TokenEqual compares a presented token with the expected one in constant
// time. An empty want never matches.
func TokenEqual(got, want string) bool {
	if want == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
