package gui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// A voice message from the microphone: the Talk button (in the main chat and in quick chat)
// starts recording with the desktop's recorder (ChatOptions.Record: [RecordWAV]); a second tap
// stops it. The recording is attached as a WAV file and, when the input holds no text, sent at
// once: the kernel transcribes it (memory/stt) and the transcript becomes the message.

// MaxRecording bounds one recording; at the bound it stops as if the button had been tapped.
const MaxRecording = 5 * time.Minute

// recorders are the recorders tried in order: PulseAudio's (also PipeWire's pulse server),
// PipeWire's own, ALSA's. Each records 16 kHz mono 16-bit (what speech recognition reads) into
// the WAV file named last and finishes the file's header when interrupted.
var recorders = [][]string{
	{"parec", "--rate=16000", "--channels=1", "--format=s16le", "--file-format=wav"},
	{"pw-record", "--rate", "16000", "--channels", "1", "--format", "s16"},
	{"arecord", "-q", "-f", "S16_LE", "-r", "16000", "-c", "1", "-t", "wav"},
}

// errNoRecorder says how to get a recorder.
var errNoRecorder = errors.New(T("no audio recorder: install pulseaudio-utils (parec), pipewire-bin (pw-record) or alsa-utils (arecord)"))

// RecordWAV records the default microphone into a new WAV file at path with the first of parec,
// pw-record and arecord on PATH, until ctx is done (a cancel is the normal end: the recorder is
// interrupted, finishes the file, and RecordWAV returns nil).
func RecordWAV(ctx context.Context, path string) error {
	for _, r := range recorders {
		bin, err := exec.LookPath(r[0])
		if err != nil {
			continue
		}
		cmd := exec.Command(bin, append(r[1:], path)...)
		var out limitedBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("%s: %w", r[0], err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done: // it stopped by itself: no microphone, no sound server
			return fmt.Errorf("%s: %v: %s", r[0], err, clip(out.String(), 300))
		case <-ctx.Done():
		}
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		return nil
	}
	return errNoRecorder
}

// limitedBuffer keeps the first 4 KiB of a recorder's messages.
type limitedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := 4096 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// chatRecording is the recording in progress, if any.
type chatRecording struct {
	mu     sync.Mutex
	cancel context.CancelFunc // nil: not recording
}

// Recording reports whether the microphone is recording.
func (v *chatView) Recording() bool {
	v.rec.mu.Lock()
	defer v.rec.mu.Unlock()
	return v.rec.cancel != nil
}

// newMicButton makes the Talk button.
func (v *chatView) newMicButton() *widget.Button {
	return widget.NewButtonWithIcon(T("Talk"), theme.MediaRecordIcon(), v.toggleMic)
}

// toggleMic starts recording, or stops the recording in progress (which then attaches and sends
// it). UI goroutine.
func (v *chatView) toggleMic() {
	v.rec.mu.Lock()
	if v.rec.cancel != nil {
		v.rec.cancel()
		v.rec.mu.Unlock()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), MaxRecording)
	v.rec.cancel = cancel
	v.rec.mu.Unlock()
	v.mic.SetText(T("Stop and send"))
	v.mic.SetIcon(theme.MediaStopIcon())
	v.mic.Importance = widget.DangerImportance
	v.mic.Refresh()
	record := v.vm.opts.Record
	if record == nil {
		record = RecordWAV
	}
	started := time.Now()
	v.vm.trace("microphone", map[string]any{"state": "recording"})
	go func() {
		defer cancel()
		dir, err := os.MkdirTemp("", "hologram-voice-*")
		var data []byte
		if err == nil {
			path := filepath.Join(dir, "voice.wav")
			err = record(ctx, path)
			if err == nil {
				data, err = os.ReadFile(path)
			}
			os.RemoveAll(dir)
		}
		if err == nil && len(data) <= 44+3200 { // a header and under 0.1 s of sound
			err = errors.New(T("Nothing was recorded: is a microphone connected and not muted?"))
		}
		name := "voice-" + started.Format("150405") + ".wav"
		v.vm.trace("microphone", map[string]any{"state": "stopped", "bytes": len(data), "error": errText(err)})
		v.vm.do(func() {
			v.rec.mu.Lock()
			v.rec.cancel = nil
			v.rec.mu.Unlock()
			v.mic.SetText(T("Talk"))
			v.mic.SetIcon(theme.MediaRecordIcon())
			v.mic.Importance = widget.MediumImportance
			v.mic.Refresh()
			if err == nil {
				err = v.vm.AddAttachmentData(name, "audio/wav", data)
			}
			if err != nil {
				dialog.ShowError(err, v.w)
				return
			}
			if v.input.Text == "" { // a voice message on its own: sent as soon as it is recorded
				v.sendDraft()
			}
		})
	}()
}
