package api

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSpeechRoute(t *testing.T) {
	missing := New(&fakeBackend{}, Options{})
	missing.speech.Command = filepath.Join(t.TempDir(), "espeak-ng")
	off := serveUnix(t, missing, "")
	if resp, body := off.do(t, "POST", "/api/v1/speech", `{"text":"hello"}`, nil); resp.StatusCode != 503 || !strings.Contains(body, "apt install espeak-ng") {
		t.Fatalf("without espeak-ng: %d %s", resp.StatusCode, body)
	}

	on := New(&fakeBackend{}, Options{})
	on.speech.Getenv = func(string) string { return "" } // English for Latin text, whatever the test's locale
	sv := serveUnix(t, on, "")
	bad := []struct {
		body   string
		status int
		want   string
	}{
		{`{"text":""}`, 400, "no text"},
		{`{"text":"hi","voice":"../x"}`, 400, "voice must be"},
		{`{"text":"` + strings.Repeat("a", 10_001) + `"}`, 413, "over 10000"},
		{`{"txt":"hi"}`, 400, "unknown field"},
		{`{"text":"hi","format":"mp3"}`, 400, "format must be wav or ogg"},
	}
	for _, tt := range bad {
		resp, body := sv.do(t, "POST", "/api/v1/speech", tt.body, nil)
		if resp.StatusCode != tt.status || !strings.Contains(body, tt.want) || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%.40s: %d %s %.200s, want %d with %q", tt.body, resp.StatusCode, resp.Header.Get("Content-Type"), body, tt.status, tt.want)
		}
	}

	if _, err := exec.LookPath("espeak-ng"); err != nil {
		if os.Getenv("HOLOGRAM_CI") == "1" {
			t.Fatal("espeak-ng is not installed (.ci/deps.sh installs it)")
		}
		t.Skip("espeak-ng is not installed")
	}
	for _, tt := range []struct{ body, voice string }{
		{`{"text":"Hello there."}`, "en"},
		{`{"text":"你好。"}`, "cmn"},
		{`{"text":"Hello there.","voice":"nope-voice"}`, "en"}, // an unknown voice falls back
	} {
		resp, body := sv.do(t, "POST", "/api/v1/speech", tt.body, nil)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/wav" || !strings.HasPrefix(body, "RIFF") || len(body) < 8000 {
			t.Fatalf("%s: %d %s, %d bytes", tt.body, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
		if got := resp.Header.Get("X-Hologram-Voice"); got != tt.voice {
			t.Errorf("%s: voice %q, want %q", tt.body, got, tt.voice)
		}
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		if os.Getenv("HOLOGRAM_CI") == "1" {
			t.Fatal("ffmpeg is not installed (.ci/deps.sh installs it)")
		}
		t.Skip("ffmpeg is not installed")
	}
	// Ogg/Opus, asked by the format field or by the Accept header; WAV stays the default.
	for _, tt := range []struct {
		body, accept, ctype, magic string
	}{
		{`{"text":"Hello there.","format":"ogg"}`, "", "audio/ogg", "OggS"},
		{`{"text":"Hello there."}`, "audio/ogg, audio/wav", "audio/ogg", "OggS"},
		{`{"text":"Hello there."}`, "audio/wav, audio/ogg", "audio/wav", "RIFF"},
		{`{"text":"Hello there."}`, "audio/ogg;q=0, */*", "audio/wav", "RIFF"},
		{`{"text":"你好。","format":"wav"}`, "audio/ogg", "audio/wav", "RIFF"},
	} {
		resp, body := sv.do(t, "POST", "/api/v1/speech", tt.body, map[string]string{"Accept": tt.accept})
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != tt.ctype || !strings.HasPrefix(body, tt.magic) || len(body) < 1000 {
			t.Errorf("%s Accept %q: %d %s, %d bytes starting %q", tt.body, tt.accept, resp.StatusCode, resp.Header.Get("Content-Type"), len(body), body[:min(len(body), 4)])
		}
	}
	noFF := New(&fakeBackend{}, Options{})
	noFF.speech.FFmpeg = filepath.Join(t.TempDir(), "ffmpeg")
	sv2 := serveUnix(t, noFF, "")
	if resp, body := sv2.do(t, "POST", "/api/v1/speech", `{"text":"hi","format":"ogg"}`, nil); resp.StatusCode != 503 || !strings.Contains(body, "apt install ffmpeg") {
		t.Errorf("ogg without ffmpeg: %d %s", resp.StatusCode, body)
	}
}
