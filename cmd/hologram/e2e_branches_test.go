//go:build integration

package main

import (
	"context"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// TestRealWindowBranches: a chat whose reply was regenerated opens in the real window (Xvfb)
// with the new reply as ‹2/2›, its usage line, and Edit/Regenerate buttons; the screenshot is
// build/screenshots/chat-branch.png (copied to docs/screenshots after a look).
func TestRealWindowBranches(t *testing.T) {
	in := newInstall(t, xserver(t))
	fake := llmtest.NewServer(t)
	g := in.startGUI("hologram", "", "--data", in.data)
	in.window("^HologramAgent$")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "welcome"}, nil)
	welcome := in.drawn()

	kc := in.kernelClient()
	ctx := context.Background()
	if _, err := kc.AddProvider(ctx, client.ProviderConfig{Name: "local", BaseURL: fake.URL(), Model: "qwen2.5"}); err != nil {
		t.Fatal(err)
	}
	fake.Script(llmtest.Reply{Text: "A walrus is a large flippered marine mammal of the Arctic.", Usage: &llm.Usage{PromptTokens: 412, CompletionTokens: 14}})
	if _, err := kc.Chat(ctx, client.ChatRequest{Input: "What is a walrus?"}, nil); err != nil {
		t.Fatal(err)
	}
	h, err := kc.History(ctx, "main", 0)
	if err != nil || len(h) != 2 {
		t.Fatalf("history %+v, %v", h, err)
	}
	fake.Script(llmtest.Reply{Text: "Walruses (*Odobenus rosmarus*) are tusked pinnipeds:\n\n" +
		"- they haul out on **sea ice** and beaches,\n- they dive for clams on the sea floor,\n- an adult bull weighs up to 1.5 tonnes.",
		Usage: &llm.Usage{PromptTokens: 412, CompletionTokens: 38}, Delay: func() { time.Sleep(1500 * time.Millisecond) }})
	if _, err := kc.Chat(ctx, client.ChatRequest{Regenerate: h[1].ID}, nil); err != nil {
		t.Fatal(err)
	}
	if code := g.stop(); code != 0 {
		t.Fatalf("exit %d on SIGTERM:\n%s", code, g.out)
	}

	g = in.startGUI("hologram", "", "--data", in.data)
	in.window("^HologramAgent$")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "chat"}, nil)
	g.waitTrace(map[string]any{"kind": "history", "session": "main"}, func(m map[string]any) bool { return m["messages"] == float64(2) })
	shot := in.screenshot("chat-branch", welcome)
	if why := blank(shot); why != "" {
		t.Errorf("the branch screenshot is blank: %s", why)
	}
}
