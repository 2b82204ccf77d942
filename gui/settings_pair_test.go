package gui

import (
	"bytes"
	"image"
	_ "image/png"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
	"github.com/hologramagent/hologram/kernel/webui"
	"github.com/hologramagent/hologram/memory/memtest"
	qrcode "github.com/skip2/go-qrcode"
)

// TestSettingsPair: with a kernel that serves the web UI (the real kernel/webui handler beside
// the fake kernel, through the real HTTP client), Settings shows "Pair a phone"; the button
// shows the QR code of the pairing's link (the image is that URL's QR PNG), the link and the
// short code. A kernel without a TCP listener (the fake alone) shows no such card.
func TestSettingsPair(t *testing.T) {
	ui, err := webui.New(webui.Options{Settings: memtest.NewMem(nil), Token: "t",
		Addr: "192.168.1.20:8443", TLS: true, Fingerprint: strings.Repeat("cd", 32)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/v1/web/", ui)
	mux.Handle("/", clienttest.New())
	c, err := client.Dial(client.Options{Socket: clienttest.ServeUnix(t, mux)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := newSettingsRig(t, c, nil, "")
	w := settingsWindow(t, r)
	if !uiHasText(w, "one QR code, valid once for 5 minutes") {
		t.Fatalf("no pairing card: %q", uiTexts(w))
	}
	if img := pairImage(w); img != nil {
		t.Fatal("a QR code before any pairing")
	}
	test.Tap(uiButton(t, w, "Pair a phone"))
	r.vm.Wait()
	url := uiGet[string](t, r.vm.Pair.URL)
	if !regexp.MustCompile(`^https://192\.168\.1\.20:8443/#pair=[A-Za-z0-9_-]{22}$`).MatchString(url) || !uiHasText(w, url) {
		t.Fatalf("url %q; texts %q", url, uiTexts(w))
	}
	short := uiGet[string](t, r.vm.Pair.Short)
	if !regexp.MustCompile(`^[0-9A-Z]{4}-[0-9A-Z]{4}$`).MatchString(short) || !uiHasText(w, short) || !uiHasText(w, "cdcdcd") {
		t.Fatalf("short %q; texts %q", short, uiTexts(w))
	}
	img := pairImage(w)
	if img == nil || img.Resource == nil {
		t.Fatal("no QR image shown")
	}
	want, _ := qrcode.Encode(url, qrcode.Medium, 512)
	if !bytes.Equal(img.Resource.Content(), want) {
		t.Error("the image is not the link's QR code")
	}
	if m, _, err := image.Decode(bytes.NewReader(img.Resource.Content())); err != nil || m.Bounds().Dx() != 512 {
		t.Errorf("png: %v", err)
	}

	// The fake kernel alone (no TCP listener, no web UI): no card.
	_, plain := uiKernel(t)
	r2 := newSettingsRig(t, plain, nil, "")
	w2 := settingsWindow(t, r2)
	if uiHasText(w2, "one QR code") || len(uiButtons(w2, "Pair a phone")) != 0 {
		t.Fatalf("a pairing card without a web UI: %q", uiTexts(w2))
	}
}

// pairImage is the visible QR image of the pairing card, or nil.
func pairImage(w fyne.Window) *canvas.Image {
	var found *canvas.Image
	uiWalk(w.Content(), func(o fyne.CanvasObject) {
		if i, ok := o.(*canvas.Image); ok && i.Resource != nil && i.Resource.Name() == "pairing.png" {
			found = i
		}
	})
	return found
}
