//go:build integration

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// TestWaiterVoiceMessage sends a voice message (espeak-ng speech encoded by ffmpeg as Ogg/Opus)
// with no text: without a speech model the turn says how to get one and the audio is kept;
// after `waiter model import whisper-base` of the Whisper-shaped test model (memory/stt's
// testdata/gen.py: designed weights, so this checks the plumbing, not accuracy) the transcript
// is the message the model gets, the audio block holds it, and memory search finds it.
func TestWaiterVoiceMessage(t *testing.T) {
	for _, asset := range []string{"../../build/onnxruntime/libonnxruntime.so.1", "../../build/models/vad/silero_vad_v5.onnx"} {
		if _, err := os.Stat(asset); err != nil {
			needVoiceAsset(t, "run `make assets`", err)
		}
	}
	for _, tool := range []string{"espeak-ng", "ffmpeg", "/usr/bin/python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			needVoiceAsset(t, "run `make deps`", err)
		}
	}
	e := graphEnv(t)
	fake := llmtest.NewServer(t)
	e.start()
	e.addProvider(fake.URL(), "k")

	wav, voice := filepath.Join(e.root, "said.wav"), filepath.Join(e.root, "voice.ogg")
	if out, err := exec.Command("espeak-ng", "-v", "en", "-w", wav, "remember that the spare key is under the blue pot").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	if out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", wav, "-af", "adelay=1000", "-c:a", "libopus", voice).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}

	_, errOut, code := e.waiter("", nil, "ask", "--attach", voice)
	if code != 0 || !strings.Contains(errOut, "note: voice.ogg was not transcribed: no speech-to-text model is installed") ||
		!strings.Contains(errOut, "waiter model install whisper-base") {
		t.Fatalf("ask without a speech model: exit %d, stderr %q; want the note and how to get one", code, errOut)
	}

	model := filepath.Join(e.root, "whisper")
	if out, err := exec.Command("/usr/bin/python3", "../../memory/stt/testdata/gen.py", "whisper", "--dir", model).CombinedOutput(); err != nil {
		t.Fatalf("gen.py: %v %s", err, out)
	}
	if out, errOut, code := e.waiter("", nil, "model", "import", "whisper-base", model); code != 0 {
		t.Fatalf("model import: exit %d: %s %s", code, out, errOut)
	}
	if _, errOut, code := e.waiter("", nil, "model", "use", "whisper-base"); code == 0 || !strings.Contains(errOut, "speech-to-text model") {
		t.Fatalf("model use of a speech model: exit %d, %q; want a refusal that says why", code, errOut)
	}
	_, errOut, code = e.waiter("", nil, "ask", "--attach", voice)
	if code != 0 || strings.Contains(errOut, "note:") || !strings.Contains(errOut, "heard: Hello, world 你好") {
		t.Fatalf("ask with a speech model: exit %d, stderr %q", code, errOut)
	}
	reqs := fake.Requests()
	msgs := reqs[len(reqs)-1].Messages
	u := msgs[len(msgs)-1].Content
	const said = "Hello, world 你好" // what the designed test model always says
	if !strings.HasPrefix(u, said+"\n\n[attached audio \"voice.ogg\", audio/ogg") || !strings.HasSuffix(u, "bytes: the message above is its transcript]") {
		t.Fatalf("the model got %q; want the transcript as the message, then the audio block", u)
	}
	var hist []client.Message
	e.waiterJSON(&hist, "history", "--json")
	var first, second client.Message
	for _, m := range hist {
		if m.Role == "user" && len(m.Blocks) == 1 {
			if first.ID == 0 {
				first = m
			} else {
				second = m
			}
		}
	}
	if first.Blocks[0].Text != "" || !strings.Contains(first.Content, "could not be transcribed") || second.Blocks[0].Text != said || second.Content != said {
		t.Fatalf("history %+v; want the untranscribed message kept with its audio, then the transcribed one", hist)
	}
	var hits []client.MemoryHit
	e.waiterJSON(&hits, "memory", "search", "--json", "hello world")
	found := false
	for _, h := range hits {
		found = found || h.ID == second.ID
	}
	if !found {
		t.Fatalf("memory search for the transcript = %+v; want message %d", hits, second.ID)
	}
}

func needVoiceAsset(t *testing.T, how string, err error) {
	t.Helper()
	if os.Getenv("HOLOGRAM_CI") == "1" {
		t.Fatalf("%v: %s", err, how)
	}
	t.Skipf("%v: %s", err, how)
}

// TestWebUIVoice records voice messages with the web UI's microphone button in chromium (its
// fake microphone plays an espeak-ng utterance; testdata/webui/voice.mjs): MediaRecorder's
// WebM/Opus goes up as an audio attachment with no text. Without a speech model the chat shows
// the kernel's note; with the Whisper-shaped test model the recording, decoded by ffmpeg and cut
// by the VAD, is transcribed into the message the model gets.
func TestWebUIVoice(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "webui"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err != nil {
		t.Fatalf("playwright-core is not installed (%v): run `make webui-peers`", err)
	}
	for _, tool := range []string{"/usr/bin/chromium", "espeak-ng", "sox", "ffmpeg", "/usr/bin/python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			needVoiceAsset(t, "run `make deps`", err)
		}
	}
	if _, err := os.Stat("../../build/models/vad/silero_vad_v5.onnx"); err != nil {
		needVoiceAsset(t, "run `make assets`", err)
	}
	shots := screenshotDir(t)
	e := newEnv(t)
	fake := llmtest.NewServer(t)
	base, token := v1Homed(t, e, "")
	e.addProvider(fake.URL(), "k")
	raw, wav := filepath.Join(e.root, "raw.wav"), filepath.Join(e.root, "mic.wav")
	if out, err := exec.Command("espeak-ng", "-v", "en", "-w", raw, "please water the plants on friday").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	if out, err := exec.Command("sox", raw, "-r", "48000", "-b", "16", wav, "pad", "0.3", "2").CombinedOutput(); err != nil {
		t.Fatalf("sox: %v %s", err, out)
	}
	record := func(shot string) (out struct {
		Recording string
		Notes     []string
		Pressed   string
		Said      string
	}) {
		t.Helper()
		cmd := exec.Command("node", filepath.Join(dir, "voice.mjs"), base, token, wav, filepath.Join(shots, shot))
		cmd.Dir = dir
		b, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("node voice.mjs: %v\n%s%s", err, b, stderr)
		}
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("voice.mjs: %v: %q", err, b)
		}
		t.Logf("voice.mjs: %+v", out)
		if !strings.HasPrefix(out.Recording, "voice-") || !strings.Contains(out.Recording, ".webm") || out.Pressed != "false" {
			t.Fatalf("recorded %+v; want a WebM voice message, the button released", out)
		}
		return out
	}
	if out := record("web-voice-nomodel.png"); len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "not transcribed: no speech-to-text model is installed") {
		t.Fatalf("without a speech model the chat notes %q", out.Notes)
	}
	model := filepath.Join(e.root, "whisper")
	if out, err := exec.Command("/usr/bin/python3", "../../memory/stt/testdata/gen.py", "whisper", "--dir", model).CombinedOutput(); err != nil {
		t.Fatalf("gen.py: %v %s", err, out)
	}
	if out, errOut, code := e.waiter("", nil, "model", "import", "whisper-base", model); code != 0 {
		t.Fatalf("model import: exit %d: %s %s", code, out, errOut)
	}
	if out := record("web-voice.png"); len(out.Notes) != 0 || out.Said != "Hello, world 你好" {
		t.Fatalf("with a speech model the chat notes %q and the message shows %q; want no note and the transcript", out.Notes, out.Said)
	}
	reqs := fake.Requests()
	msgs := reqs[len(reqs)-1].Messages
	if u := msgs[len(msgs)-1].Content; !strings.HasPrefix(u, "Hello, world 你好\n\n[attached audio \"voice-") || !strings.Contains(u, "audio/webm") {
		t.Fatalf("the model got %q; want the transcript of the recording as the message", u)
	}
}
