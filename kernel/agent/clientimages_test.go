package agent

import (
	"bytes"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/llm"
)

// TestCheckClientImages: a client's answer may bring up to 4 vision images, each of the type
// its bytes are and at most 20 MiB, 32 MiB together; anything else is refused, saying why.
func TestCheckClientImages(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	ok := llm.Image{MIME: "image/png", Data: buf.Bytes()}
	large := llm.Image{MIME: "image/png", Data: append(bytes.Clone(buf.Bytes()), make([]byte, 12<<20)...)}
	cases := []struct {
		name string
		imgs []llm.Image
		want string // "" accepted
	}{
		{"none", nil, ""},
		{"four", []llm.Image{ok, ok, ok, ok}, ""},
		{"five", []llm.Image{ok, ok, ok, ok, ok}, "5 images, at most 4"},
		{"tiff", []llm.Image{{MIME: "image/tiff", Data: buf.Bytes()}}, `image 1 is "image/tiff"`},
		{"lying type", []llm.Image{ok, {MIME: "image/jpeg", Data: buf.Bytes()}}, "image 2 says image/jpeg but its bytes are image/png"},
		{"empty", []llm.Image{{MIME: "image/png"}}, "image 1 is empty"},
		{"over 20 MiB", []llm.Image{{MIME: "image/png", Data: append(bytes.Clone(buf.Bytes()), make([]byte, 20<<20)...)}}, "at most 20971520"},
		{"over 32 MiB together", []llm.Image{large, large, large}, "together, at most 33554432"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkClientImages(c.imgs)
			if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}
