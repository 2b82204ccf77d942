package memadmin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/video"
)

// MediaBlocks is [AttachmentBlocks] with videos turned into what memory keeps of them
// ([VideoKeyframes]); notes say which videos' pictures could not be read.
func MediaBlocks(ctx context.Context, as []client.Attachment) ([]memory.Block, []string, error) {
	blocks, err := AttachmentBlocks(as)
	if err != nil {
		return nil, nil, err
	}
	blocks, notes := VideoKeyframes(ctx, blocks)
	return blocks, notes, nil
}

// VideoKeyframes replaces each video block by what memory keeps of it: a text block that
// describes the video (its name, type, size and keyframe times), its keyframes as image blocks
// ("clip.mp4 0:03.png"), which OCR then reads like photos, so that a slide's words find the
// message, and its sound as an Ogg/Opus audio block ("clip.mp4 sound.ogg"), which speech
// recognition transcribes when a model is installed. The video file itself is not stored. A
// video without pictures (a voice recording in WebM) becomes an audio block. When ffmpeg is missing or cannot read the video,
// the text block says so and a note tells the owner.
func VideoKeyframes(ctx context.Context, blocks []memory.Block) (out []memory.Block, notes []string) {
	out = make([]memory.Block, 0, len(blocks))
	for _, b := range blocks {
		if b.Kind != memory.BlockVideo {
			out = append(out, b)
			continue
		}
		v, err := video.Read(ctx, b.Data, video.Options{})
		frames := v.Frames
		if errors.Is(err, video.ErrNoPicture) {
			b.Kind = memory.BlockAudio
			if b.MIME == "video/webm" {
				b.MIME = "audio/webm"
			}
			out = append(out, b)
			continue
		}
		desc := memory.Block{Kind: memory.BlockText, Name: b.Name, MIME: "text/plain"}
		if err != nil {
			desc.Text = fmt.Sprintf("[video %q, %s, %d bytes: its pictures were not read (%v); the video itself is not stored]", b.Name, b.MIME, len(b.Data), err)
			notes = append(notes, fmt.Sprintf("%s: its pictures were not read (%v).", b.Name, err))
			out = append(out, desc)
			continue
		}
		times := make([]string, len(frames))
		for i, f := range frames {
			times[i] = clock(f.Time)
		}
		kept := "its sound is kept as Ogg/Opus"
		switch err := v.SoundErr; {
		case errors.Is(err, video.ErrNoSound):
			kept = "it has no sound"
		case err != nil:
			kept = "its sound was not read"
			notes = append(notes, fmt.Sprintf("%s: its sound was not read (%v).", b.Name, err))
		}
		desc.Text = fmt.Sprintf("[video %q, %s, %d bytes: %d keyframes, at %s; %s; the video itself is not stored]", b.Name, b.MIME, len(b.Data), len(frames), strings.Join(times, ", "), kept)
		out = append(out, desc)
		for i, f := range frames {
			out = append(out, memory.Block{Kind: memory.BlockImage, Name: fmt.Sprintf("%s %s.png", b.Name, times[i]), MIME: "image/png", Data: f.PNG})
		}
		if v.SoundErr == nil { // transcribed next, like a voice message, when a speech model is installed
			out = append(out, memory.Block{Kind: memory.BlockAudio, Name: b.Name + " sound.ogg", MIME: "audio/ogg", Data: v.Sound})
		}
	}
	return out, notes
}

// clock writes d as m:ss (h:mm:ss from an hour).
func clock(d time.Duration) string {
	s := int(d / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
