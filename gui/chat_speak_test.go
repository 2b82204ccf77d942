package gui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

func TestChatSpeakButton(t *testing.T) {
	test.NewTempApp(t)
	type played struct {
		path string
		wav  []byte
	}
	plays := make(chan played, 4)
	stopped := make(chan error, 4)
	f := clienttest.New()
	vm := NewChatVM(chatKernel(t, f, true), ChatOptions{Play: func(ctx context.Context, path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		plays <- played{path, b}
		<-ctx.Done() // plays until stopped
		stopped <- ctx.Err()
		return nil
	}})
	u := chatTestView(t, vm)
	chatSend(t, vm, "read me")
	u.settle()
	user, reply := u.v.bubbles[0], u.v.bubbles[1]
	if user.speak.Visible() || !reply.speak.Visible() {
		t.Fatalf("speaker shown on the message %v, on the reply %v; want the reply's only", user.speak.Visible(), reply.speak.Visible())
	}
	wait := func(what string) string {
		t.Helper()
		select {
		case p := <-plays:
			if !strings.HasPrefix(string(p.wav), "RIFF") || len(p.wav) < 16000 {
				t.Fatalf("%s: played %d bytes, not the WAV", what, len(p.wav))
			}
			if body := chatLastBody(t, f, "/api/v1/speech"); !strings.Contains(body, `"text":"PONG: read me"`) {
				t.Fatalf("%s: the kernel was asked to speak %s", what, body)
			}
			return p.path
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: nothing played", what)
		}
		return ""
	}
	test.Tap(reply.speak)
	path := wait("first tap")
	test.Tap(reply.speak) // stops it
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("a second tap did not stop the player")
	}
	// The file is removed once the player stopped.
	deadline := time.Now().Add(30 * time.Second)
	for _, err := os.Stat(path); err == nil; _, err = os.Stat(path) {
		if time.Now().After(deadline) {
			t.Fatalf("the spoken WAV %s was left behind", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
	test.Tap(reply.speak) // plays again
	wait("third tap")
	test.Tap(reply.speak)
}

// TestPlayWAV plays through the first player on PATH (a stand-in paplay that copies what it is
// given), and says what to install when there is none.
func TestPlayWAV(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "heard.wav")
	script := "#!/bin/sh\nexec /bin/cp \"$1\" " + out + "\n"
	if err := os.WriteFile(filepath.Join(dir, "paplay"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "said.wav")
	if err := os.WriteFile(in, []byte("RIFF....WAVE"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if err := PlayWAV(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "RIFF....WAVE" {
		t.Fatalf("the player got %q, %v", b, err)
	}
	t.Setenv("PATH", t.TempDir())
	if err := PlayWAV(context.Background(), in); err == nil || !strings.Contains(err.Error(), "pulseaudio-utils") {
		t.Fatalf("no player: %v", err)
	}
}
