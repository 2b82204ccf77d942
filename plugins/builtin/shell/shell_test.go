package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugconf"
	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk/sdktest"
)

func TestManifest(t *testing.T) {
	m := plugintest.CheckManifest(t, (&shell{}).plugin(), protocol.CapApprove)
	if !m.Permissions.Exec {
		t.Fatal("plugin.json must grant exec: the plugin runs commands")
	}
}

func TestLoadConfig(t *testing.T) {
	home := t.TempDir()
	data, conf := filepath.Join(home, "data"), filepath.Join(home, "conf")
	e := plugintest.Env(map[string]string{"HOME": home, plugconf.EnvDataDir: data, plugconf.EnvConfigDir: conf})
	file := filepath.Join(conf, "plugins", "shell.toml")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}

	c, err := loadConfig(e)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Allow) != 0 || c.Timeout != defaultTimeout || c.MaxTimeout != defaultMaxTimeout || c.MaxOutputBytes != defaultMaxOutput ||
		c.Roots[0] != filepath.Join(data, "files") || c.path != file {
		t.Fatalf("defaults %+v", c)
	}
	if fi, err := os.Stat(c.Roots[0]); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("default root %v %v", fi, err)
	}

	if err := os.WriteFile(file, []byte("timeout = \"45s\"\nmax_output_bytes = 100\n[[allow]]\nprogram = \"git\"\nargs = [\"status\"]\n[[allow]]\nshell = \"make test\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = loadConfig(e)
	if err != nil || c.Timeout != 45*time.Second || c.MaxOutputBytes != 100 || len(c.Allow) != 2 || c.Allow[0].Args[0] != "status" || c.Allow[1].Shell != "make test" {
		t.Fatalf("loaded %+v %v", c, err)
	}

	for _, tt := range []struct{ name, body, want string }{
		{"unknown key", "alow = []", `unknown key "alow"`},
		{"both", "[[allow]]\nprogram = \"ls\"\nshell = \"ls\"", "set program or shell, not both or neither"},
		{"neither", "[[allow]]\nargs = [\"x\"]", "set program or shell, not both or neither"},
		{"args with shell", "[[allow]]\nshell = \"ls\"\nargs = [\"x\"]", "args go with program"},
		{"spaces in program", "[[allow]]\nprogram = \"git status\"", "contains spaces"},
		{"relative path", "[[allow]]\nprogram = \"./run.sh\"", "bare name (found in PATH) or an absolute path"},
		{"short timeout", "timeout = \"10ms\"", "timeout must be at least 1s"},
		{"max below timeout", "timeout = \"1m\"\nmax_timeout = \"30s\"", "max_timeout (30s) is shorter than timeout (1m0s)"},
		{"bad duration", "timeout = \"soon\"", "shell.toml"},
		{"output cap", "max_output_bytes = -5", "max_output_bytes must be from 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(file, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := loadConfig(e); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

// approvals records the approvals asked and answers them with answer.
type approvals struct {
	mu     sync.Mutex
	asked  []protocol.ApproveParams
	answer protocol.ApproveResult
}

func (a *approvals) approve(_ context.Context, p protocol.ApproveParams) (protocol.ApproveResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, p)
	return a.answer, nil
}

func (a *approvals) list() []protocol.ApproveParams {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]protocol.ApproveParams(nil), a.asked...)
}

// start serves a shell plugin over a fresh root with allow, in memory; the double answers
// approvals with ap.
func start(t *testing.T, allow []Allow, ap *approvals, caps []string) (*sdktest.Kernel, string) {
	t.Helper()
	rootDir := t.TempDir()
	cfg := Config{Roots: []string{rootDir}, Allow: allow, MaxOutputBytes: 64, path: "/etc/hologram/plugins/shell.toml"}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	s, err := newShell(cfg, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return sdktest.Start(t, s.plugin(), sdktest.Options{Plugin: "shell", Capabilities: caps, Approve: ap.approve}), s.roots[0]
}

func TestEmptyAllowListRefusesEverything(t *testing.T) {
	ap := &approvals{answer: protocol.ApproveResult{Approved: true}}
	k, _ := start(t, nil, ap, []string{protocol.CapApprove})
	for _, a := range []string{plugintest.Args("argv", []string{"ls"}), plugintest.Args("command", "ls -l")} {
		got, err := k.ToolText(context.Background(), "shell_run", a, "")
		if err == nil || !strings.Contains(err.Error(), "allow-list is empty, so every command is refused") ||
			!strings.Contains(err.Error(), "/etc/hologram/plugins/shell.toml") || !strings.Contains(err.Error(), "[[allow]]") {
			t.Fatalf("%s: %q %v", a, got, err)
		}
	}
	if len(ap.list()) != 0 {
		t.Fatal("an approval was asked for a refused command")
	}
	got, err := k.ToolText(context.Background(), "shell_allowed", "{}", "")
	if err != nil || !strings.Contains(got, "nothing is allowed") {
		t.Fatalf("allowed: %q %v", got, err)
	}
}

func TestRun(t *testing.T) {
	allow := []Allow{{Program: "echo"}, {Program: "sh", Args: []string{"-c", "exit 3"}}, {Program: "printf"},
		{Shell: "echo $((6*7)) | tr 4 X"}, {Program: "touch"}, {Program: "sleep"}, {Program: "pwd"},
		{Shell: "sleep 30 & echo $! > bg.pid; sleep 30"}}
	ap := &approvals{answer: protocol.ApproveResult{ID: "ap1", Approved: true, Reason: "approved by the owner"}}
	k, root := start(t, allow, ap, []string{protocol.CapApprove})
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tt := range []struct {
		name, args string
		want       []string
		wantErr    string
	}{
		{"argv", plugintest.Args("argv", []string{"echo", "hello world"}), []string{"$ echo 'hello world'\n(in " + root + ") exit 0 after", "hello world\n"}, ""},
		{"exit status", plugintest.Args("argv", []string{"sh", "-c", "exit 3"}), nil, "exit 3"},
		{"shell line", plugintest.Args("command", "echo $((6*7)) | tr 4 X"), []string{"X2"}, ""},
		{"output cap", plugintest.Args("argv", []string{"printf", strings.Repeat("y", 100)}), []string{strings.Repeat("y", 64), "[output truncated: 100 bytes, the first 64 shown]"}, ""},
		{"cwd", plugintest.Args("argv", []string{"pwd"}, "cwd", "sub"), []string{filepath.Join(root, "sub") + "\n"}, ""},
		{"cwd absolute", plugintest.Args("argv", []string{"pwd"}, "cwd", filepath.Join(root, "sub")), []string{"exit 0"}, ""},
		{"timeout kills the group", plugintest.Args("command", "sleep 30 & echo $! > bg.pid; sleep 30", "timeout_seconds", 1), nil, ""},
		{"not allowed", plugintest.Args("argv", []string{"rm", "-rf", "/"}), nil, `refused: "rm -rf /" is not on the allow-list`},
		{"args prefix", plugintest.Args("argv", []string{"sh", "-c", "rm -rf ~"}), nil, "is not on the allow-list"},
		{"other shell line", plugintest.Args("command", "echo 42"), nil, `the shell line "echo 42" is not on the allow-list`},
		{"path instead of name", plugintest.Args("argv", []string{"/bin/echo", "x"}), nil, "is not on the allow-list"},
		{"cwd outside", plugintest.Args("argv", []string{"pwd"}, "cwd", outside), nil, "is outside the working directories"},
		{"cwd through a link", plugintest.Args("argv", []string{"pwd"}, "cwd", "out"), nil, "is outside the working directories"},
		{"cwd climbing", plugintest.Args("argv", []string{"pwd"}, "cwd", "../.."), nil, "is outside the working directories"},
		{"cwd missing", plugintest.Args("argv", []string{"pwd"}, "cwd", "nope"), nil, "no such file"},
		{"nothing", plugintest.Args(), nil, "give argv"},
		{"both", plugintest.Args("argv", []string{"echo"}, "command", "echo"), nil, "not both"},
		{"empty program", plugintest.Args("argv", []string{" "}), nil, "argv[0], the program, is empty"},
		{"long timeout", plugintest.Args("argv", []string{"echo"}, "timeout_seconds", 3600), nil, "more than the 10m0s the owner allows"},
		{"unknown field", `{"argv":["echo"],"sudo":true}`, nil, `unknown field "sudo"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "timeout kills the group" {
				_, err := k.ToolText(ctx, "shell_run", tt.args, "")
				if err == nil || !strings.Contains(err.Error(), "timed out after 1s: killed") {
					t.Fatalf("timeout: %v", err)
				}
				raw, err := os.ReadFile(filepath.Join(root, "bg.pid"))
				if err != nil {
					t.Fatal(err)
				}
				waitGone(t, strings.TrimSpace(string(raw)))
				return
			}
			got, err := k.ToolText(ctx, "shell_run", tt.args, "")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("%q %v, want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Fatalf("%q lacks %q", got, w)
				}
			}
		})
	}
	asked := ap.list()
	if len(asked) != 7 || asked[0].Title != "Run a command" || asked[0].Detail != "$ echo 'hello world'\nin "+root+" (timeout 30s)" {
		t.Fatalf("approvals asked: %+v", asked)
	}
}

func TestDenied(t *testing.T) {
	ap := &approvals{answer: protocol.ApproveResult{ID: "ap9", Approved: false, Reason: "no answer from the owner within 2m0s: denied"}}
	k, root := start(t, []Allow{{Program: "touch"}}, ap, []string{protocol.CapApprove})
	res, err := k.CallTool(context.Background(), "shell_run", plugintest.Args("argv", []string{"touch", "marker"}), "turn-7")
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || len(res.Content) != 1 || res.Content[0].Text != "not run: no answer from the owner within 2m0s: denied" {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(root, "marker")); err == nil {
		t.Fatal("a denied command ran")
	}
	if asked := ap.list(); len(asked) != 1 || asked[0].Turn != "turn-7" {
		t.Fatalf("asked %+v: the approval must carry the call's turn", asked)
	}
}

func TestWithoutTheApproveCapability(t *testing.T) {
	ap := &approvals{answer: protocol.ApproveResult{Approved: true}}
	k, root := start(t, []Allow{{Program: "touch"}}, ap, nil)
	_, err := k.ToolText(context.Background(), "shell_run", plugintest.Args("argv", []string{"touch", "marker"}), "")
	if err == nil || !strings.Contains(err.Error(), `not run: the owner's approval could not be asked: method owner/approve needs capability "approve"`) {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "marker")); err == nil {
		t.Fatal("a command ran without approval")
	}
}

func TestQuoteArgv(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		want string
	}{
		{[]string{"ls", "-l"}, "ls -l"},
		{[]string{"echo", "a b", ""}, "echo 'a b' ''"},
		{[]string{"echo", "it's"}, `echo 'it'\''s'`},
		{[]string{"echo", "$HOME;rm"}, "echo '$HOME;rm'"},
	} {
		if got := quoteArgv(tt.argv); got != tt.want {
			t.Errorf("%q: %s, want %s", tt.argv, got, tt.want)
		}
	}
}

// waitGone waits (at most 10 s) until the process pid has exited: gone, or a zombie.
func waitGone(t *testing.T, pid string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return
		}
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %s, started in the background by the timed-out command, still runs: %s", pid, stat)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
