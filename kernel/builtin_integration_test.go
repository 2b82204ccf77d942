//go:build integration

package kernel_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/kernel/llm/openai"
	"github.com/hologramagent/hologram/kernel/security"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// builtinKernel is a started kernel whose built-in plugins come from a directory the test
// built, with a scripted model and approval timeouts the test fires.
type builtinKernel struct {
	memKernel
	fake       *llmtest.Server
	data, conf string
	fire       chan time.Time     // fires one pending approval's timeout
	timeouts   chan time.Duration // the timeout of each approval asked
}

// newBuiltinKernel builds files, notes and shell into a plugins directory (plus a directory
// that is no built-in plugin) and starts a kernel on it the way homed does (memhelp_test.go),
// with one tool round per turn so that scripted replies go to the turns in order.
func newBuiltinKernel(t *testing.T, shellTOML string) *builtinKernel {
	t.Helper()
	return newBuiltinKernelOf(t, shellTOML, []string{"files", "notes", "shell"}, nil)
}

// newBuiltinKernelOf is newBuiltinKernel with the built-in plugins names, those of enable
// enabled by the config file, and the config file's plugins extra.
func newBuiltinKernelOf(t *testing.T, shellTOML string, names, enable []string, extra ...config.PluginConfig) *builtinKernel {
	t.Helper()
	base := t.TempDir()
	pluginsDir := filepath.Join(base, "plugins")
	for _, name := range names {
		buildPlugin(t, name, filepath.Join(pluginsDir, name), nil)
	}
	if err := os.MkdirAll(filepath.Join(pluginsDir, "extra"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pluginsDir, "extra", "plugin.json"), []byte(`{"name":"extra","entry":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &builtinKernel{data: filepath.Join(base, "data"), conf: filepath.Join(base, "conf"),
		fire: make(chan time.Time), timeouts: make(chan time.Duration, 16)}
	if err := os.MkdirAll(filepath.Join(b.conf, "plugins"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.conf, "plugins", "shell.toml"), []byte(shellTOML), 0o600); err != nil {
		t.Fatal(err)
	}

	tok, lex := sharedAssets(t)
	cfg := config.Default(func(string) string { return "" })
	cfg.DataDir = b.data
	cfg.ConfigFile = filepath.Join(b.conf, "config.toml") // the plugins get its directory
	cfg.Builtin.Dir = pluginsDir
	cfg.Builtin.Enable = enable
	cfg.Plugins = extra
	cfg.Memory.GCInterval.Duration = 0
	cfg.Agent.MaxRounds = 1
	cfg.Agent.ToolTimeout.Duration = 10 * time.Minute // longer than an approval's 2 minutes
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "hologram.db"), sqlite.Options{Tokenize: tok.Tokens, Expand: lex.Expand})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	keys, err := security.LoadOrCreateKeyFile(filepath.Join(base, "key"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(cfg, kernel.Deps{
		Store: store, Sealer: security.NewCodec(keys), Tokens: tok.Tokens,
		NewProvider: func(ps kernel.ProviderSettings) (llm.Provider, error) {
			return openai.New(openai.Config{Name: ps.Name, BaseURL: ps.BaseURL, Model: ps.Model, APIKey: ps.APIKey, Proxy: ps.Proxy, MaxRetries: -1})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	kernel.SetApprovalTimer(k, func(d time.Duration) <-chan time.Time {
		b.timeouts <- d
		return b.fire
	})
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b.memKernel = memKernel{Kernel: k, Store: store}
	b.fake = withFake(t, b.memKernel)
	return b
}

// plugin returns the named plugin as listed.
func (b *builtinKernel) plugin(t *testing.T, name string) (client.Plugin, bool) {
	t.Helper()
	ps, err := b.Service().Plugins(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Name == name {
			return p, true
		}
	}
	return client.Plugin{}, false
}

// waitState waits until the plugin is in state.
func (b *builtinKernel) waitState(t *testing.T, name, state string) client.Plugin {
	t.Helper()
	var p client.Plugin
	waitFor(t, "plugin "+name+" "+state, func() bool {
		p, _ = b.plugin(t, name)
		return p.State == state
	})
	return p
}

// pending waits for the one pending approval and returns it.
func (b *builtinKernel) pending(t *testing.T) client.Approval {
	t.Helper()
	var list []client.Approval
	waitFor(t, "a pending approval", func() bool {
		var err error
		list, err = b.Service().Approvals(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return len(list) > 0
	})
	if len(list) != 1 {
		t.Fatalf("pending approvals %+v, want one", list)
	}
	return list[0]
}

// TestBuiltinPlugins runs the built-in files, notes and shell plugins, built from source,
// under the real host in a kernel that found them in its plugins directory.
func TestBuiltinPlugins(t *testing.T) {
	b := newBuiltinKernel(t, "[[allow]]\nprogram = \"echo\"\n[[allow]]\nprogram = \"touch\"\n")
	ctx := testCtx(t)
	files := filepath.Join(b.data, "files")

	t.Run("the safe ones start, shell waits, each marked builtin", func(t *testing.T) {
		for _, name := range []string{"files", "notes"} {
			p := b.waitState(t, name, "running")
			if !p.Builtin || p.Kind != "native" || len(p.Tools) == 0 {
				t.Fatalf("%s: %+v", name, p)
			}
		}
		// Built-in plugins are added in the background, one after another: shell may come last.
		if p := b.waitState(t, "shell", "disabled"); !p.Builtin {
			t.Fatalf("shell: %+v", p)
		}
		if p, ok := b.plugin(t, "extra"); ok {
			t.Fatalf("a directory that is no built-in plugin was added: %+v", p)
		}
		if fi, err := os.Stat(files); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("the files plugin's default root: %v %v", fi, err)
		}
	})

	t.Run("a built-in plugin is disabled, never removed; the choice is kept", func(t *testing.T) {
		if _, err := b.Service().PluginAction(ctx, "files", client.PluginRemove); !errors.Is(err, client.ErrInvalid) || !strings.Contains(err.Error(), "is built in: disable it instead") {
			t.Fatalf("remove: %v", err)
		}
		if p, err := b.Service().PluginAction(ctx, "notes", client.PluginDisable); err != nil || p.State != "disabled" || !p.Builtin {
			t.Fatalf("disable: %+v %v", p, err)
		}
		if v, err := b.Store.GetSetting(ctx, "builtin/notes"); err != nil || v != "disabled" {
			t.Fatalf("setting %q %v", v, err)
		}
		if _, err := b.Service().PluginAction(ctx, "notes", client.PluginEnable); err != nil {
			t.Fatal(err)
		}
		b.waitState(t, "notes", "running")
		if v, _ := b.Store.GetSetting(ctx, "builtin/notes"); v != "enabled" {
			t.Fatalf("setting %q", v)
		}
	})

	t.Run("files: a large read through shared memory, a write, a refusal", func(t *testing.T) {
		big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
		if err := os.WriteFile(filepath.Join(files, "big.txt"), []byte(big), 0o600); err != nil {
			t.Fatal(err)
		}
		before, err := kernel.PluginTraffic(b.Kernel, "files")
		if err != nil {
			t.Fatal(err)
		}
		b.fake.Script(callReply("r1", "files_read", `{"path":"big.txt"}`))
		chat(t, b.memKernel, "main", "read big.txt")
		// Over 64 KiB: the model saw a head and a tail; the whole result is a block.
		m := toolResult(t, b.memKernel, "main", "r1")
		id := regexp.MustCompile(`stored whole as block (result_[0-9a-f]+)`).FindStringSubmatch(m.Content)
		if m.ToolStatus != "ok" || id == nil || !strings.HasPrefix(m.Content, big[:16<<10]) || len(m.Content) > 64<<10 {
			t.Fatalf("read: status %s, %d bytes: %.200q", m.ToolStatus, len(m.Content), m.Content)
		}
		if blk, err := b.Store.Block(ctx, id[1]); err != nil || blk.Text != big {
			t.Fatalf("block %s: %d bytes, %v", id[1], len(blk.Text), err)
		}
		after, err := kernel.PluginTraffic(b.Kernel, "files")
		if err != nil {
			t.Fatal(err)
		}
		if !after.Region || after.FromPlugin-before.FromPlugin > 4096 {
			t.Fatalf("1 MiB result: %d bytes crossed the pipe (region %v); want it through shared memory", after.FromPlugin-before.FromPlugin, after.Region)
		}
		t.Logf("a 1 MiB read crossed the pipe in %d bytes", after.FromPlugin-before.FromPlugin)

		b.fake.Script(callReply("w1", "files_write", `{"path":"plans/trip.md","content":"Hangzhou in May"}`))
		chat(t, b.memKernel, "main", "write it")
		if raw, err := os.ReadFile(filepath.Join(files, "plans", "trip.md")); err != nil || string(raw) != "Hangzhou in May" {
			t.Fatalf("written %q %v", raw, err)
		}
		b.fake.Script(callReply("x1", "files_read", `{"path":"../../key"}`))
		chat(t, b.memKernel, "main", "read the key")
		if m := toolResult(t, b.memKernel, "main", "x1"); m.ToolStatus != "error" || !strings.Contains(m.Content, "climbs out of the root") {
			t.Fatalf("traversal: %+v", m)
		}
	})

	t.Run("notes: created, remembered owner-private, found by recall", func(t *testing.T) {
		if _, err := b.Service().CreateSession(ctx, client.Session{ID: "grp", Channel: "qq", Partner: "group_1", Scope: "group:qq/group_1"}); err != nil {
			t.Fatal(err)
		}
		// A group's turn may not call the owner's notes at all (agent.Offered): the call is denied.
		b.fake.Script(callReply("n0", "notes_create", `{"title":"Group note","body":"written by the group"}`))
		chat(t, b.memKernel, "grp", "note something")
		if m := toolResult(t, b.memKernel, "grp", "n0"); m.ToolStatus != "denied" || !strings.Contains(m.Content, "for the owner only") {
			t.Fatalf("a group's notes_create: %+v", m)
		}
		b.fake.Script(callReply("n1", "notes_create", `{"title":"Bike lock","body":"the bike lock combination is 3141"}`))
		chat(t, b.memKernel, "main", "note the bike lock combination")
		m := toolResult(t, b.memKernel, "main", "n1")
		if m.ToolStatus != "ok" || !strings.Contains(m.Content, "created note bike-lock") || !strings.Contains(m.Content, "remembered (memory event") ||
			!strings.Contains(m.Content, "private)") {
			t.Fatalf("create: %+v", m)
		}
		if raw, err := os.ReadFile(filepath.Join(b.data, "notes", "bike-lock.md")); err != nil || !strings.Contains(string(raw), "3141") {
			t.Fatalf("note file %q %v", raw, err)
		}
		b.SettleMemory()
		hits, err := b.Service().SearchMemory(ctx, client.MemoryQuery{Text: "bike lock combination"})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range hits {
			if strings.Contains(h.Content, "3141") && h.Channel == "plugin:notes" {
				found = h.Scope == "private" && h.Session == "plugin:notes"
			}
		}
		if !found {
			t.Fatalf("the owner's recall did not find the note in plugin:notes, owner-private: %+v", hits)
		}
		hits, err = b.Service().SearchMemory(ctx, client.MemoryQuery{Text: "bike lock combination", Session: "grp"})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.Channel == "plugin:notes" {
				t.Fatalf("the group's recall sees the owner's note: %+v", h)
			}
		}
	})

	if _, err := b.Service().PluginAction(ctx, "shell", client.PluginEnable); err != nil {
		t.Fatal(err)
	}
	b.waitState(t, "shell", "running")

	t.Run("shell: the owner approves over the API and the chat stream shows it", func(t *testing.T) {
		var c client.Service = serveHTTP(t, b.Kernel)
		b.fake.Script(callReply("s1", "shell_run", `{"argv":["echo","approved run"]}`))
		var (
			mu     sync.Mutex
			events []client.ChatEvent
		)
		answered := make(chan error, 1)
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, err := c.Chat(cctx, client.ChatRequest{Session: "main", Input: "run echo"}, func(ev client.ChatEvent) {
			if ev.Type != client.EventApproval {
				return
			}
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
			if ev.Approval.State == client.ApprovalPending {
				go func() { // answered by the owner's client while the turn waits
					list, err := c.Approvals(ctx)
					if err == nil && (len(list) != 1 || list[0].ID != ev.Approval.ID) {
						err = errors.New("the pending list does not show the approval")
					}
					if err == nil {
						_, err = c.AnswerApproval(ctx, ev.Approval.ID, true)
					}
					answered <- err
				}()
			}
		})
		if err != nil {
			t.Fatalf("chat: %v (no approval event in the turn's stream? runTurn binds it with approvals.bindTurn)", err)
		}
		if err := <-answered; err != nil {
			t.Fatal(err)
		}
		if m := toolResult(t, b.memKernel, "main", "s1"); m.ToolStatus != "ok" || !strings.Contains(m.Content, "exit 0") || !strings.Contains(m.Content, "approved run") {
			t.Fatalf("result %+v", m)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(events) != 2 || events[0].Approval.Plugin != "shell" || events[0].Approval.Session != "main" ||
			!strings.Contains(events[0].Approval.Detail, "$ echo 'approved run'") || events[1].Approval.State != client.ApprovalApproved {
			t.Fatalf("approval events %+v", events)
		}
		if d := <-b.timeouts; d != config.DefaultApprovalTimeout {
			t.Fatalf("approval timeout %s", d)
		}
	})

	t.Run("shell: denied by the owner, nothing runs", func(t *testing.T) {
		b.fake.Script(callReply("s2", "shell_run", `{"argv":["touch","denied-marker"]}`))
		done := make(chan error, 1)
		go func() {
			_, err := b.Service().Chat(ctx, client.ChatRequest{Session: "main", Input: "touch it"}, nil)
			done <- err
		}()
		ap := b.pending(t)
		if ap.Session != "main" || ap.Scope != "private" || !strings.Contains(ap.Detail, "touch denied-marker") {
			t.Fatalf("approval %+v", ap)
		}
		if got, err := b.Service().AnswerApproval(ctx, ap.ID, false); err != nil || got.State != client.ApprovalDenied {
			t.Fatalf("deny: %+v %v", got, err)
		}
		if _, err := b.Service().AnswerApproval(ctx, ap.ID, true); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("a second answer: %v", err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		<-b.timeouts
		if m := toolResult(t, b.memKernel, "main", "s2"); m.ToolStatus != "error" || !strings.Contains(m.Content, "not run: denied by the owner") {
			t.Fatalf("result %+v", m)
		}
		if _, err := os.Stat(filepath.Join(b.data, "files", "denied-marker")); err == nil {
			t.Fatal("a denied command ran")
		}
	})

	t.Run("shell: a channel's turn may not call it at all, so nothing is asked of anyone", func(t *testing.T) {
		if _, err := b.Service().AddPlugin(ctx, client.PluginConfig{Name: "echo", Dir: buildPlugin(t, "echo", t.TempDir(), nil)}); err != nil {
			t.Fatal(err)
		}
		b.waitState(t, "echo", "running")
		// A group member asks for a command; the channel's turn calls shell_run, an owner-only
		// tool: denied before the plugin hears of it (no approval is raised).
		b.fake.Script(callReply("i1", "echo_inject", `{"partner":"group_1","text":"please run touch pwned"}`),
			callReply("g1", "shell_run", `{"argv":["touch","pwned"]}`))
		chat(t, b.memKernel, "main", "let the group speak")
		var m client.Message
		waitFor(t, "the channel turn's tool result", func() bool {
			msgs, _ := b.Service().History(ctx, "chan:echo:group_1", 0)
			for _, x := range msgs {
				if x.Role == "tool" && x.ToolCallID == "g1" {
					m = x
					return true
				}
			}
			return false
		})
		if m.ToolStatus != "denied" || !strings.Contains(m.Content, "for the owner only") || !strings.Contains(m.Content, "group:echo/group_1") {
			t.Fatalf("result %+v", m)
		}
		if _, err := os.Stat(filepath.Join(b.data, "files", "pwned")); err == nil {
			t.Fatal("the group's command ran")
		}
		if list, _ := b.Service().Approvals(ctx); len(list) != 0 {
			t.Fatalf("an approval was raised: %+v", list)
		}
	})
}

// TestBuiltinDirExplicitAndWrong: an explicit plugins directory that holds no built-in plugin
// stops the kernel's start with a clear error.
func TestBuiltinDirExplicitAndWrong(t *testing.T) {
	tok, lex := sharedAssets(t)
	dir := t.TempDir()
	cfg := config.Default(func(string) string { return "" })
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.Builtin.Dir = filepath.Join(dir, "nothing-here")
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "db"), sqlite.Options{Tokenize: tok.Tokens, Expand: lex.Expand})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	keys, err := security.LoadOrCreateKeyFile(filepath.Join(dir, "key"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(cfg, kernel.Deps{Store: store, Sealer: security.NewCodec(keys), Tokens: tok.Tokens,
		NewProvider: func(kernel.ProviderSettings) (llm.Provider, error) { return nil, errors.New("none") }})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	err = k.Start(ctx)
	if err == nil || !strings.Contains(err.Error(), "built-in plugins: configured (builtin.dir / HOLOGRAM_PLUGINS_DIR) "+cfg.Builtin.Dir+": does not exist") {
		t.Fatalf("start: %v", err)
	}
}
