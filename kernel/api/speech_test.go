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
}
