//go:build integration

package kernel_test

import (
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// TestNativeEchoPlugin runs the echo plugin, built from source, under the real host in a kernel
// with the memory on and a scripted model: hooks, channels, memory scope, notifications,
// completions, capabilities and the pause, end to end.
func TestNativeEchoPlugin(t *testing.T) {
	k := newMemKernel(t, memOptions{})
	fake := withFake(t, k)
	ctx := testCtx(t)
	p, err := k.Service().AddPlugin(ctx, client.PluginConfig{Name: "echo", Dir: buildPlugin(t, "echo", t.TempDir(), nil)})
	if err != nil || p.State != "running" {
		logs, _ := k.Service().PluginLogs(ctx, "echo", 0)
		t.Fatalf("add echo: %+v %v\n%+v", p, err, logs)
	}
	waitLog(t, k, "echo", `"msg":"echo started"`, `"shm":true`, `"native":true`)

	t.Run("a short-circuit reply never reaches the model", func(t *testing.T) {
		n := len(fake.Requests())
		if got := chat(t, k, "main", "/ping").Text; got != "pong from echo" {
			t.Fatalf("reply %q", got)
		}
		if len(fake.Requests()) != n {
			t.Fatal("the model was asked although a hook replied")
		}
	})

	t.Run("a deny is the call's result", func(t *testing.T) {
		fake.Script(callReply("d1", "echo", `{"text":"forbidden fruit"}`))
		res := chat(t, k, "main", "say it")
		m := toolResult(t, k, "main", "d1")
		if m.ToolStatus != "denied" || !strings.Contains(m.Content, "echo guard") || !strings.Contains(res.Text, "every tool call was denied") {
			t.Fatalf("result %+v, reply %q", m, res.Text)
		}
	})

	t.Run("a hook that sleeps past its timeout is skipped and the turn completes", func(t *testing.T) {
		n := len(fake.Requests())
		res := chat(t, k, "main", "/slow and /sign please")
		if res.Text != "PONG /slow and /sign please — echo" {
			t.Fatalf("reply %q: want the model's answer, signed by the before_output hook", res.Text)
		}
		if prompt := promptText(fake.Requests(), n); strings.Contains(prompt, "the slow hook ran") {
			t.Fatal("the slow hook's patch was applied")
		}
		waitLog(t, k, "echo", "slow hook cancelled")
	})

	t.Run("llm/complete and owner/notify", func(t *testing.T) {
		// The model calls echo_complete, whose llm/complete gets "forty-two", then echo_notify.
		fake.Script(callReply("c1", "echo_complete", `{"prompt":"6*7?"}`), llmtest.Reply{Text: "forty-two"},
			callReply("n1", "echo_notify", `{"title":"Reminder","body":"water the plants"}`), llmtest.Reply{Text: "done"})
		chat(t, k, "main", "ask and notify")
		if m := toolResult(t, k, "main", "c1"); m.ToolStatus != "ok" || !strings.HasPrefix(m.Content, "the model says: forty-two") {
			t.Fatalf("complete %+v", m)
		}
		if m := toolResult(t, k, "main", "n1"); m.ToolStatus != "ok" || m.Content != "notified the owner (chat)" {
			t.Fatalf("notify %+v", m)
		}
		msgs, _ := k.Service().History(ctx, "main", 0)
		found := false
		for _, m := range msgs {
			found = found || (m.Role == "assistant" && m.Content == "[echo] Reminder\nwater the plants")
		}
		if !found {
			t.Fatal("the notification is not in the owner's private chat")
		}
	})

	t.Run("memory stays in the turn's scope", func(t *testing.T) {
		chat(t, k, "main", "my locker code is 4711, the locker at the gym")
		if _, err := k.Service().CreateSession(ctx, client.Session{ID: "grp", Channel: "echo", Partner: "group_9", Scope: "group:echo/group_9"}); err != nil {
			t.Fatal(err)
		}
		fake.Script(callReply("g1", "echo_recall", `{"query":"locker code gym"}`),
			callReply("g2", "echo_remember", `{"text":"the group likes kites"}`), llmtest.Reply{Text: "noted"})
		chat(t, k, "grp", "what is the locker code?")
		m := toolResult(t, k, "grp", "g1")
		if !strings.HasPrefix(m.Content, "scope group:echo/group_9:") || strings.Contains(m.Content, "4711") {
			t.Fatalf("a group turn's plugin recalled private memory: %q", m.Content)
		}
		if m := toolResult(t, k, "grp", "g2"); !strings.Contains(m.Content, "in plugin:echo (channel echo, scope group:echo/group_9)") {
			t.Fatalf("remember in a group turn: %q", m.Content)
		}
		fake.Script(callReply("o1", "echo_recall", `{"query":"locker code gym"}`), llmtest.Reply{Text: "found"})
		chat(t, k, "main", "find my locker code")
		if m := toolResult(t, k, "main", "o1"); !strings.HasPrefix(m.Content, "scope private:") || !strings.Contains(m.Content, "4711") {
			t.Fatalf("the owner's turn did not recall its own memory: %q", m.Content)
		}
	})

	t.Run("a channel round trip", func(t *testing.T) {
		sub := k.Bus().Subscribe(kernel.EventChannelDelivered, kernel.EventChannelDeliveryFailed)
		defer sub.Close()
		// The owner's turn makes the plugin inject a message; the channel's turn (the model's
		// default answer, PONG <input>) is delivered back through the plugin.
		fake.Script(callReply("i1", "echo_inject", `{"partner":"group_1","text":"hello from the group"}`))
		chat(t, k, "main", "inject")
		ev := nextEvent(t, sub)
		if ev.Type != kernel.EventChannelDelivered || ev.Payload["session"] != "chan:echo:group_1" || ev.Payload["message_id"] == "" {
			t.Fatalf("event %+v", ev)
		}
		waitLog(t, k, "echo", `"msg":"echo delivered"`, `"partner":"group_1"`, `"text":"PONG hello from the group"`)
		ss, _ := k.Service().Sessions(ctx)
		var sess client.Session
		for _, s := range ss {
			if s.ID == "chan:echo:group_1" {
				sess = s
			}
		}
		if sess.Channel != "echo" || sess.Partner != "group_1" || sess.Scope != "group:echo/group_1" {
			t.Fatalf("channel session %+v", sess)
		}
		// A delivery the plugin reports as failed is published as such.
		fake.Script(callReply("i2", "echo_inject", `{"partner":"unreachable","text":"anyone?"}`))
		chat(t, k, "main", "inject again")
		ev = nextEvent(t, sub)
		if ev.Type != kernel.EventChannelDeliveryFailed || !strings.Contains(ev.Payload["error"].(string), "partner unreachable") {
			t.Fatalf("event %+v", ev)
		}
	})

	t.Run("paused and resumed reach the plugin; channel input stops", func(t *testing.T) {
		if err := k.Service().SetPaused(ctx, true); err != nil {
			t.Fatal(err)
		}
		waitLog(t, k, "echo", `"msg":"echo paused"`)
		fake.Script(callReply("p1", "echo_inject", `{"partner":"group_1","text":"while paused"}`), llmtest.Reply{Text: "ok"})
		chat(t, k, "main", "inject while paused")
		if m := toolResult(t, k, "main", "p1"); m.ToolStatus != "error" || !strings.Contains(m.Content, "the kernel is paused") {
			t.Fatalf("input while paused: %+v", m)
		}
		if err := k.Service().SetPaused(ctx, false); err != nil {
			t.Fatal(err)
		}
		waitLog(t, k, "echo", `"msg":"echo resumed"`)
		waitLog(t, k, "echo", `"msg":"echo event"`, `"type":"turn_finished"`)
	})

	t.Run("an undeclared capability is an error naming it", func(t *testing.T) {
		if _, err := k.Service().AddPlugin(ctx, client.PluginConfig{Name: "mute", Dir: buildPlugin(t, "echo", t.TempDir(), []string{"hooks", "channels"})}); err != nil {
			t.Fatal(err)
		}
		defer k.Service().PluginAction(ctx, "mute", client.PluginRemove)
		fake.Script(callReply("u1", "mute__echo_complete", `{"prompt":"hi"}`), llmtest.Reply{Text: "ok"})
		chat(t, k, "main", "use the muted plugin")
		m := toolResult(t, k, "main", "u1")
		if m.ToolStatus != "error" || !strings.Contains(m.Content, `method llm/complete needs capability "llm" (not declared in the manifest)`) {
			t.Fatalf("result %+v", m)
		}
	})
}
