package gui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// A reply read aloud: the speaker button of a finished reply asks the kernel to speak its text
// (client.Speaker: espeak-ng on the kernel's machine, POST /api/v1/speech for a remote one) into
// a temporary WAV and plays it with the desktop's player (ChatOptions.Play). Tapping it again, or
// another reply's, stops it.

// CanSpeak reports whether the kernel can speak replies.
func (vm *ChatVM) CanSpeak() bool {
	_, ok := vm.svc.(client.Speaker)
	return ok
}

// Speak writes the text of message i spoken to a new temporary WAV file and returns its path
// (the caller removes it) and the voice used.
func (vm *ChatVM) Speak(ctx context.Context, i int) (path, voice string, err error) {
	sp, ok := vm.svc.(client.Speaker)
	if !ok {
		return "", "", errors.New(T("this kernel cannot speak"))
	}
	text := vm.CopyText(i)
	if text == "" {
		return "", "", errors.New(T("nothing to read aloud"))
	}
	f, err := os.CreateTemp("", "hologram-speech-*.wav")
	if err != nil {
		return "", "", err
	}
	voice, err = sp.Speak(ctx, text, "", "", f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", "", err
	}
	return f.Name(), voice, nil
}

// audioPlayers are the players tried in order: PipeWire's, PulseAudio's, ALSA's.
var audioPlayers = [][]string{{"pw-play"}, {"paplay"}, {"aplay", "-q"}}

// PlayWAV plays a WAV file with the first of pw-play, paplay and aplay on PATH, until it ends or
// ctx is cancelled.
func PlayWAV(ctx context.Context, path string) error {
	for _, p := range audioPlayers {
		bin, err := exec.LookPath(p[0])
		if err != nil {
			continue
		}
		out, err := exec.CommandContext(ctx, bin, append(p[1:], path)...).CombinedOutput()
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("%s: %v: %s", p[0], err, clip(string(out), 300))
		}
		return nil
	}
	return errors.New(T("no audio player: install pipewire-bin (pw-play), pulseaudio-utils (paplay) or alsa-utils (aplay)"))
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// chatSpeaker is the one reply being read aloud.
type chatSpeaker struct {
	mu     sync.Mutex
	index  int // the message; -1 none
	cancel context.CancelFunc
}

// newSpeakButton makes bubble b's speaker button.
func (b *chatBubble) newSpeakButton() {
	b.speak = widget.NewButtonWithIcon("", theme.VolumeUpIcon(), func() { b.v.toggleSpeak(b.index) })
	b.speak.Importance = widget.LowImportance
	b.speak.Hide()
}

// toggleSpeak reads message i aloud, or stops it when it is the one being read.
func (v *chatView) toggleSpeak(i int) {
	s := &v.speaker
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel()
		stopping := s.index == i
		s.cancel, s.index = nil, -1
		if stopping {
			s.mu.Unlock()
			return
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.index = cancel, i
	s.mu.Unlock()
	play := v.vm.opts.Play
	if play == nil {
		play = PlayWAV
	}
	v.vm.trace("speech", map[string]any{"message": i, "state": "speaking"})
	go func() {
		defer cancel()
		path, voice, err := v.vm.Speak(ctx, i)
		if err == nil {
			v.vm.trace("speech", map[string]any{"message": i, "state": "playing", "voice": voice})
			err = play(ctx, path)
			os.Remove(path)
		}
		s.mu.Lock()
		if s.index == i && ctx.Err() == nil {
			s.cancel, s.index = nil, -1
		}
		s.mu.Unlock()
		v.vm.trace("speech", map[string]any{"message": i, "state": "done", "error": errText(err)})
		if err != nil && ctx.Err() == nil {
			fyne.Do(func() { dialog.ShowError(err, v.w) })
		}
	}()
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
