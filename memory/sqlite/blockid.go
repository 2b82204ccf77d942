package sqlite

import (
	"crypto/rand"
	"encoding/hex"
)

// newBlockID returns a new block id: 128 random bits in hex.
func newBlockID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand documents it)
	return hex.EncodeToString(b[:])
}
