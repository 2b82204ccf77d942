package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf16"
)

// vorbisBlock encodes a Vorbis comment block.
func vorbisBlock(comments ...string) []byte {
	var b bytes.Buffer
	put := func(s string) {
		binary.Write(&b, binary.LittleEndian, uint32(len(s)))
		b.WriteString(s)
	}
	put("test vendor")
	binary.Write(&b, binary.LittleEndian, uint32(len(comments)))
	for _, c := range comments {
		put(c)
	}
	return b.Bytes()
}

// flacFile is "fLaC", a STREAMINFO block, a padding block and the comment block (last).
func flacFile(comments ...string) []byte {
	var b bytes.Buffer
	b.WriteString("fLaC")
	block := func(typ byte, last bool, body []byte) {
		if last {
			typ |= 0x80
		}
		n := len(body)
		b.Write([]byte{typ, byte(n >> 16), byte(n >> 8), byte(n)})
		b.Write(body)
	}
	block(0, false, make([]byte, 34))
	block(1, false, make([]byte, 100))
	block(4, true, vorbisBlock(comments...))
	b.Write(make([]byte, 64)) // audio frames
	return b.Bytes()
}

// id3Frame encodes one ID3v2 frame of the given major version.
func id3Frame(major byte, id string, body []byte) []byte {
	var b bytes.Buffer
	b.WriteString(id)
	n := len(body)
	switch major {
	case 2:
		b.Write([]byte{byte(n >> 16), byte(n >> 8), byte(n)})
	case 3:
		binary.Write(&b, binary.BigEndian, uint32(n))
		b.Write([]byte{0, 0})
	default:
		b.Write([]byte{byte(n >> 21 & 0x7f), byte(n >> 14 & 0x7f), byte(n >> 7 & 0x7f), byte(n & 0x7f)})
		b.Write([]byte{0, 0})
	}
	b.Write(body)
	return b.Bytes()
}

// id3File is an ID3v2 tag of frames (with padding), then some MPEG bytes.
func id3File(major byte, frames ...[]byte) []byte {
	body := append(bytes.Join(frames, nil), make([]byte, 32)...)
	n := len(body)
	var b bytes.Buffer
	b.Write([]byte{'I', 'D', '3', major, 0, 0, byte(n >> 21 & 0x7f), byte(n >> 14 & 0x7f), byte(n >> 7 & 0x7f), byte(n & 0x7f)})
	b.Write(body)
	b.Write([]byte{0xff, 0xfb, 0x90, 0x00})
	return b.Bytes()
}

func utf16LE(s string) []byte {
	out := []byte{1, 0xff, 0xfe}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u), byte(u>>8))
	}
	return out
}

func TestReadTags(t *testing.T) {
	v1 := make([]byte, 128)
	copy(v1, "TAG")
	copy(v1[3:], "Old Song")
	copy(v1[33:], "Old Artist")
	copy(v1[63:], "Old Album")
	v1[126] = 7
	ogg := append([]byte("OggS\x00\x02"+string(make([]byte, 40))+"\x01vorbis"+string(make([]byte, 30))+"OggS\x00\x00"+string(make([]byte, 20))+"\x03vorbis"),
		vorbisBlock("TITLE=Ogg Song", "ARTIST=Ogg Band", "ALBUM=Ogg Album", "TRACKNUMBER=2")...)
	opus := append([]byte("OggS"+string(make([]byte, 24))+"OpusHead"+string(make([]byte, 20))+"OggS"+string(make([]byte, 24))+"OpusTags"),
		vorbisBlock("title=Opus Song", "artist=Opus Band")...)
	for _, tc := range []struct {
		name string
		data []byte
		want tags
	}{
		{"flac", flacFile("TITLE=Song One", "ARTIST=The Testers", "ALBUM=First", "TRACKNUMBER=3/12", "TITLE=ignored second"), tags{"Song One", "The Testers", "First", 3}},
		{"flac album artist", flacFile("title=Solo", "ALBUMARTIST=Band"), tags{Title: "Solo", Artist: "Band"}},
		{"flac without comments", flacFile(), tags{}},
		{"id3v2.3 latin-1 and utf-16", id3File(3, id3Frame(3, "TIT2", append([]byte{0}, "Caf\xe9"...)), id3Frame(3, "TPE1", utf16LE("Ünïcode Band")),
			id3Frame(3, "TALB", []byte("\x00Album\x00")), id3Frame(3, "TRCK", []byte("\x004/9"))), tags{"Café", "Ünïcode Band", "Album", 4}},
		{"id3v2.4 utf-8", id3File(4, id3Frame(4, "TIT2", []byte("\x03歌")), id3Frame(4, "TPE2", []byte("\x03Album Artist")), id3Frame(4, "TALB", make([]byte, 200))),
			tags{Title: "歌", Artist: "Album Artist"}},
		{"id3v2.2", id3File(2, id3Frame(2, "TT2", []byte("\x00Short")), id3Frame(2, "TP1", []byte("\x00Old Format"))), tags{Title: "Short", Artist: "Old Format"}},
		{"id3v1", append([]byte("\xff\xfb\x90\x00 mpeg"), v1...), tags{"Old Song", "Old Artist", "Old Album", 7}},
		{"ogg vorbis", ogg, tags{"Ogg Song", "Ogg Band", "Ogg Album", 2}},
		{"opus", opus, tags{Title: "Opus Song", Artist: "Opus Band"}},
		{"truncated flac", flacFile("TITLE=x")[:50], tags{}},
		{"huge id3 size", []byte("ID3\x03\x00\x00\x7f\x7f\x7f\x7f"), tags{}},
		{"frame size past the tag", id3File(3, []byte("TIT2\x00\x00\xff\xff\x00\x00\x00abc")), tags{}},
		{"empty", nil, tags{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readTags(path)
			if err != nil || got != tc.want {
				t.Fatalf("readTags = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestPathTags(t *testing.T) {
	for rel, want := range map[string]tags{
		"Artist/Album/03 - Title.flac": {"Title", "Artist", "Album", 3},
		"Album/Title.mp3":              {Title: "Title", Album: "Album"},
		"1999.mp3":                     {Title: "1999"},
		"a/b/c/12.Song.ogg":            {"Song", "b", "c", 12},
	} {
		if got := pathTags(rel); got != want {
			t.Errorf("pathTags(%q) = %+v, want %+v", rel, got, want)
		}
	}
}

// FuzzReadTags: no input panics or reads past its bounds.
func FuzzReadTags(f *testing.F) {
	f.Add(flacFile("TITLE=a", "ARTIST=b"))
	f.Add(id3File(4, id3Frame(4, "TIT2", []byte("\x03x"))))
	f.Add(id3File(3, id3Frame(3, "TPE1", utf16LE("y"))))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := readTags(path); err != nil {
			t.Fatal(err)
		}
	})
}
