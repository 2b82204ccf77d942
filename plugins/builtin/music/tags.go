package main

// A tag reader of our own: no Go tag library is served by the module proxy this project
// builds from (github.com/dhowden/tag is not), and the music tool needs only a track's title,
// artist, album and number. It reads FLAC's Vorbis comment block, the Vorbis comment header of
// Ogg Vorbis and Opus files, ID3v2.2/2.3/2.4 text frames (MP3 and others) and ID3v1; a file
// without tags is named after its path (folder artist/album/NN title.ext).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"
)

// tags is what the index keeps of a file's tags.
type tags struct {
	Title, Artist, Album string
	Track                int
}

// maxTagBytes bounds what is read of a file's tags (cover art past it is skipped unread).
const maxTagBytes = 1 << 20

// readTags reads the tags of the file at path; a file without readable tags has empty ones
// (and no error: the caller names it after its path).
func readTags(path string) (tags, error) {
	f, err := os.Open(path)
	if err != nil {
		return tags{}, err
	}
	defer f.Close()
	head := make([]byte, 10)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return tags{}, nil // empty or unreadable: no tags
	}
	head = head[:n]
	var t tags
	switch {
	case bytes.HasPrefix(head, []byte("fLaC")):
		t = readFLAC(f)
	case bytes.HasPrefix(head, []byte("ID3")) && len(head) == 10:
		t = readID3v2(f, head)
	case bytes.HasPrefix(head, []byte("OggS")):
		t = readOgg(f)
	}
	if t.Title == "" && t.Artist == "" {
		if v1, ok := readID3v1(f); ok {
			t = v1
		}
	}
	return t, nil
}

// readFLAC reads the metadata blocks after "fLaC" up to the Vorbis comment block.
func readFLAC(f io.ReadSeeker) tags {
	if _, err := f.Seek(4, io.SeekStart); err != nil {
		return tags{}
	}
	var h [4]byte
	for range 64 { // FLAC files have a handful of blocks
		if _, err := io.ReadFull(f, h[:]); err != nil {
			return tags{}
		}
		last, typ := h[0]&0x80 != 0, h[0]&0x7f
		size := int64(h[1])<<16 | int64(h[2])<<8 | int64(h[3])
		if typ == 4 { // VORBIS_COMMENT
			if size > maxTagBytes {
				return tags{}
			}
			b := make([]byte, size)
			if _, err := io.ReadFull(f, b); err != nil {
				return tags{}
			}
			return vorbisComments(b)
		}
		if last {
			return tags{}
		}
		if _, err := f.Seek(size, io.SeekCurrent); err != nil {
			return tags{}
		}
	}
	return tags{}
}

// readOgg finds the Vorbis comment header of an Ogg Vorbis ("\x03vorbis") or Opus
// ("OpusTags") stream in the file's first bytes and reads it. (The header is read as one
// span; one split across Ogg pages, which only very large cover art causes, reads as far as
// its first page.)
func readOgg(f io.ReadSeeker) tags {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return tags{}
	}
	b, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	for _, magic := range []string{"\x03vorbis", "OpusTags"} {
		if i := bytes.Index(b, []byte(magic)); i >= 0 {
			return vorbisComments(b[i+len(magic):])
		}
	}
	return tags{}
}

// vorbisComments parses a Vorbis comment block: a vendor string, then KEY=value comments,
// each length-prefixed (32-bit little endian).
func vorbisComments(b []byte) tags {
	var t tags
	next := func() (string, bool) {
		if len(b) < 4 {
			return "", false
		}
		n := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			return "", false
		}
		s := string(b[:n])
		b = b[n:]
		return s, true
	}
	if _, ok := next(); !ok { // vendor
		return t
	}
	if len(b) < 4 {
		return t
	}
	count := binary.LittleEndian.Uint32(b)
	b = b[4:]
	for range min(count, 10000) {
		c, ok := next()
		if !ok {
			break
		}
		k, v, _ := strings.Cut(c, "=")
		switch strings.ToUpper(k) {
		case "TITLE":
			t.Title = first(t.Title, v)
		case "ARTIST":
			t.Artist = first(t.Artist, v)
		case "ALBUMARTIST":
			if t.Artist == "" {
				t.Artist = v
			}
		case "ALBUM":
			t.Album = first(t.Album, v)
		case "TRACKNUMBER":
			t.Track = trackNumber(v)
		}
	}
	return t
}

// first returns old unless it is empty (the first of repeated comments wins).
func first(old, v string) string {
	if old != "" {
		return old
	}
	return strings.TrimSpace(v)
}

// trackNumber reads "3" or "3/12".
func trackNumber(s string) int {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "/")
	n, _ := strconv.Atoi(s)
	return n
}

// readID3v2 reads the text frames of an ID3v2 tag whose 10-byte header is head.
func readID3v2(f io.Reader, head []byte) tags {
	major, flags := head[3], head[5]
	size := syncsafe(head[6:10])
	if size > maxTagBytes || major < 2 || major > 4 {
		return tags{}
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return tags{}
	}
	if flags&0x80 != 0 && major < 4 { // unsynchronised (ID3v2.4 marks it per frame)
		b = bytes.ReplaceAll(b, []byte{0xff, 0x00}, []byte{0xff})
	}
	if flags&0x40 != 0 && major >= 3 && len(b) >= 4 { // extended header
		n := int(binary.BigEndian.Uint32(b))
		if major == 4 {
			n = syncsafe(b[:4])
		} else {
			n += 4
		}
		if n > len(b) {
			return tags{}
		}
		b = b[n:]
	}
	idLen, hdrLen := 4, 10
	if major == 2 {
		idLen, hdrLen = 3, 6
	}
	names := map[string]string{"TIT2": "title", "TPE1": "artist", "TPE2": "albumartist", "TALB": "album", "TRCK": "track",
		"TT2": "title", "TP1": "artist", "TP2": "albumartist", "TAL": "album", "TRK": "track"}
	var t tags
	var albumArtist string
	for len(b) >= hdrLen && b[0] != 0 {
		id := string(b[:idLen])
		var n int
		switch major {
		case 2:
			n = int(b[3])<<16 | int(b[4])<<8 | int(b[5])
		case 3:
			n = int(binary.BigEndian.Uint32(b[4:8]))
		default:
			n = syncsafe(b[4:8])
		}
		if n < 0 || n > len(b)-hdrLen {
			break
		}
		body := b[hdrLen : hdrLen+n]
		b = b[hdrLen+n:]
		switch names[id] {
		case "title":
			t.Title = id3Text(body)
		case "artist":
			t.Artist = id3Text(body)
		case "albumartist":
			albumArtist = id3Text(body)
		case "album":
			t.Album = id3Text(body)
		case "track":
			t.Track = trackNumber(id3Text(body))
		}
	}
	if t.Artist == "" {
		t.Artist = albumArtist
	}
	return t
}

// syncsafe decodes a 28-bit syncsafe integer (four bytes of seven bits).
func syncsafe(b []byte) int {
	return int(b[0]&0x7f)<<21 | int(b[1]&0x7f)<<14 | int(b[2]&0x7f)<<7 | int(b[3]&0x7f)
}

// id3Text decodes a text frame: an encoding byte (0 ISO-8859-1, 1 UTF-16 with a byte-order
// mark, 2 UTF-16BE, 3 UTF-8), then the text; only its first value is kept.
func id3Text(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	enc, b := b[0], b[1:]
	var s string
	switch enc {
	case 0:
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		s = string(r)
	case 1, 2:
		big := enc == 2
		if len(b) >= 2 && (b[0] == 0xfe && b[1] == 0xff || b[0] == 0xff && b[1] == 0xfe) {
			big, b = b[0] == 0xfe, b[2:]
		}
		u := make([]uint16, 0, len(b)/2)
		for i := 0; i+1 < len(b); i += 2 {
			if big {
				u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
			} else {
				u = append(u, uint16(b[i+1])<<8|uint16(b[i]))
			}
		}
		s = string(utf16.Decode(u))
	default:
		s = string(b)
	}
	s, _, _ = strings.Cut(s, "\x00")
	return strings.TrimSpace(s)
}

// readID3v1 reads the 128-byte ID3v1 tag at the end of the file, if there is one.
func readID3v1(f io.ReadSeeker) (tags, bool) {
	if _, err := f.Seek(-128, io.SeekEnd); err != nil {
		return tags{}, false
	}
	var b [128]byte
	if _, err := io.ReadFull(f, b[:]); err != nil || string(b[:3]) != "TAG" {
		return tags{}, false
	}
	field := func(p []byte) string { return id3Text(append([]byte{0}, bytes.TrimRight(p, "\x00 ")...)) }
	t := tags{Title: field(b[3:33]), Artist: field(b[33:63]), Album: field(b[63:93])}
	if b[125] == 0 && b[126] != 0 { // ID3v1.1 track number
		t.Track = int(b[126])
	}
	return t, t.Title != ""
}

// pathTags names a file without tags after its path below the library: "Artist/Album/03 -
// Title.flac" gives the title (without a leading track number), the album and the artist.
func pathTags(rel string) tags {
	base := strings.TrimSuffix(filepath.Base(rel), filepath.Ext(rel))
	t := tags{Title: base}
	digits := len(base) - len(strings.TrimLeft(base, "0123456789"))
	if digits > 0 && digits <= 3 {
		if rest := strings.TrimLeft(base[digits:], " .-_"); rest != "" {
			t.Track, _ = strconv.Atoi(base[:digits])
			t.Title = rest
		}
	}
	if dir := filepath.Dir(rel); dir != "." {
		t.Album = filepath.Base(dir)
		if up := filepath.Dir(dir); up != "." {
			t.Artist = filepath.Base(up)
		}
	}
	return t
}
