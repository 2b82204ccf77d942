package memadmin

import (
	"net/http"
	"strings"
	"sync"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory"
)

// AttachmentBlocks validates a chat's attachments and turns them into new blocks.
func AttachmentBlocks(as []client.Attachment) ([]memory.Block, error) {
	if len(as) > client.MaxAttachments {
		return nil, invalid("at most %d attachments per message, got %d", client.MaxAttachments, len(as))
	}
	out := make([]memory.Block, 0, len(as))
	for i, a := range as {
		b := memory.Block{Kind: memory.BlockKind(a.Kind), Name: strings.TrimSpace(sanitize(a.Name)), MIME: strings.TrimSpace(a.MIME), Text: sanitize(a.Text)}
		switch b.Kind {
		case memory.BlockText:
			if strings.TrimSpace(b.Text) == "" || len(a.Data) > 0 {
				return nil, invalid("attachment %d (%s): a text attachment carries its text, not data", i+1, b.Name)
			}
			if len(b.Text) > client.MaxAttachmentBytes {
				return nil, invalid("attachment %d (%s): %d bytes of text, at most %d", i+1, b.Name, len(b.Text), client.MaxAttachmentBytes)
			}
		case memory.BlockImage, memory.BlockAudio, memory.BlockVideo:
			if b.Kind == memory.BlockVideo && a.Upload != "" && len(a.Data) == 0 { // read from its file (MediaBlocks)
				break
			}
			if len(a.Data) == 0 {
				return nil, invalid("attachment %d (%s): %s attachment without data", i+1, b.Name, b.Kind)
			}
			if len(a.Data) > client.MaxAttachmentBytes {
				return nil, invalid("attachment %d (%s): %d bytes, at most %d", i+1, b.Name, len(a.Data), client.MaxAttachmentBytes)
			}
			b.Data = a.Data
			if b.MIME == "" {
				b.MIME = http.DetectContentType(a.Data)
			}
		default:
			return nil, invalid(`attachment %d (%s): kind must be "text", "image", "audio" or "video", got %q`, i+1, b.Name, a.Kind)
		}
		out = append(out, b)
	}
	return out, nil
}

// HasAudio says whether a message carries a voice message (which may stand for its text).
func HasAudio(as []client.Attachment) bool {
	for _, a := range as {
		if a.Kind == string(memory.BlockAudio) {
			return true
		}
	}
	return false
}

// VoiceInput is the text of a message: what was typed, else what its voice messages said
// (said: their transcripts), else a mark that one could not be transcribed.
func VoiceInput(input string, said []string) string {
	if input != "" {
		return input
	}
	if input = strings.Join(said, "\n"); input != "" {
		return input
	}
	return "(a voice message that could not be transcribed)"
}

// WithNotices sends a voice message's transcript (when not empty) as a transcript event and notes
// as notice events right after the turn's first event (its id).
func WithNotices(emit func(client.ChatEvent), transcript string, notes []string) func(client.ChatEvent) {
	if (len(notes) == 0 && transcript == "") || emit == nil {
		return emit
	}
	var once sync.Once
	return func(ev client.ChatEvent) {
		emit(ev)
		if ev.Type == client.EventTurn {
			once.Do(func() {
				if transcript != "" {
					emit(client.ChatEvent{Type: client.EventTranscript, TurnID: ev.TurnID, Session: ev.Session, Text: transcript})
				}
				for _, n := range notes {
					emit(client.ChatEvent{Type: client.EventNotice, TurnID: ev.TurnID, Session: ev.Session, Text: n})
				}
			})
		}
	}
}
