package kerneltest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// branchView lists a history as "role:content" with its branch marks (‹i/n›).
func branchView(msgs []client.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role + ":" + m.Content
		if m.Branch != nil {
			out[i] += fmt.Sprintf(" ‹%d/%d›", m.Branch.Index, m.Branch.Count)
		}
	}
	return out
}

func mustHistory(t *testing.T, s client.Service, session string) []client.Message {
	t.Helper()
	h, err := s.History(ctxT(t), session, 0)
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	return h
}

func wantView(t *testing.T, what string, got []client.Message, want ...string) {
	t.Helper()
	if g := branchView(got); fmt.Sprint(g) != fmt.Sprint(want) {
		t.Fatalf("%s:\n got %q\nwant %q", what, g, want)
	}
}

// lastPrompt is the last LLM request's messages as "role:content" (system prompts left out).
func lastPrompt(fake *llmtest.Server) []string {
	reqs := fake.Requests()
	var out []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role != "system" {
			out = append(out, m.Role+":"+m.Content)
		}
	}
	return out
}

// testBranches: regenerate keeps the old reply on a sibling branch (‹1/2›, browsable), edit
// starts a branch at a user message, the model and recall see the current branch only, and
// history pages backwards with a before cursor.
func testBranches(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	fake := addFake(t, s)
	fake.Script(llmtest.Reply{Text: "walruses are pinnipeds", Usage: &llm.Usage{PromptTokens: 42, CompletionTokens: 7, TotalTokens: 49}})
	if _, err := s.Chat(ctx, client.ChatRequest{Input: "what is a walrus?"}, nil); err != nil {
		t.Fatal(err)
	}
	h := mustHistory(t, s, "main")
	wantView(t, "first turn", h, "user:what is a walrus?", "assistant:walruses are pinnipeds")
	if u := h[1].Usage; u == nil || u.PromptTokens != 42 || u.CompletionTokens != 7 || u.Millis < 0 {
		t.Errorf("reply usage = %+v, want the provider's 42/7", u)
	}
	q, a1 := h[0], h[1]

	// Regenerate: the question is asked again once, the old reply stays as ‹1/2›.
	fake.Script(llmtest.Reply{Text: "walruses are large tusked seals"})
	var final client.ChatEvent
	res, err := s.Chat(ctx, client.ChatRequest{Regenerate: a1.ID}, func(ev client.ChatEvent) {
		if ev.Type == client.EventFinal {
			final = ev
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "walruses are large tusked seals" || res.Usage == nil || final.Usage == nil || final.Usage.CompletionTokens != 5 {
		t.Errorf("regenerated result %+v, final event usage %+v", res, final.Usage)
	}
	if got := lastPrompt(fake); fmt.Sprint(got) != fmt.Sprint([]string{"user:what is a walrus?"}) {
		t.Errorf("regenerate prompt = %q, want the question once and not the old reply", got)
	}
	h = mustHistory(t, s, "main")
	wantView(t, "after regenerate", h, "user:what is a walrus?", "assistant:walruses are large tusked seals ‹2/2›")
	if h[0].ID != q.ID || h[1].Parent != q.ID || h[1].Branch.Siblings[0] != a1.ID {
		t.Errorf("regenerated reply %+v does not follow the question %d beside %d", h[1], q.ID, a1.ID)
	}
	a2 := h[1]

	// Browse back to the first reply, and forth again.
	if err := s.SwitchBranch(ctx, "main", a1.ID); err != nil {
		t.Fatal(err)
	}
	wantView(t, "switched to ‹1/2›", mustHistory(t, s, "main"), "user:what is a walrus?", "assistant:walruses are pinnipeds ‹1/2›")
	if err := s.SwitchBranch(ctx, "main", a2.ID); err != nil {
		t.Fatal(err)
	}

	// A follow-up continues the current branch; the model sees that branch only.
	fake.Script(llmtest.Reply{Text: "in the arctic"})
	if _, err := s.Chat(ctx, client.ChatRequest{Input: "where do they live?"}, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := lastPrompt(fake), []string{"user:what is a walrus?", "assistant:walruses are large tusked seals", "user:where do they live?"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("follow-up prompt = %q, want %q", got, want)
	}

	// Edit the first question: a new root branch; the walrus branch is kept but not seen.
	fake.Script(llmtest.Reply{Text: "seals are pinnipeds too"})
	if _, err := s.Chat(ctx, client.ChatRequest{Edit: q.ID, Input: "what is a seal?"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := lastPrompt(fake); fmt.Sprint(got) != fmt.Sprint([]string{"user:what is a seal?"}) {
		t.Errorf("edited prompt = %q, want only the edited question", got)
	}
	h = mustHistory(t, s, "main")
	wantView(t, "after edit", h, "user:what is a seal? ‹2/2›", "assistant:seals are pinnipeds too")
	hits, err := s.SearchMemory(ctx, client.MemoryQuery{Text: "arctic"})
	if err != nil || len(hits) != 0 {
		t.Errorf("SearchMemory(arctic) off the branch = %+v, %v; want no hits", hits, err)
	}
	// Switching to the first question's branch brings its newest path back.
	if err := s.SwitchBranch(ctx, "main", q.ID); err != nil {
		t.Fatal(err)
	}
	wantView(t, "back on the walrus branch", mustHistory(t, s, "main"), "user:what is a walrus? ‹1/2›",
		"assistant:walruses are large tusked seals ‹2/2›", "user:where do they live?", "assistant:in the arctic")
	if hits, err := s.SearchMemory(ctx, client.MemoryQuery{Text: "arctic"}); err != nil || len(hits) == 0 {
		t.Errorf("SearchMemory(arctic) on the branch = %+v, %v; want a hit", hits, err)
	}

	// Pages walk the branch backwards.
	p, err := s.HistoryPage(ctx, client.HistoryQuery{Session: "main", Limit: 3})
	if err != nil || !p.More || len(p.Messages) != 3 || p.Messages[2].Content != "in the arctic" {
		t.Fatalf("HistoryPage(limit 3) = %+v, %v", p, err)
	}
	p, err = s.HistoryPage(ctx, client.HistoryQuery{Session: "main", Before: p.Messages[0].ID, Limit: 3})
	if err != nil || p.More || len(p.Messages) != 1 || p.Messages[0].ID != q.ID || p.Messages[0].Branch == nil {
		t.Fatalf("HistoryPage(before) = %+v, %v", p, err)
	}

	// Bad requests get clear errors and change nothing.
	for _, tt := range []struct {
		name string
		err  error
		want error
	}{
		{"regenerate with input", chatErr(s, client.ChatRequest{Regenerate: a2.ID, Input: "x"}), client.ErrInvalid},
		{"regenerate and edit", chatErr(s, client.ChatRequest{Regenerate: a2.ID, Edit: q.ID, Input: "x"}), client.ErrInvalid},
		{"edit a reply", chatErr(s, client.ChatRequest{Edit: a2.ID, Input: "x"}), client.ErrInvalid},
		{"edit without text", chatErr(s, client.ChatRequest{Edit: q.ID}), client.ErrInvalid},
		{"regenerate off the branch", chatErr(s, client.ChatRequest{Regenerate: a1.ID}), client.ErrInvalid},
		{"regenerate an unknown message", chatErr(s, client.ChatRequest{Regenerate: 1 << 40}), client.ErrNotFound},
		{"switch to an unknown message", s.SwitchBranch(ctx, "main", 1<<40), client.ErrNotFound},
		{"switch in an unknown session", s.SwitchBranch(ctx, "ghost", q.ID), client.ErrNotFound},
		{"page too large", pageErr(s, client.HistoryQuery{Session: "main", Limit: client.MaxHistoryPage + 1}), client.ErrInvalid},
		{"page of an unknown session", pageErr(s, client.HistoryQuery{Session: "ghost"}), client.ErrNotFound},
	} {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, tt.err, tt.want)
		}
	}
	wantView(t, "after the bad requests", mustHistory(t, s, "main"), "user:what is a walrus? ‹1/2›",
		"assistant:walruses are large tusked seals ‹2/2›", "user:where do they live?", "assistant:in the arctic")
}

func chatErr(s client.Service, req client.ChatRequest) error {
	_, err := s.Chat(context.Background(), req, nil)
	return err
}

func pageErr(s client.Service, q client.HistoryQuery) error {
	_, err := s.HistoryPage(context.Background(), q)
	return err
}
