package kernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
	"github.com/hologramagent/hologram/memory/engine"
)

// Chat history imports (ChatGPT, Open WebUI) and cooling everything at once.

// importLogEvery is how often a long import logs how far it is.
const importLogEvery = 10 * time.Second

// importChats imports a chat history through the kernel's memory: each conversation is stored
// by the store in one transaction, and its new events reach the windows, the scene observer and
// the embedder as the agent's own do.
func (k memoryRole) importChats(ctx context.Context, format string, r io.Reader) (client.ImportReport, error) {
	t0 := time.Now()
	last := t0
	ocrOff := false
	rep, err := backup.ImportChats(ctx, chatSink{k.db, k.mem}, format, r, backup.ChatOptions{
		Prepare: func(ctx context.Context, e *memory.Event) {
			e.Tokens = llm.EstimateTokens(e.Content)
			if len(e.Blocks) == 0 || ocrOff {
				return
			}
			// An inline image is found by its words, as an attachment is; without OCR, say so
			// once rather than once per image.
			if err := k.ocr.Available(); err != nil {
				ocrOff = true
				k.log.Warn("memory import: images are kept without their text", "format", format, "err", err)
				return
			}
			k.ocr.Blocks(ctx, e.Blocks)
		},
		Progress: func(p backup.ChatProgress) {
			if time.Since(last) >= importLogEvery {
				last = time.Now()
				k.log.Info("memory import", "format", format, "conversations", p.Conversations, "events", p.Events, "bytes", p.Bytes)
			}
		},
	})
	out := chatReportOut(rep)
	if err != nil {
		var fe *backup.FileError
		if errors.As(err, &fe) {
			return out, fmt.Errorf("%w: %w", client.ErrInvalid, err)
		}
		return out, mapErr(err)
	}
	k.log.Info("memory imported", "format", format, "conversations", rep.Conversations, "imported", rep.Imported,
		"unchanged", rep.Unchanged, "refused", rep.RefusedCount, "events", rep.Events, "present", rep.Present,
		"ms", time.Since(t0).Milliseconds())
	return out, nil
}

func chatReportOut(rep backup.ChatReport) client.ImportReport {
	c := &client.ChatsReport{Conversations: rep.Conversations, Imported: rep.Imported, Unchanged: rep.Unchanged,
		Empty: rep.Empty, SkippedBy: rep.Skipped, RefusedCount: rep.RefusedCount}
	for _, r := range rep.Refused {
		c.Refused = append(c.Refused, client.ImportRefusal{Index: r.Index, Offset: r.Offset, ID: r.ID, Title: r.Title, Reason: r.Reason})
	}
	return client.ImportReport{Sessions: rep.Sessions, Events: rep.Events, Blocks: rep.Blocks, Skipped: rep.Present, Chats: c}
}

// chatSink stores conversations through the store and tells the memory engine of the new events.
type chatSink struct {
	db  Store
	eng *engine.Engine
}

// ImportConversation implements backup.ChatSink.
func (s chatSink) ImportConversation(ctx context.Context, sess memory.Session, evs []memory.Event) ([]memory.Event, bool, error) {
	stored, created, err := s.db.ImportConversation(ctx, sess, evs)
	if err == nil && len(stored) > 0 {
		s.eng.Appended(stored)
	}
	return stored, created, err
}

// ImportedIDs implements backup.ChatSink.
func (s chatSink) ImportedIDs(ctx context.Context, session string) (map[string]bool, error) {
	return s.db.ImportedIDs(ctx, session)
}

// CoolAll implements client.Service: every L1 event of every session sinks to L2 now, idle or
// not, and every cold event is distilled at once (memory/engine.Engine.CoolAll).
func (k memoryRole) CoolAll(ctx context.Context, progress func(client.GCProgress)) (client.GCReport, error) {
	if progress == nil {
		progress = func(client.GCProgress) {}
	}
	r, err := k.mem.CoolAll(ctx, func(phase string, done, total int) {
		progress(client.GCProgress{Phase: phase, Done: done, Total: total})
	})
	return client.GCReport{Cooled: r.Cooled, Distilled: r.Distilled, Entities: r.Entities, Triples: r.Triples, Confirmed: r.Confirmed,
		Superseded: r.Superseded, Extractor: r.Extractor, Decayed: r.Decayed, Took: r.Took}, err
}

var _ backup.ChatSink = chatSink{}
