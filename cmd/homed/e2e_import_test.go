//go:build integration

package main

import (
	"archive/zip"
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory/graph"
)

// The chat history end-to-end tests import exports written here (ChatGPT's conversations.json
// and its .zip, Open WebUI's chat export) with real waiter and homed processes over the unix
// socket: exact counts, a re-import adds nothing, `waiter memory search` finds an imported
// message, `waiter memory gc --cool-all` distils them into the graph, and a 200 MB export
// keeps both processes' peak RSS under 300 MB.

// chatgptConv writes one ChatGPT conversation: the app's root, a hidden system message, then
// turns (user, assistant) on the current branch; with edited set, the first user message was
// edited once, so its first version and the reply to it are another branch.
func chatgptConv(id, title string, t0 float64, turns [][2]string, edited bool) map[string]any {
	node := func(nid, parent string, children []string, msg any) map[string]any {
		n := map[string]any{"id": nid, "message": msg, "parent": nil, "children": children}
		if parent != "" {
			n["parent"] = parent
		}
		return n
	}
	msg := func(mid, role string, t float64, text string, hidden bool) map[string]any {
		return map[string]any{"id": mid, "author": map[string]any{"role": role}, "create_time": t,
			"content": map[string]any{"content_type": "text", "parts": []any{text}}, "recipient": "all",
			"metadata": map[string]any{"is_visually_hidden_from_conversation": hidden}}
	}
	mapping := map[string]any{}
	mapping[id+"-root"] = node(id+"-root", "", []string{id + "-sys"}, nil)
	mapping[id+"-sys"] = node(id+"-sys", id+"-root", nil, msg(id+"-sys", "system", 0, "You are ChatGPT.", true))
	parent := id + "-sys"
	if edited {
		mapping[id+"-old"] = node(id+"-old", parent, []string{id + "-oldr"}, msg(id+"-old", "user", t0, "first version", false))
		mapping[id+"-oldr"] = node(id+"-oldr", id+"-old", []string{}, msg(id+"-oldr", "assistant", t0+1, "reply to the first version", false))
	}
	var children []string
	for i, turn := range turns {
		u, a := fmt.Sprintf("%s-u%d", id, i), fmt.Sprintf("%s-a%d", id, i)
		children = append(mapping[parent].(map[string]any)["children"].([]string), u)
		mapping[parent].(map[string]any)["children"] = children
		mapping[u] = node(u, parent, []string{a}, msg(u, "user", t0+float64(10*i+2), turn[0], false))
		mapping[a] = node(a, u, []string{}, msg(a, "assistant", t0+float64(10*i+3), turn[1], false))
		parent = a
	}
	return map[string]any{"id": id, "conversation_id": id, "title": title, "create_time": t0, "update_time": t0 + float64(10*len(turns)),
		"current_node": parent, "mapping": mapping}
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// zipWith writes a zip holding files (name → contents), as a ChatGPT export is.
func zipWith(t *testing.T, path string, files map[string][]byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, b := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestImportChatHistoriesEndToEnd(t *testing.T) {
	e := newEnv(t)
	e.start()
	dir := t.TempDir()
	const t0 = 1709287200.0 // 2024-03-01
	convs := []any{
		chatgptConv("c1", "Moving house", t0, [][2]string{
			{"I live in Lisbon and I work at Acme Robotics.", "Lisbon is lovely."},
			{"我最喜欢的水果是芒果。", "芒果很好吃。"},
		}, true),
		chatgptConv("c2", "Lockers", t0+1000, [][2]string{{"my gym locker code is zebra-4711", "Noted."}}, false),
	}
	raw, err := json.Marshal(convs)
	if err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(dir, "chatgpt-export.zip")
	zipWith(t, zipPath, map[string][]byte{"conversations.json": raw, "user.json": []byte(`{"id":"user-1"}`), "file-abc.png": {0x89, 'P', 'N', 'G'}})

	// The export's .zip, read by waiter, streamed to homed.
	stdout, stderr, code := e.waiter("", nil, "memory", "import", "--format", "chatgpt", "--json", zipPath)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	var rep client.ImportReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if rep.Sessions != 2 || rep.Events != 6 || rep.Skipped != 0 || rep.Chats == nil || rep.Chats.Conversations != 2 || rep.Chats.Imported != 2 ||
		rep.Chats.SkippedBy["branch"] != 2 || rep.Chats.SkippedBy["hidden"] != 0 || rep.Chats.SkippedBy["system"] != 2 || rep.Chats.RefusedCount != 0 {
		t.Fatalf("report %+v chats %+v", rep, rep.Chats)
	}
	if !strings.Contains(stderr, "import: read ") {
		t.Errorf("no progress on stderr: %q", stderr)
	}

	// The same conversations as conversations.json (its name says the format): nothing new.
	jsonPath := filepath.Join(dir, "conversations.json")
	os.WriteFile(jsonPath, raw, 0o600)
	stdout, stderr, code = e.waiter("", nil, "memory", "import", jsonPath)
	if code != 0 || !strings.Contains(stdout, "read 2 conversations: 0 imported, 2 unchanged") || !strings.Contains(stdout, "stored 0 new sessions, 0 messages and 0 blocks; 6 messages were there already") {
		t.Fatalf("re-import: exit %d: %s%s", code, stdout, stderr)
	}

	// Open WebUI: a regenerated reply (two branches), the second current.
	owui := []any{map[string]any{"id": "w1", "title": "Tea", "created_at": 1709290000, "updated_at": 1709290010, "chat": map[string]any{
		"history": map[string]any{"currentId": "m3", "messages": map[string]any{
			"m1": map[string]any{"id": "m1", "parentId": nil, "childrenIds": []string{"m2", "m3"}, "role": "user", "content": "I love oolong tea", "timestamp": 1709290000},
			"m2": map[string]any{"id": "m2", "parentId": "m1", "childrenIds": []string{}, "role": "assistant", "content": "draft", "timestamp": 1709290005},
			"m3": map[string]any{"id": "m3", "parentId": "m1", "childrenIds": []string{}, "role": "assistant", "content": "Oolong is great.", "timestamp": 1709290010},
		}}}}}
	owuiPath := filepath.Join(dir, "open-webui.json")
	writeJSONFile(t, owuiPath, owui)
	var orep client.ImportReport
	e.waiterJSON(&orep, "memory", "import", "--format", "openwebui", "--json", owuiPath)
	if orep.Sessions != 1 || orep.Events != 2 || orep.Chats.SkippedBy["branch"] != 1 {
		t.Fatalf("open webui report %+v %+v", orep, orep.Chats)
	}

	// Bad files: refused with the byte offset, nothing stored.
	for _, bad := range []struct{ name, data, want string }{
		{"empty.json", "", "the file is empty"},
		{"truncated.json", string(raw[:len(raw)/2]), "truncated"},
		{"malformed.json", `[{"id": "x", "mapping": {]`, "at byte 25: malformed JSON"},
	} {
		p := filepath.Join(dir, bad.name)
		os.WriteFile(p, []byte(bad.data), 0o600)
		_, stderr, code := e.waiter("", nil, "memory", "import", "--format", "chatgpt", p)
		if code != 1 || !strings.Contains(stderr, bad.want) {
			t.Errorf("%s: exit %d, %q; want 1 and %q", bad.name, code, stderr, bad.want)
		}
	}
	var sessions []client.Session
	e.waiterJSON(&sessions, "session", "list", "--json")
	imported := 0
	for _, s := range sessions {
		if strings.HasPrefix(s.ID, "chatgpt-") || strings.HasPrefix(s.ID, "openwebui-") {
			imported++
		}
	}
	if imported != 3 {
		t.Errorf("sessions after the bad files: %+v", sessions)
	}

	// Found by recall, in its original session with its original time.
	var hits []client.MemoryHit
	e.waiterJSON(&hits, "memory", "search", "--json", "what is my gym locker code")
	if len(hits) == 0 || !strings.Contains(hits[0].Content, "zebra-4711") || hits[0].Session != "chatgpt-c2" || hits[0].Time.Unix() != int64(t0)+1002 {
		t.Fatalf("search: %+v", hits)
	}

	// Cool everything, distil, and the graph holds the imported facts.
	stdout, stderr, code = e.waiter("", nil, "memory", "gc", "--cool-all", "--json")
	if code != 0 {
		t.Fatalf("gc --cool-all: exit %d: %s", code, stderr)
	}
	var gc client.GCReport
	if err := json.Unmarshal([]byte(stdout), &gc); err != nil {
		t.Fatal(err)
	}
	if gc.Cooled != 8 || gc.Distilled != 8 || gc.Triples+gc.Confirmed == 0 {
		t.Errorf("gc --cool-all = %+v", gc)
	}
	if !strings.Contains(stderr, "gc: cooled 4 of 4 sessions") || !strings.Contains(stderr, "gc: distilled 8 events") {
		t.Errorf("gc progress on stderr: %q", stderr)
	}
	var g client.GraphPage
	e.waiterJSON(&g, "memory", "graph", "--json")
	facts := map[string]bool{}
	for _, tr := range g.Triples {
		facts[tr.Predicate+" "+tr.ObjectName] = true
	}
	for _, want := range []string{"lives in Lisbon", "works at Acme Robotics", "likes oolong tea", "favourite fruit 芒果"} {
		if !facts[want] {
			t.Errorf("graph lacks %q: %v", want, facts)
		}
	}
	// The rules' closed vocabulary, mostly typed (docs/memory-graph.md).
	typed := 0
	for _, tr := range g.Triples {
		if !graph.InVocabulary(tr.Predicate) {
			t.Errorf("predicate %q of %s —%s→ %s is outside the vocabulary", tr.Predicate, tr.SubjectName, tr.Predicate, tr.ObjectName)
		}
		if graph.Typed(tr.Predicate) {
			typed++
		}
	}
	if 2*typed < len(g.Triples) {
		t.Errorf("%d of %d triples typed, want at least half: %v", typed, len(g.Triples), facts)
	}
}

// vmHWM reads a live process's peak resident set size in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// writeBigExport streams a ChatGPT export of about size bytes into path: conversations of ten
// turns of about 2 kB each, English and Chinese. It returns the conversations and messages.
func writeBigExport(t *testing.T, path string, size int64) (convs, msgs int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	cw := &countWriter{w: bw}
	io.WriteString(cw, "[")
	en := strings.Repeat("the quick brown fox jumps over the lazy dog while we talk about gardens, ", 60)
	zh := strings.Repeat("我们今天在花园里聊天，讨论种花和种菜的方法。", 40)
	for i := 0; cw.n < size; i++ {
		turns := make([][2]string, 10)
		for j := range turns {
			turns[j] = [2]string{fmt.Sprintf("note %d.%d: %s", i, j, en), fmt.Sprintf("回复 %d.%d：%s", i, j, zh)}
		}
		b, err := json.Marshal(chatgptConv(fmt.Sprintf("big%06d", i), fmt.Sprintf("Conversation %d", i), 1709287200+float64(i*100), turns, false))
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			io.WriteString(cw, ",")
		}
		cw.Write(b)
		convs++
		msgs += 2 * len(turns)
	}
	io.WriteString(cw, "]")
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return convs, msgs
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// TestImport200MBBoundedRSS: a 200 MB export streams through waiter and homed, each staying
// under 300 MB peak RSS (VmHWM of homed, ru_maxrss of waiter), and every message is stored.
func TestImport200MBBoundedRSS(t *testing.T) {
	const (
		size  = 200 << 20
		limit = 300 << 20
	)
	e := newEnv(t)
	h := e.start()
	path := filepath.Join(t.TempDir(), "conversations.json")
	t0 := time.Now()
	convs, msgs := writeBigExport(t, path, size)
	t.Logf("wrote %d conversations, %d messages in %v", convs, msgs, time.Since(t0))

	t0 = time.Now()
	cmd := exec.Command(filepath.Join(binDir, "waiter"), "memory", "import", "--format", "chatgpt", "--json", path)
	cmd.Env = e.environ()
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("import: %v: %s", err, errOut.String())
	}
	took := time.Since(t0)
	var rep client.ImportReport
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Sessions != convs || rep.Events != msgs || rep.Chats.RefusedCount != 0 {
		t.Fatalf("report %+v %+v, want %d sessions and %d events", rep, rep.Chats, convs, msgs)
	}
	waiterPeak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // kB on Linux
	homedPeak := vmHWM(t, h.cmd.Process.Pid)
	t.Logf("imported %d MB in %v: waiter peak RSS %d MB, homed peak RSS %d MB", size>>20, took, waiterPeak>>20, homedPeak>>20)
	if waiterPeak > limit || homedPeak > limit {
		t.Errorf("peak RSS: waiter %d MB, homed %d MB; want both ≤ %d MB", waiterPeak>>20, homedPeak>>20, limit>>20)
	}
}

// TestImportedImageIsRead: an inline image of an Open WebUI chat becomes an image block whose
// text OCR reads (as an attachment's is), so recall finds the message by the words in it.
func TestImportedImageIsRead(t *testing.T) {
	for _, asset := range []string{"../../build/onnxruntime/libonnxruntime.so.1", "../../build/models/ocr/ppocr_keys_v1.txt"} {
		if _, err := os.Stat(asset); err != nil {
			if os.Getenv("HOLOGRAM_CI") == "1" {
				t.Fatalf("%v: run `make assets`", err)
			}
			t.Skipf("%v: run `make assets`", err)
		}
	}
	e := newEnv(t)
	e.start()
	png := textPNG(t, "Boarding pass gate B22", "Flight to Kyoto")
	chat := []any{map[string]any{"id": "trip", "title": "Trip", "created_at": 1709290000, "chat": map[string]any{
		"history": map[string]any{"currentId": "m2", "messages": map[string]any{
			"m1": map[string]any{"id": "m1", "parentId": nil, "role": "user", "content": "Keep this for me.", "timestamp": 1709290000,
				"files": []any{map[string]any{"type": "image", "url": "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)}}},
			"m2": map[string]any{"id": "m2", "parentId": "m1", "role": "assistant", "content": "Kept.", "timestamp": 1709290001},
		}}}}}
	path := filepath.Join(t.TempDir(), "chats.json")
	writeJSONFile(t, path, chat)
	var rep client.ImportReport
	e.waiterJSON(&rep, "memory", "import", "--format", "openwebui", "--json", path)
	if rep.Events != 2 || rep.Blocks != 1 {
		t.Fatalf("report %+v", rep)
	}
	var hist []client.Message
	e.waiterJSON(&hist, "history", "--session", "openwebui-trip", "--json")
	if len(hist) != 2 || len(hist[0].Blocks) != 1 || !strings.Contains(hist[0].Blocks[0].Text, "Kyoto") {
		t.Fatalf("history %+v: want the image block with its text", hist)
	}
	var hits []client.MemoryHit
	e.waiterJSON(&hits, "memory", "search", "--json", "kyoto boarding pass")
	if len(hits) == 0 || hits[0].ID != hist[0].ID {
		t.Fatalf("recall by the image's words = %+v; want message %d", hits, hist[0].ID)
	}
}
