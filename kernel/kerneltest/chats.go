package kerneltest

import (
	"errors"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// chatgptExport is a ChatGPT conversations.json of one conversation: a hidden system message,
// a user message edited once (the first version and its reply are another branch), and two
// turns on the current branch.
const chatgptExport = `[{"id":"k1","conversation_id":"k1","title":"Moving","create_time":1709287200,"update_time":1709287230,
"current_node":"a2","mapping":{
"root":{"id":"root","message":null,"parent":null,"children":["sys"]},
"sys":{"id":"sys","message":{"id":"sys","author":{"role":"system"},"create_time":null,"content":{"content_type":"text","parts":[""]},
  "metadata":{"is_visually_hidden_from_conversation":true},"recipient":"all"},"parent":"root","children":["old","u1"]},
"old":{"id":"old","message":{"id":"old","author":{"role":"user"},"create_time":1709287201,"content":{"content_type":"text","parts":["draft"]},"recipient":"all","metadata":{}},"parent":"sys","children":[]},
"u1":{"id":"u1","message":{"id":"u1","author":{"role":"user"},"create_time":1709287210,"content":{"content_type":"text","parts":["I live in Porto now."]},"recipient":"all","metadata":{}},"parent":"sys","children":["a1"]},
"a1":{"id":"a1","message":{"id":"a1","author":{"role":"assistant"},"create_time":1709287211,"content":{"content_type":"text","parts":["Porto is lovely."]},"recipient":"all","metadata":{}},"parent":"u1","children":["u2"]},
"u2":{"id":"u2","message":{"id":"u2","author":{"role":"user"},"create_time":1709287220,"content":{"content_type":"multimodal_text","parts":[{"content_type":"image_asset_pointer","asset_pointer":"file-service://file-1"},"这是我的新家。"]},"recipient":"all","metadata":{}},"parent":"a1","children":["a2"]},
"a2":{"id":"a2","message":{"id":"a2","author":{"role":"assistant"},"create_time":1709287230,"content":{"content_type":"text","parts":["很漂亮。"]},"recipient":"all","metadata":{}},"parent":"u2","children":[]}}}]`

// testChatImport: a ChatGPT export imports as a private session with its current branch, a
// re-import adds nothing, a broken file is ErrInvalid naming the byte, and CoolAll cools and
// distils the imported messages into the graph with progress.
func testChatImport(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	rep, err := s.ImportMemory(ctx, client.FormatChatGPT, strings.NewReader(chatgptExport))
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if rep.Sessions != 1 || rep.Events != 4 || rep.Skipped != 0 || rep.Chats == nil || rep.Chats.Imported != 1 ||
		rep.Chats.SkippedBy["branch"] != 1 || rep.Chats.SkippedBy["system"] != 1 || rep.Chats.SkippedBy["image"] != 1 {
		t.Fatalf("import report %+v %+v", rep, rep.Chats)
	}
	hist, err := s.History(ctx, "chatgpt-k1", 0)
	if err != nil || len(hist) != 4 || hist[0].Content != "I live in Porto now." || hist[3].Content != "很漂亮。" || hist[0].Time.Unix() != 1709287210 {
		t.Fatalf("history %+v, %v", hist, err)
	}
	sessions, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ss := range sessions {
		if ss.ID == "chatgpt-k1" {
			found = ss.Title == "Moving" && ss.Scope == "private"
		}
	}
	if !found {
		t.Errorf("sessions %+v lack a private chatgpt-k1 titled Moving", sessions)
	}
	if again, err := s.ImportMemory(ctx, client.FormatChatGPT, strings.NewReader(chatgptExport)); err != nil || again.Events != 0 || again.Skipped != 4 || again.Chats.Unchanged != 1 {
		t.Errorf("re-import %+v, %v", again, err)
	}
	if _, err := s.ImportMemory(ctx, client.FormatOpenWebUI, strings.NewReader(`[{"id":"w","chat":{"history":{"currentId":"m1","messages":{"m1":{"id":"m1","role":"user","content":"hi"}}}}},{`)); !errors.Is(err, client.ErrInvalid) ||
		!strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated file: %v", err)
	}

	var phases []string
	gc, err := s.CoolAll(ctx, func(p client.GCProgress) {
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
	})
	if err != nil {
		t.Fatalf("CoolAll: %v", err)
	}
	if gc.Cooled < 5 || gc.Distilled < 5 || strings.Join(phases, ",") != "cooling,distilling" { // the 4 imported, 1 from the Open WebUI file
		t.Errorf("CoolAll %+v, phases %v", gc, phases)
	}
	g, err := s.Graph(ctx, client.GraphQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range g.Triples {
		if tr.Predicate == "lives in" && tr.ObjectName == "Porto" {
			return
		}
	}
	t.Errorf("the graph lacks lives in Porto: %+v", g.Triples)
}
