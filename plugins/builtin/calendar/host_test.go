//go:build integration

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/kerneltest/hosttest"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox/sandboxtest"
)

// TestCalendarUnderTheRealKernel runs the built plugin under the real host in a real kernel: a
// reminder missed while the agent was down stays undelivered while the kernel is paused and
// arrives, marked late, as an owner notification on resume; a reminder set through the model
// arrives on time in the owner's chat.
func TestCalendarUnderTheRealKernel(t *testing.T) {
	k := hosttest.Start(t, hosttest.Options{})
	ctx := hosttest.Context(t)
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
	fake := k.AddModel(t)
	sub := k.Bus().Subscribe(kernel.EventOwnerNotification, kernel.EventKernelResumed)
	defer sub.Close()
	if err := k.Service().SetPaused(ctx, true); err != nil {
		t.Fatal(err)
	}
	p := k.RunPlugin(t, "calendar", hosttest.Build(t), "XDG_DATA_HOME="+xdg, "HOLOGRAM_CALENDAR_TZ=UTC")
	sandboxtest.CheckProcess(t, p.PID) // its main confined itself
	k.WaitLog(t, "calendar", `"msg":"calendar started"`, `"paused":true`, `"entries":1`)

	// The owner's chat works while paused; the calendar answers, and delivers nothing.
	fake.Script(hosttest.Call("l1", "calendar_list", `{"from":"`+now.Add(-time.Hour).Format(time.RFC3339)+`"}`), llmtest.Reply{Text: "listed"})
	k.Ask(t, "main", "what is on my calendar?")
	if m := k.ToolResult(t, "main", "l1"); m.ToolStatus != "ok" || !strings.Contains(m.Content, "Missed standup [reminder] (id m1)") {
		t.Fatalf("calendar_list: %+v", m)
	}
	if err := k.Service().SetPaused(ctx, false); err != nil {
		t.Fatal(err)
	}
	if ev := hosttest.NextEvent(t, sub); ev.Type != kernel.EventKernelResumed {
		t.Fatalf("first event %+v: a reminder was delivered while the kernel was paused", ev)
	}
	ev := hosttest.NextEvent(t, sub)
	if ev.Type != kernel.EventOwnerNotification || ev.Payload["plugin"] != "calendar" || ev.Payload["title"] != "Late reminder: Missed standup" ||
		!strings.Contains(ev.Payload["body"].(string), "is delivered late: the agent was not running.") {
		t.Fatalf("event %+v", ev)
	}

	// A reminder set through the model arrives at its time.
	at := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second).Add(time.Second)
	fake.Script(hosttest.Call("r1", "calendar_remind", `{"text":"Take the tea out","at":"`+at.Format(time.RFC3339)+`"}`), llmtest.Reply{Text: "will do"})
	k.Ask(t, "main", "remind me to take the tea out in a few seconds")
	if m := k.ToolResult(t, "main", "r1"); m.ToolStatus != "ok" || !strings.HasPrefix(m.Content, "reminder set: ") {
		t.Fatalf("calendar_remind: %+v", m)
	}
	ev = hosttest.NextEvent(t, sub)
	if ev.Type != kernel.EventOwnerNotification || ev.Payload["title"] != "Reminder: Take the tea out" {
		t.Fatalf("event %+v", ev)
	}
	if time.Now().Before(at) {
		t.Fatalf("the reminder due at %s arrived early, at %s", at, time.Now().UTC())
	}
	msgs, err := k.Service().History(ctx, "main", 0)
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
