package memadmin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/video"
)

// Uploads hands the files of uploaded attachments ([client.Attachment.Upload]) to the message
// that sends them (kernel/uploads.Store.Take).
type Uploads interface {
	Take(id string) (u client.Upload, path string, release func(), err error)
}

// videoFile is an uploaded video: its file and size.
type videoFile struct {
	path string
	size int64
}

// MediaBlocks is [AttachmentBlocks] with uploads read (ups: nil where a request cannot name
// uploads) and videos turned into what memory keeps of them ([VideoKeyframes]); notes say which
// videos' pictures could not be read. The uploads it takes are deleted when it returns.
func MediaBlocks(ctx context.Context, as []client.Attachment, ups Uploads) ([]memory.Block, []string, error) {
	as, files, release, err := takeUploads(as, ups)
	defer release()
	if err != nil {
		return nil, nil, err
	}
	blocks, err := AttachmentBlocks(as)
	if err != nil {
		return nil, nil, err
	}
	blocks, notes := VideoKeyframes(ctx, blocks, files)
	return blocks, notes, nil
}

// takeUploads replaces each upload of as by its content: an image's or audio's data, a video's
// file (files, by attachment index, read by [VideoKeyframes] without loading it). release
// deletes the uploads taken.
func takeUploads(as []client.Attachment, ups Uploads) (_ []client.Attachment, files map[int]videoFile, release func(), err error) {
	var taken []func()
	release = func() {
		for _, r := range taken {
			r()
		}
	}
	if !slices.ContainsFunc(as, func(a client.Attachment) bool { return a.Upload != "" }) {
		return as, nil, release, nil
	}
	if len(as) > client.MaxAttachments {
		return nil, nil, release, invalid("at most %d attachments per message, got %d", client.MaxAttachments, len(as))
	}
	as = slices.Clone(as)
	files = map[int]videoFile{}
	for i, a := range as {
		if a.Upload == "" {
			continue
		}
		switch {
		case ups == nil:
			return nil, nil, release, invalid("attachment %d (%s): uploads are sent with a chat message (POST /api/v1/chat), not here", i+1, a.Name)
		case len(a.Data) > 0 || a.Text != "":
			return nil, nil, release, invalid("attachment %d (%s): an uploaded attachment carries no data or text", i+1, a.Name)
		}
		u, path, rel, err := ups.Take(a.Upload)
		if err != nil {
			return nil, nil, release, fmt.Errorf("attachment %d (%s): %w", i+1, a.Name, err)
		}
		taken = append(taken, rel)
		if a.Kind == "" {
			a.Kind = u.Kind
		}
		if a.Kind != u.Kind {
			return nil, nil, release, invalid("attachment %d (%s): sent as %s, but the upload is %s", i+1, u.Name, a.Kind, u.Kind)
		}
		if a.Name == "" {
			a.Name = u.Name
		}
		if a.MIME == "" {
			a.MIME = u.MIME
		}
		if u.Kind == string(memory.BlockVideo) {
			files[i] = videoFile{path: path, size: u.Size}
		} else if a.Data, err = os.ReadFile(path); err != nil {
			return nil, nil, release, fmt.Errorf("attachment %d (%s): %w", i+1, a.Name, err)
		}
		as[i] = a
	}
	return as, files, release, nil
}

// VideoKeyframes replaces each video block by what memory keeps of it: a text block that
// describes the video (its name, type, size and keyframe times), its keyframes as image blocks
// ("clip.mp4 0:03.png"), which OCR then reads like photos, so that a slide's words find the
// message, and its sound as an Ogg/Opus audio block ("clip.mp4 sound.ogg"), which speech
// recognition transcribes when a model is installed. The video file itself is not stored. A
// video without pictures (a voice recording in WebM) becomes an audio block. When ffmpeg is missing or cannot read the video,
// the text block says so and a note tells the owner. files holds the uploaded videos (by
// block index), read from disk.
func VideoKeyframes(ctx context.Context, blocks []memory.Block, files map[int]videoFile) (out []memory.Block, notes []string) {
	out = make([]memory.Block, 0, len(blocks))
	for i, b := range blocks {
		if b.Kind != memory.BlockVideo {
			out = append(out, b)
			continue
		}
		var v video.Video
		var err error
		size := int64(len(b.Data))
		if f, ok := files[i]; ok {
			size = f.size
			v, err = video.ReadFile(ctx, f.path, video.Options{})
		} else {
			v, err = video.Read(ctx, b.Data, video.Options{})
		}
		frames := v.Frames
		if errors.Is(err, video.ErrNoPicture) {
			if _, ok := files[i]; ok { // a sound-only upload: kept as audio when it fits
				if b.Data, err = readSmall(files[i].path); err != nil {
					notes = append(notes, fmt.Sprintf("%s: %v", b.Name, err))
					continue
				}
			}
			b.Kind = memory.BlockAudio
			if b.MIME == "video/webm" {
				b.MIME = "audio/webm"
			}
			out = append(out, b)
			continue
		}
		desc := memory.Block{Kind: memory.BlockText, Name: b.Name, MIME: "text/plain"}
		if err != nil {
			desc.Text = fmt.Sprintf("[video %q, %s, %d bytes: its pictures were not read (%v); the video itself is not stored]", b.Name, b.MIME, size, err)
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
		desc.Text = fmt.Sprintf("[video %q, %s, %d bytes: %d keyframes, at %s; %s; the video itself is not stored]", b.Name, b.MIME, size, len(frames), strings.Join(times, ", "), kept)
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

// readSmall reads a file of at most [client.MaxAttachmentBytes].
func readSmall(path string) ([]byte, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if st.Size() > client.MaxAttachmentBytes {
		return nil, fmt.Errorf("its sound has %d bytes, more than the %d an audio attachment holds", st.Size(), client.MaxAttachmentBytes)
	}
	return os.ReadFile(path)
}

// clock writes d as m:ss (h:mm:ss from an hour).
func clock(d time.Duration) string {
	s := int(d / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
