package gui

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/client"
)

// The chat's attachments: files picked, dropped or pasted before a message is sent.

// Attachments returns the current session's pending attachments.
func (vm *ChatVM) Attachments() []ChatAttachment {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	var out []ChatAttachment
	for _, f := range vm.sess(vm.current).atts {
		out = append(out, chatAttachmentView(f))
	}
	return out
}

// AddAttachment adds a file to send with the next message: text (valid UTF-8), an image,
// audio or a video, told by content ([client.OpenFile]). Text, images and audio are read now
// (at most [client.MaxAttachmentBytes]); a video, or an image or audio file over
// [client.InlineBytes], is streamed to the kernel when the message is sent, up to the kernel's
// upload limit.
func (vm *ChatVM) AddAttachment(path string) error {
	f, err := client.OpenFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", Tf("Cannot attach %s", filepath.Base(path)), err)
	}
	return vm.addFile(f)
}

// AddAttachmentData adds pasted or dropped data to send with the next message. An empty mime
// is detected from the content; the kind (text, image, audio, video) always is.
func (vm *ChatVM) AddAttachmentData(name, mime string, data []byte) error {
	if len(data) == 0 {
		return errors.New(Tf("Cannot attach %s: it is empty.", name))
	}
	if len(data) > client.MaxAttachmentBytes {
		return errors.New(Tf("Cannot attach %s: it has %s, at most %s.", name, chatSize(int64(len(data))), chatSize(client.MaxAttachmentBytes)))
	}
	detected := http.DetectContentType(data)
	if mime == "" {
		mime = detected
	}
	a := client.Attachment{Name: name, MIME: mime}
	switch {
	case strings.HasPrefix(detected, "text/") && utf8.Valid(data):
		a.Kind, a.Text = "text", string(data)
	case strings.HasPrefix(detected, "image/"):
		a.Kind, a.Data = "image", data
	case client.AudioMIME(detected, name) != "":
		a.Kind, a.Data = "audio", data
		if a.MIME == detected {
			a.MIME = client.AudioMIME(detected, name)
		}
	case client.VideoMIME(data, name) != "":
		a.Kind, a.Data = "video", data
		if a.MIME == detected {
			a.MIME = client.VideoMIME(data, name)
		}
	default:
		return errors.New(Tf("Cannot attach %s: it is %s, not text, an image, audio or video.", name, detected))
	}
	return vm.addFile(client.File{Attachment: a, Size: int64(len(data))})
}

// addFile adds a pending attachment to the current session.
func (vm *ChatVM) addFile(f client.File) error {
	vm.mu.Lock()
	s := vm.sess(vm.current)
	if len(s.atts) >= client.MaxAttachments {
		vm.mu.Unlock()
		return errors.New(Tf("Cannot attach %s: a message takes at most %d attachments.", f.Name, client.MaxAttachments))
	}
	s.atts = append(s.atts, f)
	id := vm.current
	vm.mu.Unlock()
	vm.notify(ChatChange{Kind: ChatAttachmentsChanged, Session: id})
	return nil
}

// RemoveAttachment drops pending attachment i.
func (vm *ChatVM) RemoveAttachment(i int) {
	vm.mu.Lock()
	s := vm.sess(vm.current)
	if i < 0 || i >= len(s.atts) {
		vm.mu.Unlock()
		return
	}
	s.atts = append(s.atts[:i:i], s.atts[i+1:]...)
	id := vm.current
	vm.mu.Unlock()
	vm.notify(ChatChange{Kind: ChatAttachmentsChanged, Session: id})
}

// chatAttachmentView is how a message shows an attachment it sends.
func chatAttachmentView(a client.File) ChatAttachment {
	v := ChatAttachment{Kind: a.Kind, Name: a.Name, MIME: a.MIME, Size: a.Size}
	if a.Kind == "image" {
		v.Data = a.Data
	}
	return v
}
