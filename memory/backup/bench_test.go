package backup_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// benchEvents is the size of the benchmark memory.
const benchEvents = 10_000

// benchStore is a store with benchEvents events in 20 sessions (a tool call and its result now
// and then) and a small graph.
func benchStore(b *testing.B) *sqlite.Store {
	b.Helper()
	ctx := context.Background()
	s := openStore(b)
	words := []string{"weather", "London", "hiking", "tea", "project", "deadline", "Berlin", "concert", "train", "doctor"}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for si := range 20 {
		id := fmt.Sprintf("s%02d", si)
		if _, err := s.CreateSession(ctx, memory.Session{ID: id, Title: "session " + id}); err != nil {
			b.Fatal(err)
		}
		var evs []memory.Event
		for i := range benchEvents / 20 {
			n := si*benchEvents/20 + i
			e := memory.Event{Session: id, Time: t0.Add(time.Duration(n) * time.Minute), Role: memory.RoleUser, Tokens: 20,
				Content: fmt.Sprintf("message %d about %s and %s, with some more words to make it a sentence", n, words[n%10], words[n%7])}
			switch n % 10 {
			case 1:
				e.Role = memory.RoleAssistant
				e.ToolCalls = []memory.ToolCall{{ID: fmt.Sprint("c", n), Name: "search", Arguments: `{"q":"` + words[n%10] + `"}`}}
			case 2:
				e.Role, e.ToolCallID, e.ToolName, e.ToolStatus = memory.RoleTool, fmt.Sprint("c", n-1), "search", "ok"
			}
			evs = append(evs, e)
		}
		if _, err := s.AppendEvents(ctx, evs); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 200 {
		if _, err := s.AddTriple(ctx, memory.Fact{Subject: fmt.Sprint("person ", i%50), Predicate: "likes",
			Object: words[i%10]}, "owner", memory.Scope{}); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkJSON10k measures a full backup of 10,000 events and its restore into an empty store.
func BenchmarkJSON10k(b *testing.B) {
	ctx := context.Background()
	src := benchStore(b)
	var doc bytes.Buffer
	if err := backup.ExportJSON(ctx, src, &doc, backup.Options{}); err != nil {
		b.Fatal(err)
	}
	b.Run("export", func(b *testing.B) {
		b.SetBytes(int64(doc.Len()))
		for b.Loop() {
			if err := backup.ExportJSON(ctx, src, io.Discard, backup.Options{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(benchEvents)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
	b.Run("restore", func(b *testing.B) {
		b.SetBytes(int64(doc.Len()))
		n := 0
		for b.Loop() {
			b.StopTimer()
			dst := openStore(b)
			b.StartTimer()
			if _, err := backup.RestoreJSON(ctx, dst, bytes.NewReader(doc.Bytes()), backup.Options{}); err != nil {
				b.Fatal(err)
			}
			n++
		}
		b.ReportMetric(float64(benchEvents)*float64(n)/b.Elapsed().Seconds(), "events/s")
	})
}
