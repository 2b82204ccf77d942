//go:build integration

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// TestWaiterVideo: a video sent with `waiter ask --attach` is read by its keyframes: a clip of
// three slides (drawn by ffmpeg, 3 s each) gives three keyframes, OCR reads each slide's words,
// the model sees them with the message, and memory search finds the message by each slide's
// words. The video is streamed ahead of the message (POST /api/v1/uploads), not sent as base64
// JSON, and deleted once read; a file over the kernel's upload limit (api.max_upload_bytes) is
// refused by waiter before anything is sent, and by the kernel before it reads the body.
func TestWaiterVideo(t *testing.T) {
	for _, asset := range []string{"../../build/onnxruntime/libonnxruntime.so.1", "../../build/models/ocr/ppocr_keys_v1.txt"} {
		if _, err := os.Stat(asset); err != nil {
			needVoiceAsset(t, "run `make assets`", err)
		}
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		needVoiceAsset(t, "run `make deps`", err)
	}
	const font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
	slides := []string{"Budget review for Orion", "Hire two engineers", "Launch in October"}
	e := graphEnv(t)
	const limit = 8 << 20
	conf := filepath.Join(e.config, "hologram", "config.toml")
	if err := os.WriteFile(conf, append(must(os.ReadFile(conf)), fmt.Sprintf("[api]\nmax_upload_bytes = %d\n", limit)...), 0o600); err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewServer(t)
	e.start()
	// A model that takes images: the keyframes go to it as images too, beside their text.
	if out, errOut, code := e.waiter("", []string{"HOLOGRAM_API_KEY=k"}, "provider", "add", "fake", "--base-url", fake.URL(), "--model", "fake-1", "--vision", "yes"); code != 0 {
		t.Fatalf("provider add: exit %d\n%s%s", code, out, errOut)
	}
	var vf []string
	for i, s := range slides {
		vf = append(vf, "drawtext=fontfile="+font+":fontsize=44:fontcolor=black:x=60:y=200:text='"+s+"'"+
			":enable='between(t\\,"+string(rune('0'+3*i))+"\\,"+string(rune('0'+3*i+3))+"-0.001)'")
	}
	clip := filepath.Join(e.root, "meeting.mp4")
	if out, err := exec.Command("ffmpeg", "-y", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "color=white:s=960x540:d=9:r=10",
		"-f", "lavfi", "-i", "sine=frequency=330:d=9", "-vf", strings.Join(vf, ","), "-c:v", "libx264", "-pix_fmt", "yuv420p",
		"-c:a", "aac", "-shortest", clip).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	_, errOut, code := e.waiter("", nil, "ask", "--attach", clip, "notes from today's meeting")
	if code != 0 {
		t.Fatalf("ask --attach meeting.mp4: exit %d: %s", code, errOut)
	}
	// Its sound is kept for speech recognition; without a speech model the owner is told.
	if !strings.Contains(errOut, "note: meeting.mp4 sound.ogg was not transcribed") {
		t.Errorf("stderr %q: want the note that the video's sound was not transcribed", errOut)
	}
	reqs := fake.Requests()
	msgs := reqs[len(reqs)-1].Messages
	u := msgs[len(msgs)-1].Content
	for i, s := range slides {
		frame := `[attached image "meeting.mp4 0:0` + string(rune('0'+3*i)) + `.png", image/png`
		// OCR may split a word ("Lau nch"): the slide's letters in order are what counts.
		if !strings.Contains(u, frame) || !strings.Contains(strings.ReplaceAll(u, " ", ""), strings.ReplaceAll(s, " ", "")) {
			t.Errorf("the model got %q; want keyframe %d (%s) with its text %q", u, i+1, frame, s)
		}
	}
	if imgs := msgs[len(msgs)-1].Images; len(imgs) != 3 {
		t.Errorf("the vision model got %d images with the message, want the 3 keyframes", len(imgs))
	} else {
		for i, im := range imgs {
			if im.MIME != "image/png" || len(im.Data) < 1000 {
				t.Errorf("image %d: %s, %d bytes; want a PNG keyframe", i, im.MIME, len(im.Data))
			}
		}
	}
	if !strings.Contains(u, "3 keyframes, at 0:00, 0:03, 0:06; its sound is kept as Ogg/Opus") {
		t.Errorf("the model got %q; want the video's description", u)
	}
	var hist []client.Message
	e.waiterJSON(&hist, "history", "--json")
	if len(hist) == 0 || len(hist[0].Blocks) != 5 {
		t.Fatalf("history = %+v; want the message with the video's description, three keyframes and its sound", hist)
	}
	if s := hist[0].Blocks[4]; s.Kind != "audio" || s.MIME != "audio/ogg" || s.Name != "meeting.mp4 sound.ogg" {
		t.Errorf("the last block is %s %s %q; want the video's sound as Ogg/Opus", s.Kind, s.MIME, s.Name)
	}
	for _, q := range []string{"Orion budget", "hire engineers", "October"} {
		var hits []client.MemoryHit
		e.waiterJSON(&hits, "memory", "search", "--json", q)
		found := false
		for _, h := range hits {
			found = found || h.ID == hist[0].ID
		}
		if !found {
			t.Errorf("memory search %q = %+v; want the message that carried the video", q, hits)
		}
	}

	if left, _ := os.ReadDir(filepath.Join(e.data, "uploads")); len(left) != 0 {
		t.Errorf("the upload was kept after its message: %v", left)
	}

	// Over the limit: a file that starts as an MP4 and is one byte too long (sparse).
	big := filepath.Join(e.root, "holiday.mp4")
	head, err := os.ReadFile(clip)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, head[:512], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, limit+1); err != nil {
		t.Fatal(err)
	}
	before := len(fake.Requests())
	if _, errOut, code := e.waiter("", nil, "ask", "--attach", big, "our holiday"); code == 0 || !strings.Contains(errOut, "more than the kernel's upload limit (8 MiB") {
		t.Errorf("a video over the limit: exit %d: %s", code, errOut)
	}
	if n := len(fake.Requests()); n != before {
		t.Errorf("the model was asked %d times for a refused video", n-before)
	}
	// The kernel refuses it from its length, before reading it: the body is never sent.
	c, err := client.Dial(client.Options{Socket: e.sock})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(big)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := &countReader{r: f}
	if _, err := c.Upload(context.Background(), client.UploadRequest{Name: "holiday.mp4", Size: limit + 1}, cr); !errors.Is(err, client.ErrTooLarge) || !strings.Contains(err.Error(), "more than the upload limit (8 MiB") {
		t.Errorf("upload over the limit: %v", err)
	}
	if cr.n > 0 {
		t.Errorf("%d bytes of a refused upload were sent", cr.n)
	}
	if left, _ := os.ReadDir(filepath.Join(e.data, "uploads")); len(left) != 0 {
		t.Errorf("refused uploads left %v", left)
	}
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
