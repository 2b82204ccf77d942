package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// say speaks TEXT through the kernel (POST /api/v1/speech) into a WAV file (or Ogg/Opus for a
// name ending .ogg or .opus, or --format) and names the voice on stderr. The file is written
// beside its destination and renamed into place when complete, a WAV with its header's sizes
// filled in.
func (a *app) say(ctx context.Context, args []string) error {
	fl := newFlags("say")
	out := fl.String("out", "", "the audio file to write (required): F.wav, or F.ogg for Ogg/Opus")
	format := fl.String("format", "", "wav or ogg (default: by the --out name's extension, else wav)")
	voice := fl.String("voice", "", "an espeak-ng voice (default: by the text's script — cmn for Chinese, else the locale's language)")
	force := fl.Bool("force", false, "overwrite an existing file")
	pos, err := parse(fl, args, true)
	if err != nil {
		return err
	}
	text := strings.TrimSpace(strings.Join(pos, " "))
	if text == "" {
		return usagef("say needs TEXT (waiter say TEXT --out F.wav)")
	}
	if *out == "" {
		return usagef("say needs --out F.wav")
	}
	switch *format {
	case "":
		switch strings.ToLower(filepath.Ext(*out)) {
		case ".ogg", ".opus", ".oga":
			*format = "ogg"
		default:
			*format = "wav"
		}
	case "wav", "ogg":
	default:
		return usagef("--format must be wav or ogg, got %q", *format)
	}
	if !*force {
		if _, err := os.Lstat(*out); err == nil {
			return fmt.Errorf("refusing to overwrite %s (use --force)", *out)
		}
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	sp, ok := svc.(client.Speaker)
	if !ok {
		return errors.New("this kernel connection cannot speak")
	}
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".say-*."+*format)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	used, err := sp.Speak(ctx, text, *voice, *format, tmp)
	if err == nil && *format == "wav" {
		err = fixWAVSizes(tmp)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		var ce *client.Error
		if errors.As(err, &ce) && ce.Status == 503 {
			return fmt.Errorf("the kernel cannot speak: %s", ce.Message)
		}
		return fmt.Errorf("say: %w", err)
	}
	if !*force {
		if _, err := os.Lstat(*out); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("refusing to overwrite %s (use --force)", *out)
		}
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "spoke with voice %s into %s\n", used, *out)
	return nil
}

// fixWAVSizes writes the RIFF and data chunk sizes of a streamed WAV file (f holds the whole
// file) so that tools which trust the header see its real length.
func fixWAVSizes(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if size < 44 || size > 1<<32-1 {
		return fmt.Errorf("say: %s: not a WAV file of a size its header can hold", f.Name())
	}
	hdr := make([]byte, 12)
	if _, err := f.ReadAt(hdr, 0); err != nil {
		return err
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return fmt.Errorf("say: %s: not a WAV file", f.Name())
	}
	// Find the data chunk after the fmt chunk(s).
	off := int64(12)
	ch := make([]byte, 8)
	for off+8 <= size {
		if _, err := f.ReadAt(ch, off); err != nil {
			return err
		}
		if string(ch[0:4]) == "data" {
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], uint32(size-off-8))
			if _, err := f.WriteAt(b[:], off+4); err != nil {
				return err
			}
			binary.LittleEndian.PutUint32(b[:], uint32(size-8))
			_, err := f.WriteAt(b[:], 4)
			return err
		}
		n := int64(binary.LittleEndian.Uint32(ch[4:8]))
		off += 8 + n + n%2
	}
	return fmt.Errorf("say: %s: no data chunk", f.Name())
}
