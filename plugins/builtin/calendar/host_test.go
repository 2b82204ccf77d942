//go:build integration

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/events"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/kernel/llm/openai"
	"github.com/hologramagent/hologram/kernel/security"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// buildPlugin builds this plugin with the repository's flags into a new plugin directory
// beside its plugin.json, as `make build` lays it out.
func buildPlugin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if p, err := exec.LookPath("go"); err == nil {
		gobin = p
	}
	cmd := exec.Command(gobin, "build", "-trimpath", "-tags=sqlite_fts5", "-o", filepath.Join(dir, "calendar"), ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	raw, err := os.ReadFile("plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startKernel starts a real kernel on a SQLite file in a temporary data directory, with the
// OpenAI-compatible provider factory, as homed builds it.
func startKernel(t *testing.T) *kernel.Kernel {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default(func(string) string { return "" })
	cfg.DataDir = filepath.Join(dir, "data")
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "hologram.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	keys, err := security.LoadOrCreateKeyFile(filepath.Join(dir, "config", "key"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(cfg, kernel.Deps{Store: store, Sealer: security.NewCodec(keys), Tokens: memory.DefaultTokenize,
		NewProvider: func(ps kernel.ProviderSettings) (llm.Provider, error) {
			return openai.New(openai.Config{Name: ps.Name, BaseURL: ps.BaseURL, Model: ps.Model, APIKey: ps.APIKey, MaxRetries: -1})
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return k
}

// waitLog waits until a line of the plugin's log contains all of parts, for at most 30 s.
func waitLog(t *testing.T, k *kernel.Kernel, plugin string, parts ...string) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		lines, err := k.PluginLogs(context.Background(), plugin, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(l.Line, p)
			}
			if ok {
				return
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("plugin %s never logged %q; its log:\n%+v", plugin, parts, lines)
		}
	}
}

// nextEvent returns the next event of sub, failing after 30 s.
func nextEvent(t *testing.T, sub *events.Subscription) events.Event {
	t.Helper()
	select {
	case ev := <-sub.C():
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30 s")
	}
	return events.Event{}
}

// TestCalendarUnderTheRealKernel runs the built plugin under the real host in a real kernel: a
// reminder missed while the agent was down stays undelivered while the kernel is paused and
// arrives, marked late, as an owner notification on resume; a reminder set through the model
// arrives on time in the owner's chat.
func TestCalendarUnderTheRealKernel(t *testing.T) {
	k := startKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	xdg := t.TempDir()
	now := time.Now().UTC()
	// The calendar as the plugin left it an hour ago, with a reminder that fell due since.
	seed := map[string]any{"version": 1, "reminders": map[string]any{"delivered_through": now.Add(-time.Hour)},
		"events": []map[string]any{{"id": "m1", "kind": "reminder", "title": "Missed standup", "tz": "UTC",
			"start": now.Add(-10 * time.Minute), "remind": []string{"0m"}, "created": now.Add(-2 * time.Hour), "updated": now.Add(-2 * time.Hour)}}}
	raw, _ := json.Marshal(seed)
	if err := os.MkdirAll(filepath.Join(xdg, "hologram", "calendar"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "hologram", "calendar", "calendar.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewServer(t)
	if _, err := k.AddProvider(ctx, client.ProviderConfig{Name: "fake", BaseURL: fake.URL(), Model: "fake-1"}); err != nil {
		t.Fatal(err)
	}
	sub := k.Bus().Subscribe(kernel.EventOwnerNotification, kernel.EventKernelResumed)
	defer sub.Close()
	if err := k.SetPaused(ctx, true); err != nil {
		t.Fatal(err)
	}
	p, err := k.AddPlugin(ctx, client.PluginConfig{Name: "calendar", Dir: buildPlugin(t),
		Env: []string{"XDG_DATA_HOME=" + xdg, "HOLOGRAM_CALENDAR_TZ=UTC"}})
	if err != nil || p.State != "running" {
		logs, _ := k.PluginLogs(ctx, "calendar", 0)
		t.Fatalf("add calendar: %+v %v\n%+v", p, err, logs)
	}
	waitLog(t, k, "calendar", `"msg":"calendar started"`, `"paused":true`, `"entries":1`)

	call := func(id, name, args string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: args}}}
	}
	chat := func(input string) {
		t.Helper()
		if _, err := k.Chat(ctx, client.ChatRequest{Session: "main", Input: input}, nil); err != nil {
			t.Fatalf("chat %q: %v", input, err)
		}
	}
	toolResult := func(id string) client.Message {
		t.Helper()
		msgs, err := k.History(ctx, "main", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if m.Role == "tool" && m.ToolCallID == id {
				return m
			}
		}
		t.Fatalf("no result for call %s", id)
		return client.Message{}
	}

	// The owner's chat works while paused; the calendar answers, and delivers nothing.
	fake.Script(call("l1", "calendar_list", `{"from":"`+now.Add(-time.Hour).Format(time.RFC3339)+`"}`), llmtest.Reply{Text: "listed"})
	chat("what is on my calendar?")
	if m := toolResult("l1"); m.ToolStatus != "ok" || !strings.Contains(m.Content, "Missed standup [reminder] (id m1)") {
		t.Fatalf("calendar_list: %+v", m)
	}
	if err := k.SetPaused(ctx, false); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, sub); ev.Type != kernel.EventKernelResumed {
		t.Fatalf("first event %+v: a reminder was delivered while the kernel was paused", ev)
	}
	ev := nextEvent(t, sub)
	if ev.Type != kernel.EventOwnerNotification || ev.Payload["plugin"] != "calendar" || ev.Payload["title"] != "Late reminder: Missed standup" ||
		!strings.Contains(ev.Payload["body"].(string), "is delivered late: the agent was not running.") {
		t.Fatalf("event %+v", ev)
	}

	// A reminder set through the model arrives at its time.
	at := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second).Add(time.Second)
	fake.Script(call("r1", "calendar_remind", `{"text":"Take the tea out","at":"`+at.Format(time.RFC3339)+`"}`), llmtest.Reply{Text: "will do"})
	chat("remind me to take the tea out in a few seconds")
	if m := toolResult("r1"); m.ToolStatus != "ok" || !strings.HasPrefix(m.Content, "reminder set: ") {
		t.Fatalf("calendar_remind: %+v", m)
	}
	ev = nextEvent(t, sub)
	if ev.Type != kernel.EventOwnerNotification || ev.Payload["title"] != "Reminder: Take the tea out" {
		t.Fatalf("event %+v", ev)
	}
	if time.Now().Before(at) {
		t.Fatalf("the reminder due at %s arrived early, at %s", at, time.Now().UTC())
	}
	msgs, err := k.History(ctx, "main", 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range msgs {
		found = found || (m.Role == "assistant" && strings.HasPrefix(m.Content, "[calendar] Reminder: Take the tea out\nDue at "))
	}
	if !found {
		t.Fatal("the reminder is not in the owner's private chat")
	}
}
