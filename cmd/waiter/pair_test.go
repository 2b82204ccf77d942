package main

import (
	"bytes"
	"encoding/json"
	"image"
	_ "image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
	"github.com/hologramagent/hologram/kernel/webui"
	"github.com/hologramagent/hologram/memory/memtest"
	qrcode "github.com/skip2/go-qrcode"
)

// TestPair runs waiter pair against the real web UI handler on a unix socket (the owner's way
// in); cmd/homed's TestWebUI does it against a real homed and signs browsers in with it.
func TestPair(t *testing.T) {
	ui, err := webui.New(webui.Options{Settings: memtest.NewMem(nil), Token: "t",
		Addr: "0.0.0.0:8443", TLS: true, Fingerprint: strings.Repeat("ab", 32)})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOLOGRAM_SOCKET": clienttest.ServeUnix(t, ui)}
	png := filepath.Join(t.TempDir(), "qr.png")

	r := waiter(t, env, nil, "pair", "--host", "box.lan", "--png", png)
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	url := regexp.MustCompile(`https://box\.lan:8443/#pair=[A-Za-z0-9_-]{22}`).FindString(r.stdout)
	if url == "" || !regexp.MustCompile(`code [0-9A-Z]{4}-[0-9A-Z]{4} `).MatchString(r.stdout) ||
		!strings.Contains(r.stdout, "abab abab") || !strings.Contains(r.stdout, "expires at") {
		t.Fatalf("stdout:\n%s", r.stdout)
	}
	// The half-block QR drawn is the URL's QR code, module for module.
	qr, err := qrcode.New(url, qrcode.Medium)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	writeQR(&want, qr.Bitmap(), false)
	if !strings.HasPrefix(r.stdout, want.String()) {
		t.Errorf("the terminal QR is not the URL's:\n%s", r.stdout)
	}
	if got := readHalfBlocks(want.String()); !equalBitmaps(got, qr.Bitmap()) {
		t.Error("half blocks do not read back as the bitmap")
	}
	f, err := os.Open(png)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil || img.Bounds().Dx() != 512 {
		t.Fatalf("png: %v %v", err, img)
	}
	if st, _ := os.Stat(png); st.Mode().Perm() != 0o600 {
		t.Errorf("png mode %v", st.Mode())
	}

	r = waiter(t, env, nil, "pair", "--json")
	var p client.Pairing
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &p) != nil || p.Short == "" || p.Code == "" || p.Expires.IsZero() {
		t.Fatalf("--json: %+v", r)
	}

	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		msg  string
	}{
		{"an argument", env, []string{"pair", "x"}, 2, "usage: waiter pair"},
		{"a bad host", env, []string{"pair", "--host", "a/b"}, 1, "not a host name"},
		{"no web UI", func() map[string]string { _, e := kernel(t, false); return e }(), []string{"pair"}, 1, "serves no web UI to pair with"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := waiter(t, tc.env, nil, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
				t.Fatalf("%+v, want %d %q", r, tc.code, tc.msg)
			}
		})
	}
}

// readHalfBlocks reads writeQR's drawing back into a bitmap.
func readHalfBlocks(s string) [][]bool {
	var bm [][]bool
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		var top, bottom []bool
		for _, c := range line {
			top = append(top, c == '█' || c == '▀')
			bottom = append(bottom, c == '█' || c == '▄')
		}
		bm = append(bm, top, bottom)
	}
	return bm
}

func equalBitmaps(got, want [][]bool) bool {
	if len(got) < len(want) || len(got) > len(want)+1 {
		return false
	}
	for y := range want {
		if len(got[y]) != len(want[y]) {
			return false
		}
		for x := range want[y] {
			if got[y][x] != want[y][x] {
				return false
			}
		}
	}
	return true
}
