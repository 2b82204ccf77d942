package kerneltest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// testAssistants: presets are saved, listed, checked and removed; a chat started from one has
// its instructions, its model and only its tools (a call to another one is refused), while a
// chat not started from one offers every tool. Tools come from a real MCP server (npm peer).
func testAssistants(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	as, ok := s.(client.AssistantService)
	if !ok {
		t.Fatalf("%T does not implement client.AssistantService", s)
	}
	if got, err := as.Assistants(ctx); err != nil || len(got) != 0 {
		t.Fatalf("Assistants on a fresh kernel = %v, %v", got, err)
	}
	bad := []client.Assistant{
		{Name: ""},
		{Name: "   "},
		{Name: "two\nlines"},
		{Name: strings.Repeat("n", client.MaxAssistantName+1)},
		{Name: "x", ID: "Has Space"},
		{Name: "x", ID: "-lead"},
		{Name: "x", Instructions: strings.Repeat("i", client.MaxAssistantInstructs+1)},
		{Name: "x", Instructions: "a NUL \x00 byte"},
		{Name: "x", Model: "m\n2"},
		{Name: "x", Tools: []string{"echo", "rm -rf"}},
		{Name: "x", Tools: make([]string, client.MaxAssistantTools+1)},
	}
	for _, a := range bad {
		if _, err := as.SaveAssistant(ctx, a); !errors.Is(err, client.ErrInvalid) {
			t.Errorf("SaveAssistant(%.60q) = %v, want ErrInvalid", a.Name+a.ID+a.Model+strings.Join(a.Tools, ","), err)
		}
	}
	entry := NPMPeer(t, "@modelcontextprotocol/server-everything")
	if _, err := s.AddPlugin(ctx, client.PluginConfig{Name: "everything", Command: []string{"node", entry, "stdio"}}); err != nil {
		t.Fatalf("AddPlugin: %v", err)
	}
	fake := addFake(t, s)
	if _, err := s.AddProvider(ctx, client.ProviderConfig{Name: "fake2", BaseURL: fake.URL(), Model: "fake-2", APIKey: "sk-suite", Priority: 5}); err != nil {
		t.Fatal(err)
	}
	echo, err := as.SaveAssistant(ctx, client.Assistant{Name: "Echo Helper", Instructions: "You only echo.", Model: "fake-2", Tools: []string{" echo ", "echo"}})
	if err != nil || echo.ID != "echo-helper" || !slices.Equal(echo.Tools, []string{"echo"}) || echo.Model != "fake-2" {
		t.Fatalf("SaveAssistant = %+v, %v", echo, err)
	}
	all, err := as.SaveAssistant(ctx, client.Assistant{ID: "all", Name: "Anything", Instructions: "Use any tool."})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := as.Assistants(ctx); err != nil || len(got) != 2 || got[0].ID != "all" || got[1].ID != "echo-helper" {
		t.Fatalf("Assistants = %+v, %v; want Anything, Echo Helper", got, err)
	}
	if _, err := as.StartAssistant(ctx, "ghost", ""); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("StartAssistant(ghost) = %v, want ErrNotFound", err)
	}
	if _, err := as.StartAssistant(ctx, echo.ID, "bad\ntitle"); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("StartAssistant with a two-line title = %v, want ErrInvalid", err)
	}
	sess, err := as.StartAssistant(ctx, echo.ID, "")
	if err != nil || sess.Title != "Echo Helper" || sess.SystemPrompt != "You only echo." || sess.Model != "fake-2" || !strings.HasPrefix(sess.ID, "echo-helper-") {
		t.Fatalf("StartAssistant = %+v, %v", sess, err)
	}
	// The model is the preset's, the instructions follow the base prompt, only echo (and the
	// kernel's own tools) is offered, and a call to get-sum is refused.
	fake.Script(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "get-sum", Arguments: `{"a":1,"b":2}`}}},
		llmtest.Reply{Text: "I may only echo."},
	)
	var c collect
	if _, err := s.Chat(ctx, client.ChatRequest{Session: sess.ID, Input: "add 1 and 2"}, c.emit); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	first := reqs[len(reqs)-2]
	if first.Model != "fake-2" || !slices.Contains(first.Tools, "echo") || !slices.Contains(first.Tools, "time_now") || slices.Contains(first.Tools, "get-sum") {
		t.Fatalf("request of the assistant's chat: model %q, tools %v; want fake-2 with echo and time_now, no get-sum", first.Model, first.Tools)
	}
	if sp := systemPrompt(fake); !strings.HasSuffix(sp, "You only echo.") {
		t.Fatalf("system prompt %q does not end with the preset's instructions", sp)
	}
	if st, err := as.SessionTools(ctx, sess.ID); err != nil || st.Assistant != echo.ID || !slices.Equal(st.Tools, []string{"echo"}) {
		t.Fatalf("SessionTools(%s) = %+v, %v", sess.ID, st, err)
	}
	if st, err := as.SessionTools(ctx, "main"); err != nil || st.Assistant != "" || st.Tools == nil || len(st.Tools) != 0 {
		t.Fatalf("SessionTools(main) = %+v, %v; want every tool", st, err)
	}
	var result *client.ToolEvent
	for _, e := range c.evs {
		if e.Type == client.EventToolResult {
			result = e.Tool
		}
	}
	if result == nil || result.Status == "ok" || strings.Contains(result.Result, "3") {
		t.Fatalf("a call to a tool the assistant does not allow: %+v", result)
	}
	// Removing the preset keeps its chats as they are; a chat from "all" and the main chat
	// offer every tool.
	if err := as.RemoveAssistant(ctx, echo.ID); err != nil {
		t.Fatal(err)
	}
	if err := as.RemoveAssistant(ctx, echo.ID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("second RemoveAssistant = %v, want ErrNotFound", err)
	}
	fake.Script(llmtest.Reply{Text: "still echo only"})
	if _, err := s.Chat(ctx, client.ChatRequest{Session: sess.ID, Input: "again"}, nil); err != nil {
		t.Fatal(err)
	}
	if last := fake.Requests()[len(fake.Requests())-1]; slices.Contains(last.Tools, "get-sum") || !slices.Contains(last.Tools, "echo") {
		t.Fatalf("after the preset's removal its chat offers %v", last.Tools)
	}
	free, err := as.StartAssistant(ctx, all.ID, "Free chat")
	if err != nil || free.Title != "Free chat" || free.Model != "" {
		t.Fatalf("StartAssistant(all) = %+v, %v", free, err)
	}
	for _, id := range []string{free.ID, "main"} {
		fake.Script(llmtest.Reply{Text: "ok"})
		if _, err := s.Chat(ctx, client.ChatRequest{Session: id, Input: "hello"}, nil); err != nil {
			t.Fatal(err)
		}
		if last := fake.Requests()[len(fake.Requests())-1]; !slices.Contains(last.Tools, "get-sum") || !slices.Contains(last.Tools, "echo") {
			t.Fatalf("session %s offers %v; want every tool", id, last.Tools)
		}
	}
}
