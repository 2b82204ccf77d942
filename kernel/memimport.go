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
	"github.com/hologramagent/hologram/memory/graph"
)

// Chat history imports (ChatGPT, Open WebUI) and cooling everything at once.

// importLogEvery is how often a long import logs how far it is.
const importLogEvery = 10 * time.Second

// importChats imports a chat history through the kernel's memory: each conversation is stored
// by the store in one transaction, and its new events reach the windows, the scene observer and
// the embedder as the agent's own do.
func (k *Kernel) importChats(ctx context.Context, m *mem, format string, r io.Reader) (client.ImportReport, error) {
	t0 := time.Now()
	last := t0
	ocrOff := false
	rep, err := backup.ImportChats(ctx, chatSink{m}, format, r, backup.ChatOptions{
		Prepare: func(ctx context.Context, e *memory.Event) {
			e.Tokens = llm.EstimateTokens(e.Content)
			if len(e.Blocks) == 0 || ocrOff {
				return
			}
			// An inline image is found by its words, as an attachment is; without OCR, say so
			// once rather than once per image.
			if _, err := k.ocr.engine(); err != nil {
				ocrOff = true
				k.log.Warn("memory import: images are kept without their text", "format", format, "err", err)
				return
			}
			k.ocrBlocks(ctx, e.Blocks)
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

// chatSink stores conversations through the store and tells the memory of the new events.
type chatSink struct{ m *mem }

// ImportConversation implements backup.ChatSink.
func (s chatSink) ImportConversation(ctx context.Context, sess memory.Session, evs []memory.Event) ([]memory.Event, bool, error) {
	stored, created, err := s.m.store.ImportConversation(ctx, sess, evs)
	if err == nil && len(stored) > 0 {
		s.m.appended(stored)
	}
	return stored, created, err
}

// ImportedIDs implements backup.ChatSink.
func (s chatSink) ImportedIDs(ctx context.Context, session string) (map[string]bool, error) {
	return s.m.store.ImportedIDs(ctx, session)
}

// CoolAll implements client.Service: every L1 event of every session sinks to L2 now, idle or
// not (the recent ones too, so the next turn of a session starts from recall), and every cold
// event is distilled at once rather than after distill_idle; then scenes decay, as in a pass
// of MemoryGC. It never overlaps a MemoryGC pass.
func (k *Kernel) CoolAll(ctx context.Context, progress func(client.GCProgress)) (client.GCReport, error) {
	m, err := k.memAdmin()
	if err != nil {
		return client.GCReport{}, err
	}
	if progress == nil {
		progress = func(client.GCProgress) {}
	}
	m.gcMu.Lock()
	defer m.gcMu.Unlock()
	t0 := time.Now()
	var rep client.GCReport
	sessions, err := m.store.ListSessions(ctx)
	if err != nil {
		return rep, fmt.Errorf("cool all: %w", err)
	}
	for i, s := range sessions {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		n, err := m.coolSession(ctx, s.ID)
		if err != nil {
			return rep, fmt.Errorf("cool all: session %s: %w", s.ID, err)
		}
		rep.Cooled += n
		progress(client.GCProgress{Phase: client.GCPhaseCooling, Done: i + 1, Total: len(sessions)})
	}
	d, err := m.distillerWith(func(o *graph.Options) {
		// Idle for a nanosecond: everything cold, however recent.
		o.Idle = time.Nanosecond
		o.Progress = func(r graph.Report) {
			progress(client.GCProgress{Phase: client.GCPhaseDistilling, Done: r.Events})
		}
	})
	if err != nil {
		return rep, fmt.Errorf("cool all: %w", err)
	}
	dr, err := d.Run(ctx, 0)
	rep.Distilled, rep.Entities, rep.Triples, rep.Confirmed, rep.Superseded, rep.Extractor =
		dr.Events, dr.Entities, dr.Triples, dr.Confirmed, dr.Superseded, dr.Extractor
	if err != nil {
		return rep, fmt.Errorf("cool all: distillation: %w", err)
	}
	if rep.Decayed, err = m.scenes.Decay(ctx); err != nil {
		return rep, fmt.Errorf("cool all: scene decay: %w", err)
	}
	rep.Took = time.Since(t0)
	k.log.Info("memory cooled all", "cooled", rep.Cooled, "distilled", rep.Distilled, "entities", rep.Entities,
		"triples", rep.Triples, "extractor", rep.Extractor, "ms", rep.Took.Milliseconds())
	return rep, nil
}

// coolSession sinks every L1 event of a session to L2.
func (m *mem) coolSession(ctx context.Context, session string) (int, error) {
	evs, err := m.store.LayerEvents(ctx, session, memory.LayerL1)
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	ids := make([]int64, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.store.SetLayer(ctx, ids, memory.LayerL2); err != nil {
		return 0, err
	}
	for _, id := range ids {
		delete(m.recalled, id)
	}
	m.dropFromWindows(ids)
	delete(m.windows, session)
	return len(ids), nil
}

var _ backup.ChatSink = chatSink{}
