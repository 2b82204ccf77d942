package gui

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// testWAV is secs of a 440 Hz tone as a 16 kHz mono 16-bit WAV.
func testWAV(secs float64) []byte {
	n := int(secs * 16000)
	b := make([]byte, 44+2*n)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+2*n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], 16000)
	binary.LittleEndian.PutUint32(b[28:], 32000)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(2*n))
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint16(b[44+2*i:], uint16(int16(8000*math.Sin(2*math.Pi*440*float64(i)/16000))))
	}
	return b
}

// TestChatMicButton: Talk records until tapped again; the recording is sent at once as a WAV
// voice message when the input is empty, or waits as an attachment beside typed text; a missing
// recorder or a silent microphone is said in a dialog and leaves the button ready again.
func TestChatMicButton(t *testing.T) {
	test.NewTempApp(t)
	var recordings = make(chan string, 4)
	tests := []struct {
		name    string
		record  func(ctx context.Context, path string) error
		text    string
		sent    bool   // the voice message went at once
		pending int    // attachments waiting afterwards
		dialog  string // an error dialog saying this
	}{
		{"alone", recordTone(recordings, 1.5), "", true, 0, ""},
		{"beside text", recordTone(recordings, 0.8), "and this too", false, 1, ""},
		{"no recorder", func(context.Context, string) error { return errNoRecorder }, "", false, 0, "pulseaudio-utils (parec)"},
		{"silence", recordTone(recordings, 0.01), "", false, 0, "Nothing was recorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := clienttest.New()
			vm := NewChatVM(chatKernel(t, f, true), ChatOptions{Record: tt.record})
			u := chatTestView(t, vm)
			if tt.text != "" {
				test.Type(u.v.input, tt.text)
			}
			test.Tap(u.v.mic)
			if !u.v.Recording() || u.v.mic.Text != T("Stop and send") {
				t.Fatalf("after the first tap: recording %v, button %q", u.v.Recording(), u.v.mic.Text)
			}
			test.Tap(u.v.mic)
			u.until(func() bool { return !u.v.Recording() })
			u.settle()
			if u.v.mic.Text != T("Talk") {
				t.Errorf("button %q after the recording", u.v.mic.Text)
			}
			var sent []client.ChatRequest
			for _, r := range f.Requests() {
				if r.Path == "/api/v1/chat" {
					var req client.ChatRequest
					if err := json.Unmarshal([]byte(r.Body), &req); err != nil {
						t.Fatal(err)
					}
					sent = append(sent, req)
				}
			}
			if tt.sent != (len(sent) == 1) {
				t.Fatalf("%d turns sent, want sent=%v", len(sent), tt.sent)
			}
			if tt.sent {
				a := sent[0].Attachments
				if sent[0].Input != "" || len(a) != 1 || a[0].Kind != "audio" || a[0].MIME != "audio/wav" || !strings.HasPrefix(a[0].Name, "voice-") || string(a[0].Data[:4]) != "RIFF" {
					t.Fatalf("sent %q with %+v", sent[0].Input, a)
				}
			}
			if got := len(vm.Attachments()); got != tt.pending {
				t.Errorf("%d attachments pending, want %d", got, tt.pending)
			}
			texts := strings.Join(uiTexts(u.w), "\n")
			if tt.dialog != "" && !strings.Contains(texts, tt.dialog) {
				t.Errorf("no dialog saying %q in:\n%s", tt.dialog, texts)
			}
			if tt.dialog == "" && len(u.w.Canvas().Overlays().List()) > 0 {
				t.Errorf("a dialog:\n%s", texts)
			}
			for len(recordings) > 0 {
				if p := <-recordings; fileExists(p) {
					t.Errorf("the recording %s was left behind", p)
				}
			}
		})
	}
}

// recordTone is a recorder that writes secs of tone to its file when stopped and reports the
// path on paths.
func recordTone(paths chan<- string, secs float64) func(ctx context.Context, path string) error {
	return func(ctx context.Context, path string) error {
		<-ctx.Done()
		paths <- path
		return os.WriteFile(path, testWAV(secs), 0o600)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return !errors.Is(err, os.ErrNotExist)
}

// TestChatVoiceTranscript: the kernel's transcript of a voice message replaces the attachment's
// name in the message shown.
func TestChatVoiceTranscript(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	f.Chat = func(ctx context.Context, req client.ChatRequest, turnID string, send func(client.ChatEvent)) {
		send(client.ChatEvent{Type: client.EventTranscript, TurnID: turnID, Session: req.Session, Text: "water the plants on Friday"})
		send(client.ChatEvent{Type: client.EventFinal, TurnID: turnID, Session: req.Session, Text: "I will remind you."})
	}
	vm := NewChatVM(chatKernel(t, f, true), ChatOptions{Record: recordTone(make(chan string, 1), 1)})
	u := chatTestView(t, vm)
	test.Tap(u.v.mic)
	test.Tap(u.v.mic)
	u.until(func() bool { return !u.v.Recording() })
	u.settle()
	if m, _ := vm.Message(0); m.Role != ChatRoleUser || m.Text != "water the plants on Friday" || len(m.Attachments) != 1 {
		t.Fatalf("the voice message shows %q with %d attachments", m.Text, len(m.Attachments))
	}
	if m, _ := vm.Message(1); m.Text != "I will remind you." {
		t.Errorf("reply %q", m.Text)
	}
	if got := u.v.bubbles[0].rich.String(); !strings.Contains(got, "water the plants on Friday") {
		t.Errorf("the message's bubble shows %q, not the transcript", got)
	}
}
