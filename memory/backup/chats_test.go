package backup_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// The chat history tests write exports in the documented shapes (ChatGPT's conversations.json,
// Open WebUI's chat export) and import them into a real store.

// gptNode builds one node of a ChatGPT mapping; msg nil makes the root the app writes.
func gptNode(id, parent string, children []string, msg map[string]any) map[string]any {
	n := map[string]any{"id": id, "message": msg, "children": children}
	if parent == "" {
		n["parent"] = nil
	} else {
		n["parent"] = parent
	}
	if children == nil {
		n["children"] = []string{}
	}
	return n
}

// gptMsg builds a message: role, create time and content (a string is one text part).
func gptMsg(id, role string, t float64, content any, extra ...func(map[string]any)) map[string]any {
	c, ok := content.(map[string]any)
	if !ok {
		c = map[string]any{"content_type": "text", "parts": []any{content}}
	}
	m := map[string]any{"id": id, "author": map[string]any{"role": role, "name": nil, "metadata": map[string]any{}},
		"create_time": t, "update_time": nil, "content": c, "status": "finished_successfully", "end_turn": true,
		"weight": 1.0, "metadata": map[string]any{}, "recipient": "all"}
	for _, f := range extra {
		f(m)
	}
	return m
}

func hidden(m map[string]any) {
	m["metadata"] = map[string]any{"is_visually_hidden_from_conversation": true}
}

// t0 is 2024-03-01 10:00 UTC in Unix seconds.
const t0 = 1709287200.0

// gptBranchy is one ChatGPT conversation with every case: the app's root, a hidden system
// message, a user message edited once (two branches; the current one is the edit), a tool call
// and its output, an image part, Chinese text, custom instructions (hidden) and the model's
// thoughts.
func gptBranchy(id string) map[string]any {
	img := map[string]any{"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-abc", "size_bytes": 1234, "width": 64, "height": 64}
	mapping := map[string]any{
		"root":  gptNode("root", "", []string{"sys"}, nil),
		"sys":   gptNode("sys", "root", []string{"ctx"}, gptMsg("sys", "system", 0, "You are ChatGPT.", hidden)),
		"ctx":   gptNode("ctx", "sys", []string{"u1", "u1b"}, gptMsg("ctx", "user", 0, map[string]any{"content_type": "user_editable_context", "user_profile": "I am Mei."}, hidden)),
		"u1":    gptNode("u1", "ctx", []string{"a1"}, gptMsg("u1", "user", t0+1, "My cat is called Biscuit.")),
		"a1":    gptNode("a1", "u1", nil, gptMsg("a1", "assistant", t0+2, "Biscuit is a lovely name.")),
		"u1b":   gptNode("u1b", "ctx", []string{"a1b"}, gptMsg("u1b", "user", t0+10, map[string]any{"content_type": "multimodal_text", "parts": []any{img, "My cat is called Mochi. 我住在杭州。"}})),
		"a1b":   gptNode("a1b", "u1b", []string{"think"}, gptMsg("a1b", "assistant", t0+11, "Mochi is a lovely name. 杭州很美。")),
		"think": gptNode("think", "a1b", []string{"call"}, gptMsg("think", "assistant", t0+12, map[string]any{"content_type": "thoughts", "thoughts": []any{}})),
		"call": gptNode("call", "think", []string{"out"}, gptMsg("call", "assistant", t0+13, map[string]any{"content_type": "code", "language": "python", "text": "print(1)"},
			func(m map[string]any) { m["recipient"] = "python" })),
		"out": gptNode("out", "call", []string{"a2"}, gptMsg("out", "tool", t0+14, map[string]any{"content_type": "execution_output", "text": "1"})),
		"a2":  gptNode("a2", "out", nil, gptMsg("a2", "assistant", t0+15, "The script printed 1.")),
	}
	return map[string]any{"title": "Cats " + id, "create_time": t0, "update_time": t0 + 15, "mapping": mapping,
		"moderation_results": []any{}, "current_node": "a2", "plugin_ids": nil, "conversation_id": id, "id": id,
		"default_model_slug": "gpt-4o", "is_archived": false}
}

// gptPlain is a conversation of two messages.
func gptPlain(id, user, reply string, t float64) map[string]any {
	return map[string]any{"title": "Plain " + id, "create_time": t, "update_time": t + 1, "current_node": id + "-a", "id": id, "conversation_id": id,
		"mapping": map[string]any{
			id + "-r": gptNode(id+"-r", "", []string{id + "-u"}, nil),
			id + "-u": gptNode(id+"-u", id+"-r", []string{id + "-a"}, gptMsg(id+"-u", "user", t, user)),
			id + "-a": gptNode(id+"-a", id+"-u", nil, gptMsg(id+"-a", "assistant", t+1, reply)),
		}}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func importChats(t testing.TB, s *sqlite.Store, format string, data []byte) (backup.ChatReport, error) {
	t.Helper()
	return backup.ImportChats(context.Background(), s, format, bytes.NewReader(data), backup.ChatOptions{})
}

func history(t testing.TB, s *sqlite.Store, session string) []memory.Event {
	t.Helper()
	evs, err := s.History(context.Background(), session, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestImportChatGPT(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	data := mustJSON(t, []any{gptBranchy("c1"), gptPlain("c2", "Remember: my locker is 4711.", "Noted.", t0+100)})
	rep, err := importChats(t, s, backup.ChatGPT, data)
	if err != nil {
		t.Fatal(err)
	}
	want := backup.ChatReport{Conversations: 2, Imported: 2, Sessions: 2, Events: 5,
		Skipped: map[string]int{"branch": 2, "system": 1, "hidden": 1, "reasoning": 1, "tool": 2, "image": 1}}
	if !equalReports(rep, want) {
		t.Fatalf("report = %+v\nwant     %+v", rep, want)
	}
	sess, err := s.GetSession(context.Background(), "chatgpt-c1")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Title != "Cats c1" || sess.Channel != "chatgpt" || sess.Scope.Kind != memory.ScopePrivate ||
		!sess.Created.Equal(time.Unix(int64(t0), 0)) || !sess.Updated.Equal(time.Unix(int64(t0)+15, 0)) {
		t.Errorf("session = %+v", sess)
	}
	evs := history(t, s, "chatgpt-c1")
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%s@%d:%s[%s]", e.Role, e.Time.Unix()-int64(t0), e.Content, e.Meta[backup.MetaImportID]))
	}
	wantEvs := []string{
		"user@10:My cat is called Mochi. 我住在杭州。[u1b]",
		"assistant@11:Mochi is a lovely name. 杭州很美。[a1b]",
		"assistant@15:The script printed 1.[a2]",
	}
	if strings.Join(got, "\n") != strings.Join(wantEvs, "\n") {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantEvs, "\n"))
	}
	for _, e := range evs {
		if e.Meta[backup.MetaImport] != backup.ChatGPT || e.Scope.Kind != memory.ScopePrivate || e.Channel != "chatgpt" {
			t.Errorf("event %d: meta %v scope %v channel %q", e.ID, e.Meta, e.Scope, e.Channel)
		}
	}
	// Found by recall: the Chinese text through the store's index.
	hits, err := s.SearchTerms(context.Background(), memory.TextQuery{Terms: []string{"4711"}, Viewer: memory.OwnerViewer, Limit: 5})
	if err != nil || len(hits) != 1 || !strings.Contains(hits[0].Event.Content, "locker is 4711") {
		t.Errorf("search 4711 = %+v, %v", hits, err)
	}

	// A re-import adds nothing; a later export of the same conversation with one more turn adds it.
	again, err := importChats(t, s, backup.ChatGPT, data)
	if err != nil {
		t.Fatal(err)
	}
	if again.Events != 0 || again.Sessions != 0 || again.Unchanged != 2 || again.Present != 5 {
		t.Errorf("re-import = %+v", again)
	}
	more := gptPlain("c2", "Remember: my locker is 4711.", "Noted.", t0+100)
	m := more["mapping"].(map[string]any)
	m["c2-a"].(map[string]any)["children"] = []string{"c2-u2"}
	m["c2-u2"] = gptNode("c2-u2", "c2-a", nil, gptMsg("c2-u2", "user", t0+200, "And my bike is blue."))
	more["current_node"] = "c2-u2"
	third, err := importChats(t, s, backup.ChatGPT, mustJSON(t, []any{more}))
	if err != nil {
		t.Fatal(err)
	}
	if third.Events != 1 || third.Present != 2 || third.Imported != 1 || third.Sessions != 0 {
		t.Errorf("continued conversation = %+v", third)
	}
	if n := len(history(t, s, "chatgpt-c2")); n != 3 {
		t.Errorf("c2 holds %d events, want 3", n)
	}
}

// equalReports compares reports, a nil Skipped map equal to an empty one.
func equalReports(a, b backup.ChatReport) bool {
	if len(a.Skipped) == 0 && len(b.Skipped) == 0 {
		a.Skipped, b.Skipped = nil, nil
	}
	if !maps.Equal(a.Skipped, b.Skipped) {
		return false
	}
	a.Skipped, b.Skipped = nil, nil
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// owuiChat builds an Open WebUI chat: a system message, a user message regenerated once (two
// assistant branches, the second current), an inline image and a Chinese reply.
func owuiChat(id string) map[string]any {
	png := base64.StdEncoding.EncodeToString(pngish())
	msgs := map[string]any{
		"m1": map[string]any{"id": "m1", "parentId": nil, "childrenIds": []string{"m2"}, "role": "system", "content": "Be brief.", "timestamp": 1709287200},
		"m2": map[string]any{"id": "m2", "parentId": "m1", "childrenIds": []string{"m3", "m3b"}, "role": "user", "content": "这张照片是在西湖拍的。",
			"timestamp": 1709287201, "files": []any{map[string]any{"type": "image", "url": "data:image/png;base64," + png}, map[string]any{"type": "file", "name": "notes.pdf"}}},
		"m3":  map[string]any{"id": "m3", "parentId": "m2", "childrenIds": []string{}, "role": "assistant", "content": "Nice.", "timestamp": 1709287202, "model": "llama3"},
		"m3b": map[string]any{"id": "m3b", "parentId": "m2", "childrenIds": []string{}, "role": "assistant", "content": "西湖很美。", "timestamp": 1709287205, "model": "qwen2"},
	}
	return map[string]any{"id": id, "user_id": "u-1", "title": "West Lake", "created_at": 1709287200, "updated_at": 1709287205,
		"share_id": nil, "archived": false, "pinned": false, "meta": map[string]any{"tags": []any{}}, "folder_id": nil,
		"chat": map[string]any{"id": "", "title": "West Lake", "models": []string{"qwen2"}, "params": map[string]any{},
			"history": map[string]any{"messages": msgs, "currentId": "m3b"}, "messages": []any{}, "tags": []any{}, "timestamp": 1709287200000, "files": []any{}}}
}

func TestImportOpenWebUI(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	old := map[string]any{"id": "old", "title": "Old export", "created_at": 1709287300, "updated_at": 1709287301,
		"chat": map[string]any{"messages": []any{
			map[string]any{"id": "x1", "role": "user", "content": "Hello from an old export", "timestamp": 1709287300},
			map[string]any{"id": "x2", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Hi."}}, "timestamp": 1709287301000},
		}}}
	data := mustJSON(t, []any{owuiChat("w1"), old})
	rep, err := importChats(t, s, backup.OpenWebUI, data)
	if err != nil {
		t.Fatal(err)
	}
	want := backup.ChatReport{Conversations: 2, Imported: 2, Sessions: 2, Events: 4, Blocks: 1,
		Skipped: map[string]int{"branch": 1, "system": 1, "file": 1}}
	if !equalReports(rep, want) {
		t.Fatalf("report = %+v\nwant     %+v", rep, want)
	}
	evs := history(t, s, "openwebui-w1")
	if len(evs) != 2 || evs[0].Content != "这张照片是在西湖拍的。" || len(evs[0].Blocks) != 1 || evs[0].Blocks[0].Kind != memory.BlockImage ||
		evs[1].Content != "西湖很美。" || evs[1].Meta["model"] != "qwen2" || evs[1].Time.Unix() != 1709287205 {
		t.Fatalf("events = %+v", evs)
	}
	b, err := s.Block(context.Background(), evs[0].Blocks[0].ID)
	if err != nil || !bytes.Equal(b.Data, pngish()) || b.MIME != "image/png" {
		t.Errorf("image block = %+v, %v", b, err)
	}
	if evs := history(t, s, "openwebui-old"); len(evs) != 2 || evs[1].Content != "Hi." || evs[1].Time.Unix() != 1709287301 {
		t.Errorf("old export events = %+v", evs)
	}
	if again, err := importChats(t, s, backup.OpenWebUI, data); err != nil || again.Events != 0 || again.Blocks != 0 || again.Unchanged != 2 {
		t.Errorf("re-import = %+v, %v", again, err)
	}
}

// TestImportChatsRefusals: a bad file is refused with its byte offset, the conversations before
// it stay whole and the one it breaks leaves nothing; a bad conversation is refused with its
// reason and the import goes on.
func TestImportChatsRefusals(t *testing.T) {
	t.Parallel()
	good := string(mustJSON(t, gptPlain("ok", "fine", "yes", t0)))
	wrongType := strings.Replace(string(mustJSON(t, gptPlain("typed", "a", "b", t0))), `"title":"Plain typed"`, `"title":42`, 1)
	noCurrent := mustJSON(t, map[string]any{"id": "nocur", "mapping": gptPlain("x", "a", "b", t0)["mapping"]})
	loop := mustJSON(t, map[string]any{"id": "loop", "current_node": "a", "mapping": map[string]any{
		"a": gptNode("a", "b", nil, gptMsg("a", "user", t0, "a")), "b": gptNode("b", "a", nil, gptMsg("b", "user", t0, "b"))}})
	missing := mustJSON(t, map[string]any{"id": "gone", "current_node": "zz", "mapping": gptPlain("y", "a", "b", t0)["mapping"]})
	orphanConv := gptPlain("orphan", "a", "b", t0)
	orphanConv["mapping"].(map[string]any)["orphan-u"].(map[string]any)["parent"] = "pruned" // the export left the root out
	orphan := mustJSON(t, orphanConv)
	big := string(mustJSON(t, gptPlain("big", strings.Repeat("long words ", 2000), "ok", t0)))
	cases := []struct {
		name, data string
		max        int64
		wantErr    string // "" for none
		offset     int64
		events     int // stored
		refused    []string
	}{
		{name: "empty", data: "", wantErr: "the file is empty", offset: 0},
		{name: "blank", data: "  \n", wantErr: "the file is empty", offset: 0},
		{name: "object", data: `{"id":"x"}`, wantErr: "want a JSON array of conversations", offset: 0},
		{name: "malformed", data: "[" + good + ",{\"id\": x}]", wantErr: "malformed JSON", offset: int64(len(good)) + 8, events: 2},
		{name: "truncated", data: "[" + good + "," + good[:len(good)/2], wantErr: "truncated", offset: int64(len(good)*3/2) + 2, events: 2},
		{name: "no closing bracket", data: "[" + good, wantErr: "truncated", offset: int64(len(good)) + 1, events: 2},
		{name: "trailing", data: "[" + good + "] []", wantErr: "data after the array", offset: int64(len(good)) + 2, events: 2},
		{name: "empty array", data: "[]"},
		{name: "bad conversations", data: "[" + wrongType + "," + string(noCurrent) + "," + string(loop) + "," + string(missing) + ",7," + good + "]", events: 2,
			refused: []string{"title is a JSON number, want string", `no "current_node"`, "parent links loop", `current message "zz" is not in the conversation`,
				"the conversation is a JSON number, want object"}},
		{name: "orphan branch", data: "[" + string(orphan) + "]", events: 2},
		{name: "too large", data: "[" + good + "," + big + "]", max: 4096, wantErr: "larger than 4096 bytes", offset: int64(len(good)) + 1, events: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := openStore(t)
			rep, err := backup.ImportChats(context.Background(), s, backup.ChatGPT, strings.NewReader(tc.data), backup.ChatOptions{MaxConversation: tc.max})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				var fe *backup.FileError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want a FileError with %q", err, tc.wantErr)
				}
				if fe.Offset != tc.offset {
					t.Errorf("offset = %d, want %d (%v)", fe.Offset, tc.offset, err)
				}
			}
			if rep.Events != tc.events {
				t.Errorf("stored %d events, want %d", rep.Events, tc.events)
			}
			if rep.RefusedCount != len(tc.refused) {
				t.Fatalf("refused %+v, want %q", rep.Refused, tc.refused)
			}
			for i, r := range rep.Refused {
				if !strings.Contains(r.Reason, tc.refused[i]) || r.Index != i+1 {
					t.Errorf("refusal %d = %+v, want %q", i, r, tc.refused[i])
				}
			}
			// Nothing half-written: every session holds its whole conversation.
			ss, err := s.ListSessions(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, sess := range ss {
				n += len(history(t, s, sess.ID))
			}
			if n != tc.events || len(ss) != tc.events/2 {
				t.Errorf("store holds %d sessions with %d events, want %d events", len(ss), n, tc.events)
			}
		})
	}
	if _, err := backup.ImportChats(context.Background(), openStore(t), "csv", strings.NewReader("[]"), backup.ChatOptions{}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("unknown format: %v", err)
	}
}

// writeManyGPT streams n two-message conversations into w, the ith saying "note number i".
func writeManyGPT(t testing.TB, w io.Writer, n int) {
	t.Helper()
	bw := bufio.NewWriter(w)
	bw.WriteString("[")
	for i := range n {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.Write(mustJSON(t, gptPlain(fmt.Sprintf("c%05d", i), fmt.Sprintf("note number %d: 第%d条笔记", i, i), "ok", t0+float64(i))))
	}
	bw.WriteString("]")
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestImportChats10000: ten thousand conversations, streamed from a file, with progress.
func TestImportChats10000(t *testing.T) {
	t.Parallel()
	const n = 10_000
	path := filepath.Join(t.TempDir(), "conversations.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	writeManyGPT(t, f, n)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	s := openStore(t)
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var calls int
	var last backup.ChatProgress
	rep, err := backup.ImportChats(context.Background(), s, backup.ChatGPT, in, backup.ChatOptions{Progress: func(p backup.ChatProgress) {
		calls++
		last = p
	}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Conversations != n || rep.Imported != n || rep.Sessions != n || rep.Events != 2*n || rep.RefusedCount != 0 || len(rep.Skipped) != 0 {
		t.Fatalf("report = %+v", rep)
	}
	st, _ := os.Stat(path)
	if calls != n || last.Conversations != n || last.Events != 2*n || last.Bytes != st.Size() {
		t.Errorf("progress: %d calls, last %+v (file %d bytes)", calls, last, st.Size())
	}
	ss, err := s.ListSessions(context.Background())
	if err != nil || len(ss) != n {
		t.Fatalf("%d sessions, %v", len(ss), err)
	}
	hits, err := s.SearchTerms(context.Background(), memory.TextQuery{Terms: []string{"9876"}, Viewer: memory.OwnerViewer, Limit: 5})
	if err != nil || len(hits) != 1 || hits[0].Event.Session != "chatgpt-c09876" {
		t.Errorf("search 9876 = %+v, %v", hits, err)
	}
}
