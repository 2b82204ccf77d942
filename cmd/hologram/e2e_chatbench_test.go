//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// chatGPTExport is a conversations.json of one conversation per size: n alternating user and
// assistant messages each, chained as ChatGPT chains them.
func chatGPTExport(sizes map[string]int) []byte {
	var convs []any
	for id, n := range sizes {
		mapping := map[string]any{}
		for i := range n {
			node := fmt.Sprintf("%s-%d", id, i)
			role := "user"
			text := fmt.Sprintf("Question %d of %s: what should I pack for a trip to Porto in week %d?", i/2, id, i%52)
			if i%2 == 1 {
				role = "assistant"
				text = fmt.Sprintf("Answer %d: a light jacket, **comfortable shoes** for the hills and an umbrella; "+
					"in week %d the evenings are cool by the river.", i/2, i%52)
			}
			var parent any
			if i > 0 {
				parent = fmt.Sprintf("%s-%d", id, i-1)
			}
			children := []string{}
			if i < n-1 {
				children = []string{fmt.Sprintf("%s-%d", id, i+1)}
			}
			mapping[node] = map[string]any{"message": map[string]any{"id": node, "author": map[string]any{"role": role},
				"create_time": 1709287200 + i, "content": map[string]any{"content_type": "text", "parts": []string{text}}},
				"parent": parent, "children": children}
		}
		convs = append(convs, map[string]any{"id": id, "title": fmt.Sprintf("%d messages", n), "create_time": 1709287200,
			"current_node": fmt.Sprintf("%s-%d", id, n-1), "mapping": mapping})
	}
	b, _ := json.Marshal(convs)
	return b
}

// nth waits for the app's nth trace line of a kind (1-based) and returns it.
func (g *running) nth(kind string, n int) map[string]any {
	g.t.Helper()
	deadline := time.Now().Add(waitLong)
	for time.Now().Before(deadline) {
		g.mu.Lock()
		seen := 0
		for _, m := range g.lines {
			if m["kind"] == kind {
				if seen++; seen == n {
					g.mu.Unlock()
					return m
				}
			}
		}
		g.mu.Unlock()
		time.Sleep(2 * time.Millisecond)
	}
	g.t.Fatalf("no %dth %s trace line", n, kind)
	return nil
}

// TestChatOpenBenchmark (a benchmark with a report in docs/benchmarks.md, not a timing
// assertion): in the real window under Xvfb, a 2,000-message chat and a 20-message chat
// (imported from a ChatGPT export through the kernel) are picked in the session list in turn,
// ten times each; the app's chat_rendered trace says how long from the pick to the newest
// message rendered. The long chat renders its newest page only.
func TestChatOpenBenchmark(t *testing.T) {
	in := newInstall(t, xserver(t))
	g := in.startGUI("hologram", "", "--data", in.data)
	in.window("^HologramAgent$")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "welcome"}, nil)
	kc := in.kernelClient()
	ctx := context.Background()
	if _, err := kc.AddProvider(ctx, client.ProviderConfig{Name: "local", BaseURL: "http://127.0.0.1:9/v1", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	rep, err := kc.ImportMemory(ctx, client.FormatChatGPT, bytes.NewReader(chatGPTExport(map[string]int{"long": 2000, "short": 20})))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("imported: %+v", rep.Chats)
	if code := g.stop(); code != 0 {
		t.Fatalf("exit %d on SIGTERM:\n%s", code, g.out)
	}

	g = in.startGUI("hologram", "", "--data", in.data)
	_, x, y, _, _ := in.window("^HologramAgent$")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "chat"}, nil)
	in.drawn()
	// The session list, under New session and the search field: Main, then the two chats (rows
	// 39 px apart from y 145, window-relative).
	row := func(i int) { in.do("mousemove", strconv.Itoa(x+120), strconv.Itoa(y+145+39*i), "click", "1") }
	times := map[string][]float64{}
	sizes := map[string]float64{}
	for i := 0; i < 20; i++ {
		row(1 + i%2)
		m := g.nth("chat_rendered", i+1)
		s, _ := m["session"].(string)
		ms, _ := m["ms"].(float64)
		times[s] = append(times[s], ms)
		sizes[s], _ = m["messages"].(float64)
	}
	if len(times) != 2 {
		t.Fatalf("rendered sessions %v, want the two chats", times)
	}
	for s, ts := range times {
		sorted := slices.Sorted(slices.Values(ts))
		t.Logf("BENCH chat open %s: %v rendered messages, median %.1f ms over %d picks (min %.1f, max %.1f): %v",
			s, sizes[s], (sorted[len(sorted)/2-1]+sorted[len(sorted)/2])/2, len(ts), sorted[0], sorted[len(sorted)-1], ts)
	}
	h, err := kc.HistoryPage(ctx, client.HistoryQuery{Session: "chatgpt-long", Limit: 1})
	if err != nil || !h.More {
		t.Errorf("the long chat's history: %+v, %v", h, err)
	}
	for s, n := range sizes {
		if n > 100 {
			t.Errorf("session %s rendered %v messages: the newest page only, please", s, n)
		}
	}
}
