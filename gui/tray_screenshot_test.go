package gui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// testPNG is a small PNG of one colour.
func testPNG(t *testing.T, c color.Color) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 40, 30))
	for y := 0; y < 30; y++ {
		for x := 0; x < 40; x++ {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTrayScreenshot: with a capture function the tray has a Screenshot item; it attaches the
// capture to the main chat's next message as screenshot-YYYYMMDD-HHMMSS.png (image/png) and
// shows the main window, and the message carries it to the kernel. A failed capture says why;
// a cancelled one does nothing. Without a capture function there is no item.
func TestTrayScreenshot(t *testing.T) {
	shot := testPNG(t, color.NRGBA{200, 30, 30, 255})
	var capErr error
	capture := func(ctx context.Context) ([]byte, error) {
		if capErr != nil {
			return nil, capErr
		}
		return shot, nil
	}
	fake, svc := kernel(t, true)
	h := startApp(t, Options{Service: svc, Tray: true, Screenshot: capture}, true, "chat", nil)
	a, ta := h.a, h.ta
	if got := strings.Join(ta.labels(), "|"); got != "Quick chat|Open HologramAgent|Screenshot||Pause||Quit" {
		t.Fatalf("tray menu %q", got)
	}
	a.closeMain()
	h.wait(map[string]any{"kind": "window", "window": "main", "hidden": true})

	ta.item(t, "Screenshot").Action()
	m := h.wait(map[string]any{"kind": "screenshot"})
	h.settle()
	name, _ := m["name"].(string)
	if !regexp.MustCompile(`^screenshot-\d{8}-\d{6}\.png$`).MatchString(name) {
		t.Fatalf("screenshot named %q", name)
	}
	if a.isMainHidden() {
		t.Error("the main window stayed hidden")
	}
	atts := a.chat.Attachments()
	if len(atts) != 1 || atts[0].Name != name || atts[0].Kind != "image" || atts[0].MIME != "image/png" || !bytes.Equal(atts[0].Data, shot) {
		t.Fatalf("pending attachments %+v", atts)
	}
	h.send(a.chat, "what is on my screen?")
	h.wait(map[string]any{"kind": "message", "role": "assistant", "text": "PONG: what is on my screen?"})
	var sent client.ChatRequest
	for _, r := range fake.Requests() {
		if r.Path == "/api/v1/chat" {
			if err := json.Unmarshal([]byte(r.Body), &sent); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(sent.Attachments) != 1 || sent.Attachments[0].Name != name || !bytes.Equal(sent.Attachments[0].Data, shot) {
		t.Fatalf("the message carried %+v", sent.Attachments)
	}

	capErr = errors.New("no screenshot: neither the XDG desktop portal nor an X11 display is available")
	ta.item(t, "Screenshot").Action()
	h.wait(map[string]any{"kind": "error", "text": "Could not take a screenshot: " + capErr.Error()})
	capErr = fmt.Errorf("screenshot cancelled by the user: %w", context.Canceled)
	ta.item(t, "Screenshot").Action()
	h.wait(map[string]any{"kind": "screenshot", "cancelled": true})
	h.settle()
	if n := len(a.chat.Attachments()); n != 0 {
		t.Errorf("%d attachments after a failed and a cancelled capture", n)
	}

	// The item's text is translated.
	if err := SetLanguage("zh"); err != nil {
		t.Fatal(err)
	}
	defer SetLanguage("en")
	a.tray.build()
	if got := strings.Join(ta.labels(), "|"); !strings.Contains(got, "|截屏|") {
		t.Errorf("zh tray menu %q", got)
	}
}

func TestTrayWithoutScreenshot(t *testing.T) {
	_, svc := kernel(t, true)
	h := startApp(t, Options{Service: svc, Tray: true}, true, "chat", nil)
	if got := strings.Join(h.ta.labels(), "|"); strings.Contains(got, "Screenshot") {
		t.Fatalf("tray menu %q has Screenshot without a capture function", got)
	}
}

// TestTrayScreenshotLarge: a capture over client.InlineBytes (a big screen) is streamed ahead
// as an upload, not sent as base64 inside the chat request (where the kernel's body limit
// would refuse it).
func TestTrayScreenshotLarge(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 800, 600))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	shot := buf.Bytes()
	if len(shot) <= client.InlineBytes {
		t.Fatalf("the test's capture has %d bytes, want over %d", len(shot), client.InlineBytes)
	}
	fake, svc := kernel(t, true)
	h := startApp(t, Options{Service: svc, Tray: true, Screenshot: func(context.Context) ([]byte, error) { return shot, nil }}, true, "chat", nil)
	h.ta.item(t, "Screenshot").Action()
	h.wait(map[string]any{"kind": "screenshot"})
	h.settle()
	h.send(h.a.chat, "my big screen")
	h.wait(map[string]any{"kind": "message", "role": "assistant", "text": "PONG: my big screen"})
	var sent client.ChatRequest
	for _, r := range fake.Requests() {
		if r.Path == "/api/v1/chat" {
			if err := json.Unmarshal([]byte(r.Body), &sent); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(sent.Attachments) != 1 || sent.Attachments[0].Upload == "" || len(sent.Attachments[0].Data) != 0 {
		t.Fatalf("the message carried %+v; want the screenshot as an upload", sent.Attachments)
	}
	if got, ok := fake.Uploaded(sent.Attachments[0].Upload); !ok || !bytes.Equal(got, shot) {
		t.Fatalf("uploaded %d bytes (%v), want the capture's %d", len(got), ok, len(shot))
	}
}
