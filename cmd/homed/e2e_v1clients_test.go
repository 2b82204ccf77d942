//go:build integration

package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/kerneltest"
)

// TestV1ClientTokensAndImages drives homed with the official openai npm client through client
// tokens made by `waiter token add`: an owner token (--owner) sees the owner's private memory
// and is offered owner-only tools (the positive control); a plain token never, with or without
// `user`, nor through a session it names; it reaches /v1 only; a removed token is refused. Then
// an image part: the data URL reaches the vision model as the image, is stored as the message's
// image block, and a remote URL is a clear 400.
func TestV1ClientTokensAndImages(t *testing.T) {
	everything := kerneltest.NPMPeer(t, "@modelcontextprotocol/server-everything")
	fake := startFakeOpenAI(t)
	e := newEnv(t)
	base, ownerToken := v1Homed(t, e, "")
	if out, errOut, code := e.waiter("", []string{"HOLOGRAM_API_KEY=sk-v1"}, "provider", "add", "fake", "--base-url", fake.url, "--model", "fake-1", "--vision", "yes"); code != 0 {
		t.Fatalf("provider add: %d %s%s", code, out, errOut)
	}
	// An MCP server added without --visibility: its tools are owner-only.
	if out, errOut, code := e.waiter("", nil, "plugin", "add", "everything", "--command", "node '"+everything+"' stdio"); code != 0 {
		t.Fatalf("plugin add: %d %s%s", code, out, errOut)
	}
	e.waitPlugin("everything", "running", func(p client.Plugin) bool { return p.State == "running" && contains(p.Tools, "echo") })
	// The owner's private memory, cooled to L2 where every session's recall could reach it.
	const pin = "PIN-55120"
	if got := e.ask("remember my safe " + pin); !strings.Contains(got, pin) {
		t.Fatalf("the owner's chat: %q", got)
	}
	if code, out := e.postJSON("/api/v1/memory/cool-all", ""); code != 200 {
		t.Fatalf("cool-all: %d %s", code, out)
	}

	var ownerApp, plainApp client.APIToken
	e.waiterJSON(&ownerApp, "token", "add", "owner-app", "--owner", "--json")
	e.waiterJSON(&plainApp, "token", "add", "plain-app", "--json")
	if ownerApp.Scope != "private" || plainApp.Scope != "group:token:plain-app" || !strings.HasPrefix(plainApp.Token, "v1_") {
		t.Fatalf("tokens: %+v %+v", ownerApp, plainApp)
	}
	var listed []client.APIToken
	e.waiterJSON(&listed, "token", "list", "--json")
	if len(listed) != 2 || listed[0].Token != "" {
		t.Fatalf("token list: %+v", listed)
	}

	// Each client recalls the owner's safe with coldcontext_query (offered in every scope, it
	// searches the session's) and tries an owner-only tool.
	for _, tc := range []struct {
		name, token, user string
		owner             bool
	}{
		{"owner token", ownerApp.Token, "", true},
		{"plain token", plainApp.Token, "", false},
		{"plain token with user", plainApp.Token, "zed", false},
		{"owner token with user", ownerApp.Token, "yan", false}, // `user` is an end user's, whatever the token
	} {
		t.Run(tc.name, func(t *testing.T) {
			recall := fmt.Sprintf(`CALL coldcontext_query {"query":"my safe"} (%s)`, tc.name)
			r := v1Chat(t, base, tc.token, map[string]any{"user": tc.user, "messages": userMsgs(recall)})
			reply, _ := r["reply"].(string)
			sent := fake.lastRequestWith(t, "("+tc.name+")") // the model's request with the tool's result
			if !strings.HasPrefix(reply, "DONE ") || !strings.Contains(sent, `"role": "tool"`) || strings.Contains(sent, pin) != tc.owner || strings.Contains(reply, pin) && !tc.owner {
				t.Fatalf("recall: the reply %q, the owner's safe in the prompt %v (owner scope %v)", reply, strings.Contains(sent, pin), tc.owner)
			}
			echo := fmt.Sprintf(`CALL echo {"message":"%s"}`, tc.name)
			r = v1Chat(t, base, tc.token, map[string]any{"user": tc.user, "messages": userMsgs(echo)})
			offered := contains(fake.offered(t, echo), "echo")
			if offered != tc.owner || (tc.owner && !strings.HasPrefix(fmt.Sprint(r["reply"]), "DONE ")) || (!tc.owner && r["reply"] != "NOTOOL echo") {
				t.Fatalf("the owner-only tool: offered %v, reply %v", offered, r)
			}
		})
	}
	// A plain token cannot reach the owner's session by naming it, nor the owner's API.
	r := v1Chat(t, base, plainApp.Token, map[string]any{"messages": userMsgs("hello"), "headers": map[string]string{"X-Hologram-Session": "main"}})
	if r["status"] != float64(400) || !strings.Contains(fmt.Sprint(r["error"]), "scope") {
		t.Fatalf("a plain token naming the owner's session: %v", r)
	}
	req, _ := http.NewRequest("GET", base+"/api/v1/memory/search?q=safe", nil)
	req.Header.Set("Authorization", "Bearer "+ownerApp.Token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Fatalf("an owner client token on /api/v1: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if out, errOut, code := e.waiter("", nil, "token", "remove", "plain-app"); code != 0 {
		t.Fatalf("token remove: %d %s%s", code, out, errOut)
	}
	if r := v1Chat(t, base, plainApp.Token, map[string]any{"messages": userMsgs("still there?")}); r["status"] != float64(401) {
		t.Fatalf("a removed token: %v", r)
	}

	// An image part reaches the vision model as the image and is stored with the message.
	var pic bytes.Buffer
	if err := pngEncode(&pic); err != nil {
		t.Fatal(err)
	}
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pic.Bytes())
	const marker = "what is in this picture?"
	content := []map[string]any{{"type": "text", "text": marker}, {"type": "image_url", "image_url": map[string]string{"url": dataURL}}}
	if r := v1Chat(t, base, ownerToken, map[string]any{"user": "pia", "messages": []map[string]any{{"role": "user", "content": content}}}); r["error"] != nil || !strings.Contains(fmt.Sprint(r["reply"]), marker) {
		t.Fatalf("an image part: %v", r)
	}
	roles, images := sentImages(t, fake.log, marker)
	if last := len(roles) - 1; len(images[last]) != 1 || images[last][0] != dataURL {
		t.Fatalf("the vision model got images %v with roles %v, want the data URL with the user message", len(images[last]), roles)
	}
	var hist []client.Message
	e.waiterJSON(&hist, "history", "--session", "pia", "--json")
	if len(hist) < 1 || hist[0].Role != "user" || len(hist[0].Blocks) != 1 || hist[0].Blocks[0].Kind != "image" || hist[0].Blocks[0].MIME != "image/png" {
		t.Fatalf("the stored message: %+v", hist)
	}
	// A message of images alone is a question too.
	if r := v1Chat(t, base, ownerToken, map[string]any{"user": "pib", "messages": []map[string]any{{"role": "user", "content": content[1:]}}}); r["error"] != nil || !strings.Contains(fmt.Sprint(r["reply"]), "attached image") {
		t.Fatalf("an image alone: %v", r)
	}
	if _, images := sentImages(t, fake.log, "attached image"); len(images) != 1 {
		t.Fatalf("an image alone: the vision model got %v", images)
	}
	content[1]["image_url"] = map[string]string{"url": "https://example.com/cat.png"}
	if r := v1Chat(t, base, ownerToken, map[string]any{"user": "pia", "messages": []map[string]any{{"role": "user", "content": content}}, "max_retries": 0}); r["status"] != float64(400) || !strings.Contains(fmt.Sprint(r["error"]), "remote image URLs are not fetched") {
		t.Fatalf("a remote image URL: %v", r)
	}
}
