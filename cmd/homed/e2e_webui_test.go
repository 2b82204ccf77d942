//go:build integration

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	_ "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// TestWebUI drives the web UI (kernel/webui, docs/web.md) of a real homed answering with
// ../shared/tools/fake_openai.py, in Debian's chromium through playwright-core (pinned in
// testdata/webui, installed by `make webui-peers`), at a phone viewport (390×844) and a desktop
// one (1280×800): the sign-in page, 401 for an anonymous browser, a wrong token refused, sign-in
// with the token, the newest chat opened with its history paged (before=ID), a new chat renamed
// and deleted, a streamed reply painted while it streams, Stop, Markdown with a code block
// (escaped), an attachment (a photo picked on the phone after a video over the upload limit is
// refused before it is sent; a text file dropped on the desktop with a clip streamed ahead)
// kept with its message over a reload (and the draft), a tool call with its state, the shell plugin's approval answered inline (Deny on the
// phone, Approve on the desktop), sign-in with /#token=…, and a device revoked from
// Settings sent back to sign-in, and the LCP of a 1,000-message chat (reported); then, in the
// memory seedBigSky restored, the Memory, Star map, Plugins and Settings pages (webPages).
// Screenshots go to build/screenshots/web-*.png (docs/screenshots holds the ones looked at).
func TestWebUI(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "webui"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err != nil {
		t.Fatalf("playwright-core is not installed (%v): run `make webui-peers`", err)
	}
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Fatalf("Debian's chromium: %v (.ci/deps.sh installs it)", err)
	}
	shots := screenshotDir(t)
	fake := startFakeOpenAI(t)
	e := newEnv(t)
	// The shell plugin asks the owner before running a command: its approvals are answered in
	// the page.
	bp := filepath.Join(e.root, "builtin")
	buildBuiltins(t, bp, "shell")
	t.Setenv("HOLOGRAM_PLUGINS_DIR", bp)
	shellConf := filepath.Join(e.config, "hologram", "plugins")
	if err := os.MkdirAll(shellConf, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shellConf, "shell.toml"), []byte("[[allow]]\nprogram = \"echo\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A one-second clip the desktop run attaches (a video is streamed ahead of its message).
	clip := filepath.Join(e.root, "clip.mp4")
	if out, err := exec.Command("ffmpeg", "-y", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "color=white:s=320x240:d=1:r=5",
		"-c:v", "libx264", "-pix_fmt", "yuv420p", clip).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg (.ci/deps.sh installs it): %v: %s", err, out)
	}
	// A 2 MiB upload limit: web.mjs shows a larger video refused before it is uploaded.
	base, token := v1Homed(t, e, "[api]\nmax_upload_bytes = 2097152\n")
	seedBigSky(t, e) // the memory is empty until the chats below
	e.addProvider(fake.url, "sk-web")
	if out, errOut, code := e.waiter("", nil, "plugin", "enable", "shell"); code != 0 {
		t.Fatalf("enable shell: %d %s%s", code, out, errOut)
	}
	e.waitPlugin("shell", "running", func(p client.Plugin) bool { return p.State == "running" })

	// A chat of 1,000 messages, ingested by one /v1 request (the messages the session has not
	// seen are stored before the last is answered), whose LCP the runs measure.
	code, raw := e.postJSON("/api/v1/sessions", map[string]string{"title": "Long chat"})
	var long struct{ ID string }
	if err := json.Unmarshal(raw, &long); err != nil || code != 201 {
		t.Fatalf("create session: %d %s", code, raw)
	}
	msgs := userMsgs()
	for i := 0; i < 999; i++ {
		role := []string{"user", "assistant"}[i%2]
		msgs = append(msgs, map[string]string{"role": role, "content": fmt.Sprintf("%s message %d of the long chat: %s", role, i, strings.Repeat("words ", 20))})
	}
	if code, raw := e.postJSON("/v1/chat/completions", map[string]any{"model": "fake-1", "messages": msgs}, "X-Hologram-Session", long.ID); code != 200 {
		t.Fatalf("ingest the long chat: %d %.300s", code, raw)
	}
	if n := len(webHistory(t, e, long.ID, "limit=0").Messages); n < 1000 {
		t.Fatalf("the long chat holds %d messages", n)
	}

	// A chat with more than a page (50) of history, the newest one.
	const paged = "Paged history"
	code, raw = e.postJSON("/api/v1/sessions", map[string]string{"title": paged})
	var s struct{ ID string }
	if err := json.Unmarshal(raw, &s); err != nil || code != 201 {
		t.Fatalf("create session: %d %s", code, raw)
	}
	for i := 0; i < 30; i++ {
		if code, raw := e.postJSON("/api/v1/chat", map[string]string{"session": s.ID, "input": fmt.Sprint("earlier message ", i)}); code != 200 || !bytes.Contains(raw, []byte("event: final")) {
			t.Fatalf("seed turn %d: %d %s", i, code, raw)
		}
	}

	for _, size := range []string{"phone", "desktop"} {
		t.Run(size, func(t *testing.T) {
			start := time.Now()
			cmd := exec.Command("node", filepath.Join(dir, "web.mjs"), base, token, size, shots, paged, long.ID)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "WEB_VIDEO="+clip)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("node web.mjs %s: %v\n%s%s", size, err, stdout.String(), stderr.String())
			}
			var got map[string]any
			if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &got); err != nil {
				t.Fatalf("web.mjs: %v: %q %s", err, stdout.String(), stderr.String())
			}
			t.Logf("%s in %v: %v", size, time.Since(start).Round(time.Millisecond), got)
			if got["anonymous_status"] != float64(401) || got["revoked_status"] != float64(401) || got["tool_state"] != "ok" || got["approval"] == nil || got["attachment"] == nil {
				t.Fatalf("web.mjs measured %v", got)
			}
			if strings.Contains(fmt.Sprint(got["fragment_url"]), token) {
				t.Fatalf("the token stayed in the address bar: %v", got["fragment_url"])
			}
		})
	}
	// The attachments went the real way: stored as blocks of their messages (the clip as its
	// first keyframe and its text), the text one shown to the model.
	hist := webHistory(t, e, s.ID, "page=1&limit=500")
	names := map[string]bool{}
	for _, m := range hist.Messages {
		for _, b := range m.Blocks {
			names[b.Kind+" "+b.Name] = true
		}
	}
	if !names["image photo.png"] || !names["text notes.txt"] || !names["image clip.mp4 0:00.png"] || !names["text clip.mp4"] {
		t.Fatalf("the attachments stored: %v", names)
	}
	fake.lastRequestWith(t, "the web notes say hello")

	// Every device the runs signed in is accounted for: each run revoked its second browser.
	var devs struct {
		Devices []struct{ ID, Name string }
	}
	resp, err := e.unixHTTP().Get("http://hologram/api/v1/web/devices")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&devs); err != nil || len(devs.Devices) != 2 {
		t.Fatalf("devices left: %v %v", devs, err)
	}
	// The other pages, on the same server (e2e_webui_pages_test.go).
	t.Run("pages", func(t *testing.T) { webPages(t, e, base, token, dir, shots) })
}

// webHistory reads a session's history over the socket (query: the history route's parameters).
func webHistory(t *testing.T, e *env, id, query string) client.HistoryPage {
	t.Helper()
	resp, err := e.unixHTTP().Get("http://hologram/api/v1/sessions/" + id + "/history?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page client.HistoryPage
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != 200 {
		t.Fatalf("history %s: %d %v", id, resp.StatusCode, err)
	}
	return page
}

// TestWebUIPairing pairs browsers with a real homed as a person would: `waiter pair --json
// --png` over the socket makes the pairings (zbarimg, Debian's zbar-tools, reads each PNG's QR
// code back: it holds the link), a phone browser opens the link and is signed in, a second browser opening the same link is
// refused, and the other pairing's short code typed into "Pairing code" signs a desktop browser
// in (testdata/webui/pair.mjs).
func TestWebUIPairing(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "webui"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err != nil {
		t.Fatalf("playwright-core is not installed (%v): run `make webui-peers`", err)
	}
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Fatalf("Debian's chromium: %v (.ci/deps.sh installs it)", err)
	}
	if _, err := exec.LookPath("zbarimg"); err != nil {
		t.Fatalf("zbarimg: %v (.ci/deps.sh installs zbar-tools)", err)
	}
	shots := screenshotDir(t)
	e := newEnv(t)
	base, _ := v1Homed(t, e, "")
	pairing := func(png string) client.Pairing {
		var p client.Pairing
		e.waiterJSON(&p, "pair", "--json", "--png", png)
		if !strings.HasPrefix(p.URL, base+"/#pair="+p.Code) || len(p.Code) < 22 || len(p.Short) != 9 || time.Until(p.Expires) > 5*time.Minute || time.Until(p.Expires) < 4*time.Minute {
			t.Fatalf("pairing %+v (base %s)", p, base)
		}
		f, err := os.Open(png)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, format, err := image.Decode(f); err != nil || format != "png" {
			t.Fatalf("--png: %s %v", format, err)
		}
		// The QR code holds the link: zbar reads it back.
		zbar := exec.Command("zbarimg", "--quiet", "--raw", png)
		var zerr bytes.Buffer
		zbar.Stderr = &zerr // it also complains about D-Bus there
		out, err := zbar.Output()
		if got := strings.TrimSpace(string(out)); err != nil || got != p.URL {
			t.Fatalf("zbarimg %s: %v: %q, want %q (%s)", png, err, got, p.URL, zerr.String())
		}
		return p
	}
	link, typed := pairing(filepath.Join(e.root, "a.png")), pairing(filepath.Join(e.root, "b.png"))
	// The plain text a person reads: the URL and the short code.
	out, errOut, code := e.waiter("", nil, "pair")
	if code != 0 || !strings.Contains(out, base+"/#pair=") || !strings.Contains(out, "Pairing code") || !strings.Contains(out, "▀") {
		t.Fatalf("waiter pair: %d %s%s", code, out, errOut)
	}

	start := time.Now()
	cmd := exec.Command("node", filepath.Join(dir, "pair.mjs"), base, link.URL, typed.Short, shots)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node pair.mjs: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &got); err != nil {
		t.Fatalf("pair.mjs: %v: %q %s", err, stdout.String(), stderr.String())
	}
	t.Logf("pair.mjs in %v: %v", time.Since(start).Round(time.Millisecond), got)

	// Two devices paired, one of each way; the reused link and the wrong code made none.
	var devs struct{ Devices []struct{ ID, Name string } }
	resp, err := e.unixHTTP().Get("http://hologram/api/v1/web/devices")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&devs); err != nil || len(devs.Devices) != 2 {
		t.Fatalf("devices: %v %v", devs, err)
	}
}

// screenshotDir is build/screenshots (made when missing), where the web UI tests leave their
// screenshots to look at.
func screenshotDir(t *testing.T) string {
	t.Helper()
	shots, err := filepath.Abs(filepath.Join("..", "..", "build", "screenshots"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	return shots
}
