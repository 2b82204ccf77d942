//go:build integration

package gui

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// uiPulse starts a private PulseAudio server whose default microphone is a pipe (the returned
// FIFO: raw 16 kHz mono 16-bit samples written to it are what the microphone hears) and points
// this test's recorders at it.
func uiPulse(t *testing.T) (fifo string) {
	t.Helper()
	for _, bin := range []string{"pulseaudio", "parec"} {
		if _, err := exec.LookPath(bin); err != nil {
			uiNeed(t, "apt install pulseaudio pulseaudio-utils", err)
		}
	}
	dir, err := os.MkdirTemp("", "pa") // short: a socket path has at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o700); err != nil {
		t.Fatal(err)
	}
	fifo, sock := filepath.Join(dir, "mic"), filepath.Join(dir, "pa.sock")
	t.Setenv("HOME", dir)
	t.Setenv("XDG_RUNTIME_DIR", run)
	t.Setenv("PULSE_SERVER", "unix:"+sock)
	cmd := exec.Command("pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
		"--disable-shm", "-L", "module-native-protocol-unix socket="+sock+" auth-anonymous=1",
		"-L", "module-pipe-source source_name=mic file="+fifo+" format=s16le rate=16000 channels=1",
		"-L", "module-null-sink")
	var log limitedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if exec.Command("pactl", "info").Run() == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pulseaudio did not start: %s", log.String())
		}
	}
	return fifo
}

// TestChatMicRecordsMicrophone: the Talk button records the default microphone through the real
// recorder (parec, against a PulseAudio server whose microphone plays a tone) and sends what it
// heard as a WAV voice message.
func TestChatMicRecordsMicrophone(t *testing.T) {
	fifo := uiPulse(t)
	test.NewTempApp(t)
	f := clienttest.New()
	vm := NewChatVM(chatKernel(t, f, true), ChatOptions{})
	u := chatTestView(t, vm)
	test.Tap(u.v.mic)
	if !u.v.Recording() {
		t.Fatal("not recording")
	}
	tone := testWAV(1.5)[44:]
	time.Sleep(300 * time.Millisecond) // parec connects
	mic, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mic.Write(tone); err != nil {
		t.Fatal(err)
	}
	mic.Close()
	time.Sleep(2 * time.Second) // the microphone's 1.5 s pass in real time
	test.Tap(u.v.mic)
	u.until(func() bool { return !u.v.Recording() })
	u.settle()
	if n := len(u.w.Canvas().Overlays().List()); n > 0 {
		t.Fatalf("a dialog: %s", strings.Join(uiTexts(u.w), "\n"))
	}
	var req client.ChatRequest
	if err := json.Unmarshal([]byte(chatLastBody(t, f, "/api/v1/chat")), &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Attachments) != 1 || req.Attachments[0].MIME != "audio/wav" {
		t.Fatalf("sent %+v", req.Attachments)
	}
	wav := req.Attachments[0].Data
	if len(wav) < 44 || string(wav[:4]) != "RIFF" || string(wav[8:12]) != "WAVE" {
		t.Fatalf("not a WAV: % x", wav[:min(len(wav), 44)])
	}
	if rate, ch := binary.LittleEndian.Uint32(wav[24:]), binary.LittleEndian.Uint16(wav[22:]); rate != 16000 || ch != 1 {
		t.Errorf("%d Hz, %d channels; want 16 kHz mono", rate, ch)
	}
	pcm := wav[44:]
	var sum float64
	for i := 0; i+1 < len(pcm); i += 2 {
		v := float64(int16(binary.LittleEndian.Uint16(pcm[i:]))) / 32768
		sum += v * v
	}
	secs := float64(len(pcm)/2) / 16000
	var loud float64
	if len(pcm) > 1 {
		loud = sum / float64(len(pcm)/2) * secs // energy: independent of silence recorded around the tone
	}
	t.Logf("recorded %.2f s, energy %.3f (the tone: 1.5 s, %.3f)", secs, loud, 1.5*0.5*math.Pow(8000.0/32768, 2))
	if secs < 1.4 || secs > 10 {
		t.Errorf("recorded %.2f s of a 1.5 s tone", secs)
	}
	if want := 1.5 * 0.5 * math.Pow(8000.0/32768, 2); math.Abs(loud-want) > 0.2*want {
		t.Errorf("energy %.4f, the tone's %.4f: not what the microphone heard", loud, want)
	}
}

// TestPlayWAVThroughPulse: a reply read aloud reaches the sound server: PlayWAV plays a tone with
// the real player (paplay) into a private PulseAudio server's null speaker, whose monitor parec
// records.
func TestPlayWAVThroughPulse(t *testing.T) {
	uiPulse(t)
	dir := t.TempDir()
	in, heard := filepath.Join(dir, "reply.wav"), filepath.Join(dir, "heard.raw")
	if err := os.WriteFile(in, testWAV(1), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(heard)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	rec := exec.Command("parec", "-d", "null.monitor", "--rate=16000", "--channels=1", "--format=s16le", "--raw", "--latency-msec=50")
	rec.Stdout = out
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { rec.Process.Kill(); rec.Wait() }()
	time.Sleep(300 * time.Millisecond)
	if err := PlayWAV(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	rec.Process.Signal(syscall.SIGINT) // parec writes what it holds and ends
	rec.Wait()
	pcm, err := os.ReadFile(heard)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for i := 0; i+1 < len(pcm); i += 2 {
		v := float64(int16(binary.LittleEndian.Uint16(pcm[i:]))) / 32768
		sum += v * v
	}
	energy, want := sum/16000, 0.5*math.Pow(8000.0/32768, 2) // a second of the tone
	t.Logf("the speaker's monitor: %.2f s recorded, energy %.4f (the tone's %.4f)", float64(len(pcm)/2)/16000, energy, want)
	if energy < 0.5*want {
		t.Errorf("energy %.4f: the tone did not reach the speaker", energy)
	}
}
