//go:build integration

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/kerneltest/hosttest"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox/sandboxtest"
)

// TestQQThroughKernel runs the built plugin under the real host and kernel, driven through the
// kernel's API, against the fake OneBot bridge (forward mode): a group message that @-mentions
// the bot becomes a turn in the group's session whose reply goes back with send_group_msg; the
// owner-only tool is denied in the group and works for the owner.
func TestQQThroughKernel(t *testing.T) {
	tk := hosttest.Start(t, hosttest.Options{API: true})
	fake := tk.AddModel(t)
	bot := newFakeBot(t, botID, "s3cret")
	bot.answer = func(r Request) Response {
		if r.Action == "get_group_list" {
			return Response{Status: "ok", Data: json.RawMessage(`[{"group_id":42,"group_name":"Kites","member_count":9}]`)}
		}
		return Response{}
	}
	url := bot.serveForward()
	p := tk.RunPlugin(t, "qq", hosttest.Build(t), "HOLOGRAM_QQ_URL="+url, "HOLOGRAM_QQ_TOKEN=s3cret", "HOLOGRAM_QQ_OWNER="+ownerID)
	sandboxtest.CheckProcess(t, p.PID) // its main confined itself
	bot.waitUp(1)
	ctx := hosttest.Context(t)

	// Not mentioned: no turn. Mentioned: a turn (the model answers "PONG <input>") and a reply.
	bot.push(groupMsg(42, 777, "Ann", "", "nobody asked you"))
	bot.push(groupMsg(42, 777, "Ann", botID, " what is 6*7?"))
	sent := bot.nextCall()
	b, _ := json.Marshal(sent.Params)
	if sent.Action != "send_group_msg" || string(b) != `{"group_id":42,"message":[{"data":{"text":"PONG Ann (777): what is 6*7?"},"type":"text"}]}` {
		t.Fatalf("the bridge got %s %s", sent.Action, b)
	}
	for _, r := range fake.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "nobody asked you") {
				t.Fatal("a group message without a mention reached the model")
			}
		}
	}
	ss, err := tk.API.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sess client.Session
	for _, s := range ss {
		if s.ID == "chan:qq:group_42" {
			sess = s
		}
	}
	if sess.Channel != "qq" || sess.Partner != "group_42" || sess.Scope != "group:qq/group_42" {
		t.Fatalf("the group's session %+v", sess)
	}

	// In the group the owner-only tool is denied, and the denial is the call's result (the
	// turn ends there: every call was denied). The kernel denies it first (qq_groups declares
	// no visibility: owner-only); the plugin's own gate stays behind it.
	fake.Script(hosttest.Call("g1", "qq_groups", `{}`))
	bot.push(groupMsg(42, 20002, "Owner", botID, "list your groups"))
	if c := bot.nextCall(); c.Action != "send_group_msg" {
		t.Fatalf("the bridge got %s", c.Action)
	}
	if m := tk.ToolResult(t, "chan:qq:group_42", "g1"); m.ToolStatus != "denied" || !strings.Contains(m.Content, "qq_groups was denied: it is for the owner only") {
		t.Fatalf("qq_groups in a group: %+v", m)
	}

	// The owner, through the API, may.
	fake.Script(hosttest.Call("o1", "qq_groups", `{}`), llmtest.Reply{Text: "listed"})
	if _, err := tk.API.Chat(ctx, client.ChatRequest{Session: "main", Input: "which QQ groups?"}, nil); err != nil {
		t.Fatal(err)
	}
	if m := tk.ToolResult(t, "main", "o1"); m.ToolStatus != "ok" || m.Content != "1 groups\n- group_42 Kites (9 members)" {
		t.Fatalf("qq_groups for the owner: %+v", m)
	}
	if c := bot.nextCall(); c.Action != "get_group_list" {
		t.Fatalf("the bridge got %s", c.Action)
	}
}
