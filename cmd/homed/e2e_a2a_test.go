//go:build integration

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/kerneltest"
)

// The A2A issue's end-to-end test: the real homed on a loopback TCP listener, driven by the
// official A2A JavaScript client (@a2a-js/sdk, pinned in testdata/a2a-js, installed by
// `make a2a-peers`) through testdata/a2a-js/peer.mjs, answering with ../shared/tools/fake_openai.py;
// then a second homed whose owner delegates to the first with the a2a plugin's a2a_send.

const a2aSecret = "SECRET-A2A-4711"

// jsPeer runs one step of peer.mjs and returns its JSON answer.
func jsPeer(t *testing.T, base, token string, step ...string) map[string]any {
	t.Helper()
	v, err := runPeer(base, token, step...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// runPeer is jsPeer without the test, for a goroutine.
func runPeer(base, token string, step ...string) (map[string]any, error) {
	return runPeerWatch(base, token, "", nil, step...)
}

// runPeerWatch is runPeer that closes seen once a line of peer.mjs's stderr is marker.
func runPeerWatch(base, token, marker string, seen chan struct{}, step ...string) (map[string]any, error) {
	dir, err := filepath.Abs(filepath.Join("testdata", "a2a-js"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk", "package.json")); err != nil {
		return nil, fmt.Errorf("@a2a-js/sdk is not installed (%v): run `make a2a-peers` (HOLOGRAM_CI=%q)", err, os.Getenv("HOLOGRAM_CI"))
	}
	cmd := exec.Command("node", append([]string{filepath.Join(dir, "peer.mjs"), base, token}, step...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if marker != "" && sc.Text() == marker {
				close(seen)
				marker = ""
				continue
			}
			stderr.WriteString(sc.Text() + "\n")
		}
	}()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	_ = cmd.Wait()
	pw.Close()
	<-scanned
	var v map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &v); err != nil {
		return nil, fmt.Errorf("peer.mjs %v: %v: %q %s", step, err, stdout.String(), stderr.String())
	}
	return v, nil
}

func str(v any) string { s, _ := v.(string); return s }

// peerToken adds an A2A peer with waiter and returns the token it printed.
func (e *env) peerToken(name string) string {
	e.t.Helper()
	out, errOut, code := e.waiter("", nil, "a2a", "peer", "add", name)
	if code != 0 {
		e.t.Fatalf("a2a peer add %s: %d %s%s", name, code, out, errOut)
	}
	tok := strings.TrimSpace(out)
	if !strings.HasPrefix(tok, "a2a_") || len(tok) < len("a2a_")+22 { // ≥ 128 bits in base64url
		e.t.Fatalf("a2a peer add printed %q, not a token of at least 128 bits", out)
	}
	return tok
}

func TestA2AWithTheOfficialJSClient(t *testing.T) {
	everything := kerneltest.NPMPeer(t, "@modelcontextprotocol/server-everything")
	fake := startFakeOpenAI(t)
	bp := filepath.Join(t.TempDir(), "builtin")
	buildBuiltins(t, bp, "a2a")
	t.Setenv("HOLOGRAM_PLUGINS_DIR", bp)

	// Homed A: the agent other agents talk to.
	a := newEnv(t)
	tokFile := filepath.Join(a.root, "owner-token")
	listen := []string{"--listen", "127.0.0.1:0", "--token-file", tokFile}
	ha := a.start(listen...)
	a.addProvider(fake.url, "sk-a2a")
	addr, _ := ha.listening(t)
	base := "http://" + addr
	ownerTok, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	// A slow tool anyone may call, so a task runs long enough to be watched and cancelled.
	if out, errOut, code := a.waiter("", nil, "plugin", "add", "everything", "--command", "node '"+everything+"' stdio", "--visibility", "any"); code != 0 {
		t.Fatalf("plugin add: %d %s%s", code, out, errOut)
	}
	a.waitPlugin("everything", "running", func(p client.Plugin) bool {
		return p.State == "running" && contains(p.Tools, "trigger-long-running-operation")
	})
	// The owner's private memory, cooled to L2 where coldcontext_query (open to every session,
	// in the session's scope) finds it.
	if got := a.ask("remember my bank PIN " + a2aSecret); !strings.Contains(got, a2aSecret) {
		t.Fatalf("the owner's chat: %q", got)
	}
	if code, out := a.postJSON("/api/v1/memory/cool-all", ""); code != 200 {
		t.Fatalf("cool-all: %d %s", code, out)
	}

	bob := a.peerToken("bob")
	eve := a.peerToken("eve")
	if _, _, code := a.waiter("", nil, "a2a", "peer", "add", "bob"); code == 0 {
		t.Fatal("a second peer named bob was added")
	}
	out, _, _ := a.waiter("", nil, "a2a", "peer", "list", "--json")
	var peers []client.A2APeer
	if err := json.Unmarshal([]byte(out), &peers); err != nil || len(peers) != 2 || peers[0].Name != "bob" || peers[0].Scope != "group:a2a-bob" ||
		peers[0].Channel+"/"+peers[0].Partner != "a2a/bob" || peers[0].Token != "" {
		t.Fatalf("peer list: %v %s", err, out)
	}

	var started string // the long task, cancelled below
	steps := []struct {
		name  string
		token string
		step  []string
		check func(t *testing.T, v map[string]any)
	}{
		{"card without a token", "", []string{"card"}, func(t *testing.T, v map[string]any) {
			ifs, _ := v["interfaces"].([]any)
			if str(v["name"]) != "HologramAgent" || v["streaming"] != true || len(ifs) != 1 || str(v["version"]) != "1.0" ||
				!strings.Contains(mustJSON(v["schemes"]), "bearer") || v["requirements"] != float64(1) {
				t.Fatalf("card %v", v)
			}
			i := ifs[0].(map[string]any)
			if str(i["url"]) != base+"/a2a" || str(i["binding"]) != "JSONRPC" || str(i["version"]) != "1.0" {
				t.Fatalf("interface %v", i)
			}
		}},
		{"SendMessage", bob, []string{"send", "hello from bob"}, func(t *testing.T, v map[string]any) {
			if str(v["state"]) != "COMPLETED" || str(v["reply"]) != "PONG hello from bob" {
				t.Fatalf("task %v", v)
			}
		}},
		{"SendStreamingMessage", bob, []string{"stream", "streaming from bob"}, func(t *testing.T, v map[string]any) {
			kinds := mustJSON(v["kinds"])
			task, _ := v["task"].(map[string]any)
			// task, working, the reply's chunks (one, or more when a turn outlasts a 200 ms tick), the end
			if !strings.HasPrefix(kinds, `["task","statusUpdate","artifactUpdate"`) || !strings.HasSuffix(kinds, `"artifactUpdate","statusUpdate"]`) ||
				str(task["state"]) != "COMPLETED" || str(task["reply"]) != "PONG streaming from bob" {
				t.Fatalf("stream %v", v)
			}
		}},
		{"the owner's token refused", strings.TrimSpace(string(ownerTok)), []string{"send", "hi"}, func(t *testing.T, v map[string]any) {
			if e := str(v["error"]); !strings.Contains(e, "403") || !strings.Contains(e, "peer add") {
				t.Fatalf("owner token: %v", v)
			}
		}},
		{"a wrong token refused", "a2a_not-a-token", []string{"send", "hi"}, func(t *testing.T, v map[string]any) {
			if e := str(v["error"]); !strings.Contains(e, "401") {
				t.Fatalf("wrong token: %v", v)
			}
		}},
		{"no token refused", "", []string{"send", "hi"}, func(t *testing.T, v map[string]any) {
			if e := str(v["error"]); !strings.Contains(e, "401") {
				t.Fatalf("no token: %v", v)
			}
		}},
		{"the owner's private memory stays private", bob, []string{"send", `CALL coldcontext_query {"query":"bank PIN"}`}, func(t *testing.T, v map[string]any) {
			if str(v["state"]) != "COMPLETED" || !strings.HasPrefix(str(v["reply"]), "DONE ") || strings.Contains(mustJSON(v), a2aSecret) {
				t.Fatalf("the peer's recall: %v", v)
			}
		}},
		{"SendMessage returnImmediately", bob, []string{"start", `CALL trigger-long-running-operation {"duration":30,"steps":30}`}, func(t *testing.T, v map[string]any) {
			if s := str(v["state"]); s != "SUBMITTED" && s != "WORKING" {
				t.Fatalf("a returnImmediately task is %v", v)
			}
			started = str(v["id"])
		}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) { s.check(t, jsPeer(t, base, s.token, s.step...)) })
	}
	if started == "" {
		t.Fatal("no long task started")
	}
	// Positive control: the owner's own session finds the owner's memory with the same call.
	if got := a.ask(`CALL coldcontext_query {"query":"bank PIN"}`); !strings.Contains(got, a2aSecret) {
		t.Fatalf("positive control: the owner's coldcontext_query did not find the owner's memory: %q", got)
	}
	// The peer's own session and memory hold nothing of the owner's.
	q := url.Values{"q": {"bank PIN " + a2aSecret}, "session": {"a2a-bob"}}
	resp, err := a.unixHTTP().Get("http://hologram/api/v1/memory/search?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(string(raw), a2aSecret) {
		t.Fatalf("memory search as bob's session: %d %s", resp.StatusCode, raw)
	}

	t.Run("SubscribeToTask and CancelTask", func(t *testing.T) {
		type answer struct {
			v   map[string]any
			err error
		}
		sub := make(chan answer, 1)
		subscribed := make(chan struct{})
		go func() {
			v, err := runPeerWatch(base, bob, "SUBSCRIBED", subscribed, "subscribe", started)
			sub <- answer{v, err}
		}()
		select { // the subscription has its first event before the cancel
		case <-subscribed:
		case a := <-sub:
			t.Fatalf("the subscription ended before its first event: %v %v", a.v, a.err)
		case <-time.After(20 * time.Second):
			t.Fatal("no event on the subscription in 20 s")
		}
		if v := jsPeer(t, base, bob, "cancel", started); str(v["state"]) != "CANCELED" {
			t.Fatalf("cancel: %v", v)
		}
		select {
		case a := <-sub:
			if a.err != nil || str(mustMap(a.v["task"])["state"]) != "CANCELED" {
				t.Fatalf("subscription: %v %v", a.v, a.err)
			}
			t.Logf("subscription saw %s", mustJSON(a.v))
		case <-time.After(20 * time.Second):
			t.Fatal("the subscription did not end with the cancelled task")
		}
		if v := jsPeer(t, base, bob, "get", started); str(v["state"]) != "CANCELED" {
			t.Fatalf("get after cancel: %v", v)
		}
	})
	t.Run("GetTask and ListTasks are the peer's own", func(t *testing.T) {
		v := jsPeer(t, base, bob, "list")
		tasks, _ := v["tasks"].([]any)
		if v["total"] != float64(4) || len(tasks) != 4 {
			t.Fatalf("bob's list: %v", v)
		}
		if v := jsPeer(t, base, eve, "list"); v["total"] != float64(0) {
			t.Fatalf("eve sees bob's tasks: %v", v)
		}
		if v := jsPeer(t, base, eve, "get", started); !strings.Contains(strings.ToLower(str(v["error"])), "not found") {
			t.Fatalf("eve reads bob's task: %v", v)
		}
	})
	t.Run("A2A-Version absent is 0.3", func(t *testing.T) {
		req, _ := http.NewRequest("POST", base+"/a2a", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`))
		req.Header.Set("Authorization", "Bearer "+bob)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Error.Code != -32009 || !strings.Contains(r.Error.Message, "1.0") {
			t.Fatalf("no A2A-Version: %v %+v", err, r)
		}
	})

	// Tasks persist across a restart; the token is nowhere in the data dir in clear.
	ha.stop(t)
	for _, f := range []string{"hologram.db", "hologram.db-wal"} {
		if raw, err := os.ReadFile(filepath.Join(a.data, f)); err == nil && bytes.Contains(raw, []byte(bob)) {
			t.Fatalf("bob's token is stored in clear in %s", f)
		}
	}
	ha = a.start(listen...)
	addr, _ = ha.listening(t)
	base = "http://" + addr
	if v := jsPeer(t, base, bob, "list"); v["total"] != float64(4) {
		t.Fatalf("after a restart bob's tasks are %v", v)
	}
	if v := jsPeer(t, base, bob, "get", started); str(v["state"]) != "CANCELED" {
		t.Fatalf("after a restart: %v", v)
	}
	if _, _, code := a.waiter("", nil, "a2a", "peer", "remove", "eve"); code != 0 {
		t.Fatal("peer remove eve failed")
	}
	if v := jsPeer(t, base, eve, "list"); !strings.Contains(str(v["error"]), "401") {
		t.Fatalf("a removed peer's token still works: %v", v)
	}

	// Homed B delegates to A with the a2a plugin; its own A2A server is off by its config.
	b := newEnv(t)
	peerTok := filepath.Join(b.root, "a-token")
	if err := os.WriteFile(peerTok, []byte(bob+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(b.config, "hologram"), 0o700); err != nil {
		t.Fatal(err)
	}
	conf := "[a2a]\nenabled = false\n\n[[a2a.peers]]\nname = \"alpha\"\nurl = \"" + base + "\"\ntoken_file = \"" + peerTok + "\"\n"
	if err := os.WriteFile(filepath.Join(b.config, "hologram", "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	hb := b.start("--listen", "127.0.0.1:0", "--token-file", filepath.Join(b.root, "owner-token"))
	b.addProvider(fake.url, "sk-b")
	b.waitPlugin("a2a", "running", func(p client.Plugin) bool { return p.State == "running" && contains(p.Tools, "a2a_send") })
	got := b.ask(`CALL a2a_send {"peer":"alpha","text":"hello from homed B"}`)
	if !strings.HasPrefix(got, "DONE alpha: task ") || !strings.Contains(got, "completed") || !strings.Contains(got, "PONG hello from homed B") {
		t.Fatalf("homed B's a2a_send: %q", got)
	}
	if v := jsPeer(t, base, bob, "list"); v["total"] != float64(5) {
		t.Fatalf("homed B's task is not bob's on A: %v", v)
	}
	baddr, _ := hb.listening(t)
	if r, err := http.Get("http://" + baddr + "/.well-known/agent-card.json"); err != nil || r.StatusCode == 200 {
		t.Fatalf("[a2a] enabled = false, yet the card is served: %v %v", r, err)
	}
}

func mustMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
