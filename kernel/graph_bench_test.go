package kernel_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory"
)

// graphFixture fills a kernel's memory with a graph of n entities and 2n triples, distilled
// from L2 events (each triple has a source), and returns the kernel.
func graphFixture(b *testing.B, n int) memKernel {
	b.Helper()
	k := newMemKernel(b, memOptions{})
	ctx := context.Background()
	const perBatch = 500 // facts per distillation
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for done := 0; done < 2*n; done += perBatch {
		evs := make([]memory.Event, perBatch/10)
		for i := range evs {
			evs[i] = memory.Event{Session: "main", Role: memory.RoleUser, Content: fmt.Sprintf("event %d", done+i), Time: t0, Layer: memory.LayerL2}
		}
		evs, err := k.Store.AppendEvents(ctx, evs)
		if err != nil {
			b.Fatal(err)
		}
		d := memory.Distillation{Origin: "rules", At: t0}
		for _, e := range evs {
			d.Events = append(d.Events, e.ID)
		}
		for i := 0; i < perBatch && done+i < 2*n; i++ {
			j := done + i
			// Each entity is the subject of two triples; objects spread over the graph.
			d.Facts = append(d.Facts, memory.Fact{Subject: fmt.Sprintf("entity %d", j/2), Predicate: fmt.Sprintf("rel %d", j%7),
				Object: fmt.Sprintf("entity %d", (j*7919+1)%n), Sources: []int64{evs[i%len(evs)].ID}})
		}
		if _, err := k.Store.ApplyDistillation(ctx, d); err != nil {
			b.Fatal(err)
		}
	}
	return k
}

// BenchmarkGraphAll10k reads the whole graph of 10,000 entities and 20,000 triples through the
// API's paging (10 pages of 1,000), as the star map loads it.
func BenchmarkGraphAll10k(b *testing.B) {
	k := graphFixture(b, 10_000)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := client.GraphQuery{}
		ents, trs := 0, 0
		for {
			page, err := k.Service().Graph(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			ents += len(page.Entities)
			trs += len(page.Triples)
			if page.Next == "" {
				break
			}
			q.After = page.Next
		}
		if ents != 10_000 || trs < 19_000 {
			b.Fatalf("read %d entities and %d triples", ents, trs)
		}
	}
}
