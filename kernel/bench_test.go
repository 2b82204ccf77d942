package kernel_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// BenchmarkTurn measures one whole turn in-process (store commits, context assembly, the agent
// loop) against an instant streaming fake LLM; BenchmarkFakeLLM is the same-run baseline.
func BenchmarkTurn(b *testing.B) {
	fake := instantFake(b)
	k := newKernel(&testing.T{})
	ctx := context.Background()
	if _, err := k.Service().AddProvider(ctx, client.ProviderConfig{Name: "instant", BaseURL: fake.URL + "/v1", Model: "m"}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := k.Service().Chat(ctx, client.ChatRequest{Input: "turn " + strconv.Itoa(i)}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFakeLLM(b *testing.B) {
	fake := instantFake(b)
	for i := 0; i < b.N; i++ {
		resp, err := http.Post(fake.URL+"/v1/chat/completions", "application/json", nil)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func instantFake(b *testing.B) *httptest.Server {
	const stream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"PONG\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, stream)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkTurnWithMemory is BenchmarkTurn with the memory features on, as homed runs it (real
// tokenizer, L1 window, recall of events and facts, scene observation).
func BenchmarkTurnWithMemory(b *testing.B) {
	fake := instantFake(b)
	k := newMemKernel(b, memOptions{})
	ctx := context.Background()
	if _, err := k.Service().AddProvider(ctx, client.ProviderConfig{Name: "instant", BaseURL: fake.URL + "/v1", Model: "m"}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := k.Service().Chat(ctx, client.ChatRequest{Input: "turn " + strconv.Itoa(i) + " about hiking in the mountains"}, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	k.SettleMemory()
}
