//go:build integration

package main

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// textPNG renders lines of text in DejaVu Sans, 28 px, black on white.
func textPNG(t *testing.T, lines ...string) []byte {
	t.Helper()
	ttf, err := os.ReadFile("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
	if err != nil {
		t.Fatalf("DejaVu Sans (Debian's fonts-dejavu-core): %v", err)
	}
	f, err := opentype.Parse(ttf)
	if err != nil {
		t.Fatal(err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: 28, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 760, 60+48*len(lines)))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	d := font.Drawer{Dst: img, Src: image.NewUniform(color.Black), Face: face}
	for i, l := range lines {
		d.Dot = fixed.P(30, 60+48*i)
		d.DrawString(l)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestWaiterAttachedImageIsRead: an image sent with a message is read by OCR (the PP-OCRv4
// models, `make ocr-models`, under ONNX Runtime, `make onnxruntime`): the model sees its text
// with the message, and memory recall finds the message by the words in the image.
func TestWaiterAttachedImageIsRead(t *testing.T) {
	for _, asset := range []string{"../../build/onnxruntime/libonnxruntime.so.1", "../../build/models/ocr/ppocr_keys_v1.txt"} {
		if _, err := os.Stat(asset); err != nil {
			if os.Getenv("HOLOGRAM_CI") == "1" {
				t.Fatalf("%v: run `make assets`", err)
			}
			t.Skipf("%v: run `make assets`", err)
		}
	}
	e := graphEnv(t)
	fake := llmtest.NewServer(t)
	e.start()
	e.addProvider(fake.URL(), "k")
	img := filepath.Join(e.root, "receipt.png")
	if err := os.WriteFile(img, textPNG(t, "Invoice 4711 from Acme Robotics", "Total due: 318 euros by Friday"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := e.waiter("", nil, "ask", "--attach", img, "please file this"); code != 0 {
		t.Fatalf("ask --attach: exit %d: %s", code, errOut)
	}
	reqs := fake.Requests()
	last := reqs[len(reqs)-1].Messages
	u := last[len(last)-1].Content
	if !strings.Contains(u, `[attached image "receipt.png", image/png`) || !strings.Contains(u, "Invoice") || !strings.Contains(u, "from Acme Robotics") || !strings.Contains(u, "Total due: 318 euros by Friday") {
		t.Fatalf("the model got %q; want the image's text after it", u)
	}
	var hist []client.Message
	e.waiterJSON(&hist, "history", "--json")
	if len(hist) == 0 || len(hist[0].Blocks) != 1 || !strings.Contains(hist[0].Blocks[0].Text, "Total due") {
		t.Fatalf("history = %+v; want the image block with its text", hist)
	}
	var hits []client.MemoryHit
	e.waiterJSON(&hits, "memory", "search", "--json", "robotics invoice")
	found := false
	for _, h := range hits {
		found = found || h.ID == hist[0].ID
	}
	if !found {
		t.Fatalf("recall by the image's words = %+v; want the message that carried it", hits)
	}
}
