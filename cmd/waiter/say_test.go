package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// streamedWAV is a 16-bit mono WAV header as espeak-ng writes it to a pipe (sizes unknown:
// 0x7fffffff), then n samples.
func streamedWAV(n int) []byte {
	b := make([]byte, 44+2*n)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], 0x7fffffff)
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], 22050)
	binary.LittleEndian.PutUint32(b[28:], 44100)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], 0x7fffffff)
	return b
}

func TestFixWAVSizes(t *testing.T) {
	tests := []struct {
		name    string
		content []byte
		ok      bool
	}{
		{"streamed", streamedWAV(1000), true},
		{"empty data", streamedWAV(0), true},
		{"not a WAV", []byte("not a wav file at all, but long enough to have a header in it...."), false},
		{"short", []byte("RIFF"), false},
		{"no data chunk", append(streamedWAV(0)[:36], "LIST\x04\x00\x00\x00abcd"...), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a.wav")
			if err := os.WriteFile(path, tt.content, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			err = fixWAVSizes(f)
			if (err == nil) != tt.ok {
				t.Fatalf("err %v, want ok %v", err, tt.ok)
			}
			if !tt.ok {
				return
			}
			b, _ := os.ReadFile(path)
			if got := binary.LittleEndian.Uint32(b[4:]); int(got) != len(b)-8 {
				t.Errorf("RIFF size %d, want %d", got, len(b)-8)
			}
			if got := binary.LittleEndian.Uint32(b[40:]); int(got) != len(b)-44 {
				t.Errorf("data size %d, want %d", got, len(b)-44)
			}
		})
	}
}
