//go:build integration

package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory/embed"
)

// realShapeBGE generates a random-weight model with bge-small-zh-v1.5's real shapes (vocabulary
// 21128, hidden 512, 4 layers, 8 heads, intermediate 2048: ≈ 24 M parameters, a 95 MB file like
// the real export) laid out as its repository, with the WordPiece test vocabulary cut to its ids.
func realShapeBGE(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "onnx"), 0o755); err != nil {
		t.Fatal(err)
	}
	genModel(t, "bert", "--out", filepath.Join(dir, "onnx", "model.onnx"), "--vocab", "21128", "--hidden", "512",
		"--layers", "4", "--heads", "8", "--intermediate", "2048", "--seed", "3")
	data, err := os.ReadFile(filepath.Join(embedTestdata, "wordpiece", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tj map[string]any
	if err := json.Unmarshal(data, &tj); err != nil {
		t.Fatal(err)
	}
	vocab := tj["model"].(map[string]any)["vocab"].(map[string]any)
	for tok, id := range vocab {
		if id.(float64) >= 21128 {
			delete(vocab, tok)
		}
	}
	if data, err = json.Marshal(tj); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "tokenizer.json"), data)
}

// benchTurnText is a turn's input; the memory holds events like it.
func benchTurnText(i int) string {
	topics := []string{"hiking in the mountains", "the quarterly budget review", "my sister's new job", "a recipe for bread",
		"the train delays this week", "我们周末去爬山", "下周的预算会议", "新买的自行车"}
	return fmt.Sprintf("turn %d about %s and what we planned next", i, topics[i%len(topics)])
}

// BenchmarkTurnDense measures whole turns (as BenchmarkTurnWithMemory) over a memory of 400
// events, in sparse mode and with the real-shape bge model active and every event embedded:
// the per-turn overhead of dense mode is the difference. Each turn embeds its input once (the
// window and recall share it) and the two events it stores are embedded in the background.
// It reports the p50 and p99 turn times.
func BenchmarkTurnDense(b *testing.B) {
	rt := testRuntime(b)
	repo := filepath.Join(b.TempDir(), "bge")
	realShapeBGE(b, repo)
	dir := b.TempDir()
	models, err := embed.NewManager(embed.ManagerOptions{Dir: filepath.Join(dir, "models"), Hubs: []string{"http://127.0.0.1:9"}, Runtime: rt})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := models.Import(context.Background(), bgeID, repo); err != nil {
		b.Fatal(err)
	}
	fake := instantFake(b)
	// The input's embedding alone (what dense mode adds to a turn's critical path besides its
	// scoring), for the same inputs.
	b.Run("input-embedding", func(b *testing.B) {
		emb, err := models.Open(bgeID)
		if err != nil {
			b.Fatal(err)
		}
		defer emb.(interface{ Close() error }).Close()
		for i := 0; i < b.N; i++ {
			if _, err := emb.EmbedTexts(context.Background(), []string{benchTurnText(1000 + i)}, embed.Query); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, mode := range []string{"sparse", "dense"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			k := newEmbKernel(b, embOptions{Deps: kernel.EmbeddingDeps{Models: models, Runtime: rt}})
			if _, err := k.Service().AddProvider(ctx, client.ProviderConfig{Name: "instant", BaseURL: fake.URL + "/v1", Model: "m"}); err != nil {
				b.Fatal(err)
			}
			var in []kernel.IngestEvent
			for i := range 400 {
				in = append(in, kernel.IngestEvent{Session: "main", Content: benchTurnText(i)})
			}
			if _, err := k.Ingest(ctx, in); err != nil {
				b.Fatal(err)
			}
			if mode == "dense" {
				t0 := time.Now()
				if _, err := k.Service().UseModel(ctx, bgeID); err != nil {
					b.Fatal(err)
				}
				if err := k.SettleEmbedding(ctx); err != nil {
					b.Fatal(err)
				}
				b.Logf("400 events embedded in %v (%.0f events/s, model load included)", time.Since(t0).Round(time.Millisecond),
					400/time.Since(t0).Seconds())
			}
			k.SettleMemory()
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := k.Service().Chat(ctx, client.ChatRequest{Input: benchTurnText(1000 + i)}, nil); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[min(len(times)-1, len(times)*99/100)].Microseconds())/1000, "p99-ms")
			k.SettleMemory()
			if err := k.SettleEmbedding(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkReembed measures the background re-embedding of a memory into the real-shape bge
// model's space: events/s, from UseModel to every event embedded.
func BenchmarkReembed(b *testing.B) {
	rt := testRuntime(b)
	repo := filepath.Join(b.TempDir(), "bge")
	realShapeBGE(b, repo)
	dir := b.TempDir()
	models, err := embed.NewManager(embed.ManagerOptions{Dir: filepath.Join(dir, "models"), Hubs: []string{"http://127.0.0.1:9"}, Runtime: rt})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := models.Import(context.Background(), bgeID, repo); err != nil {
		b.Fatal(err)
	}
	const events = 256
	ctx := context.Background()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		k := newEmbKernel(b, embOptions{Deps: kernel.EmbeddingDeps{Models: models, Runtime: rt}})
		var in []kernel.IngestEvent
		for j := range events {
			in = append(in, kernel.IngestEvent{Session: "main", Content: benchTurnText(j) + " " + strconv.Itoa(i)})
		}
		if _, err := k.Ingest(ctx, in); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		if _, err := k.Service().UseModel(ctx, bgeID); err != nil {
			b.Fatal(err)
		}
		if err := k.SettleEmbedding(ctx); err != nil {
			b.Fatal(err)
		}
		total += time.Since(t0)
		b.StopTimer()
		k.Close()
		k.Store.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(events*b.N)/total.Seconds(), "events/s")
}
