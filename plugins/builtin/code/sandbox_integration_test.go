//go:build integration

package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk/sdktest"
)

// world is what a sandbox test plants around the plugin: a home with the owner's key, a file
// and a directory outside the workspace, a TCP listener, a unix socket and a private D-Bus
// session bus, each of which the code must not reach.
type world struct {
	home, key, secretFile, outside string
	tcp, unix, dbus                string
	data                           string
}

func plant(t *testing.T) world {
	t.Helper()
	home := t.TempDir()
	w := world{home: home, key: filepath.Join(home, ".config", "hologram", "key"), secretFile: filepath.Join(home, "diary.txt"),
		outside: filepath.Join(home, "elsewhere"), data: filepath.Join(home, ".local", "share", "hologram")}
	for _, d := range []string{filepath.Dir(w.key), w.outside, filepath.Join(home, ".config", "hologram", "plugins")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for p, body := range map[string]string{w.key: "v1 deadbeef SECRET-MASTER-KEY\n", w.secretFile: "SECRET-DIARY\n"} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	w.tcp = ln.Addr().String()
	w.unix = filepath.Join(home, "kernel.sock")
	uln, err := net.Listen("unix", w.unix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { uln.Close() })
	for _, l := range []net.Listener{ln, uln} {
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Write([]byte("CONNECTED"))
				c.Close()
			}
		}()
	}
	w.dbus = startBus(t, "unix:tmpdir="+home)
	return w
}

// startBus starts a private D-Bus session bus listening on address and returns the address
// it reports.
func startBus(t *testing.T, address string) string {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		if os.Getenv("HOLOGRAM_CI") != "" {
			t.Fatal("dbus-daemon is missing (package dbus)")
		}
		t.Log("no dbus-daemon: the D-Bus probe is skipped")
		return ""
	}
	cmd := exec.Command(daemon, "--session", "--nofork", "--print-address=1", "--address="+address)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 512)
	n, err := out.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(buf[:n]))
}

// pluginDir is the plugin built once for the test binary, cacheDir the caches every test's
// plugin shares (Go's build cache: a cold one costs half a minute of compiling the standard
// library, paid once).
var pluginDir, cacheDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "code-plugin-")
	if err != nil {
		panic(err)
	}
	pluginDir, cacheDir = filepath.Join(dir, "plugin"), filepath.Join(dir, "cache")
	os.MkdirAll(cacheDir, 0o700)
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(gobin, "build", "-trimpath", "-tags=sqlite_fts5", "-o", filepath.Join(pluginDir, "code"), ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	if raw, err := os.ReadFile("plugin.json"); err != nil || os.WriteFile(filepath.Join(pluginDir, "plugin.json"), raw, 0o644) != nil {
		fmt.Fprintln(os.Stderr, "plugin.json:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// start runs the built plugin in w's home; bwrap false hides bubblewrap from its PATH.
func start(t *testing.T, w world, bwrap bool) *sdktest.Kernel {
	t.Helper()
	return startConf(t, w, bwrap, fmt.Sprintf("cache = %q\n", cacheDir))
}

// startConf is start with conf as code.toml.
func startConf(t *testing.T, w world, bwrap bool, conf string) *sdktest.Kernel {
	t.Helper()
	if err := os.WriteFile(filepath.Join(w.home, ".config", "hologram", "plugins", "code.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("bwrap"); err != nil && bwrap {
		if os.Getenv("HOLOGRAM_CI") != "" {
			t.Fatal("bwrap is missing (package bubblewrap)")
		}
		t.Skip("bubblewrap is not installed")
	}
	path := os.Getenv("PATH")
	if !bwrap {
		path = t.TempDir() // nothing in it: bwrap is not found
	}
	cmd := exec.Command(filepath.Join(pluginDir, "code"))
	return sdktest.LaunchCommand(t, cmd, []string{"HOME=" + w.home, "PATH=" + path,
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"), "XDG_DATA_HOME=" + filepath.Join(w.home, ".local", "share"),
		"HOLOGRAM_DATA_DIR=" + w.data, "HOLOGRAM_CONFIG_DIR=" + filepath.Join(w.home, ".config", "hologram")},
		sdktest.Options{Plugin: "code", Timeout: 5 * time.Minute})
}

// call runs code_run in session s and returns the result's text and its other items.
func call(t *testing.T, k *sdktest.Kernel, s, args string) (string, []protocol.Content, bool) {
	t.Helper()
	res, err := k.CallToolMeta(context.Background(), "code_run", args, protocol.RequestMeta{Turn: "t-" + s, Session: s})
	if err != nil {
		t.Fatalf("code_run %s: %v\nplugin stderr:\n%s", args, err, k.Stderr())
	}
	var text strings.Builder
	var rest []protocol.Content
	for _, c := range res.Content {
		if c.Type == "text" {
			text.WriteString(c.Text + "\n")
		} else {
			rest = append(rest, c)
		}
	}
	return text.String(), rest, res.IsError
}

// py is code_run's arguments for a python program.
func py(code string, timeout int) string {
	return fmt.Sprintf(`{"language":"python","code":%s,"timeout":%d}`, strconv.Quote(code), timeout)
}

// modes runs f with bubblewrap and with bubblewrap hidden from PATH.
func modes(t *testing.T, f func(t *testing.T, bwrap bool)) {
	for _, m := range []struct {
		name  string
		bwrap bool
	}{{"bwrap", true}, {"landlock-only", false}} {
		t.Run(m.name, func(t *testing.T) { f(t, m.bwrap) })
	}
}

// TestSandboxRefuses is what a hostile program tries: the owner's key, a file outside the
// workspace, writing outside, the kernel's TCP listener and unix socket, the D-Bus session
// bus. Each probe prints DENIED or LEAKED; the workspace itself stays usable.
func TestSandboxRefuses(t *testing.T) {
	modes(t, func(t *testing.T, bwrap bool) {
		w := plant(t)
		k := start(t, w, bwrap)
		probe := `import os, signal, socket
def probe(name, f):
    try:
        r = f()
        print(name, "LEAKED", r)
    except Exception as e:
        print(name, "DENIED", type(e).__name__, e)
def tcp():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.settimeout(3); s.connect((HOST, PORT)); return s.recv(20)
def unix(addr):
    def f():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(3); s.connect(addr); return s.recv(20) or "connected"
    return f
def bus():
    kv = dict(p.split("=", 1) for p in BUS.split(":", 1)[1].split(","))
    return unix("\0" + kv["abstract"] if "abstract" in kv else kv["path"])()
probe("key", lambda: open(KEY).read())
probe("file", lambda: open(SECRET).read())
probe("write", lambda: open(OUTSIDE + "/planted", "w").write("x"))
probe("listdir-home", lambda: os.listdir(HOME))
probe("signal", lambda: os.kill(TESTPID, signal.SIGURG))  # harmless to a Go program, yet refused
probe("tcp", tcp)
probe("unix", unix(UNIX))
if BUS: probe("dbus", bus)
open("inside.txt", "w").write("mine")
print("inside", open("inside.txt").read())
`
		host, port, _ := net.SplitHostPort(w.tcp)
		vars := fmt.Sprintf("KEY=%q\nSECRET=%q\nOUTSIDE=%q\nHOME=%q\nHOST=%q\nPORT=%s\nUNIX=%q\nBUS=%q\nTESTPID=%d\n",
			w.key, w.secretFile, w.outside, w.home, host, port, w.unix, w.dbus, os.Getpid())
		text, _, _ := call(t, k, "s1", py(vars+probe, 30))
		t.Logf("probes:\n%s", text)
		want := []string{"key", "file", "write", "listdir-home", "signal", "tcp", "unix"}
		if w.dbus != "" {
			want = append(want, "dbus")
		}
		for _, name := range want {
			if !strings.Contains(text, "\n"+name+" DENIED") && !strings.HasPrefix(text, name+" DENIED") {
				t.Errorf("%s was not denied:\n%s", name, text)
			}
		}
		if strings.Contains(text, "LEAKED") || strings.Contains(text, "SECRET") || strings.Contains(text, "CONNECTED") {
			t.Errorf("the sandbox leaked:\n%s", text)
		}
		if !strings.Contains(text, "inside mine") {
			t.Errorf("the workspace is not writable:\n%s", text)
		}
		if _, err := os.Stat(filepath.Join(w.outside, "planted")); err == nil {
			t.Error("the code wrote outside its workspace")
		}
		// bash, with its own tools, fares no better.
		text, _, _ = call(t, k, "s1", fmt.Sprintf(`{"language":"bash","code":%s}`,
			strconv.Quote(fmt.Sprintf("cat %q; echo x > %q/planted2; ls %q; echo done", w.key, w.outside, w.home))))
		if strings.Contains(text, "SECRET") || strings.Contains(text, "diary.txt") || !strings.Contains(text, "done") {
			t.Errorf("bash reached the home:\n%s", text)
		}
		if _, err := os.Stat(filepath.Join(w.outside, "planted2")); err == nil {
			t.Error("bash wrote outside its workspace")
		}
	})
}

// TestSandboxNetworkSession: a session the owner gave the network (network_sessions) reaches
// TCP under bubblewrap, still not the host's unix sockets nor the D-Bus bus; without
// bubblewrap the setting gives nothing.
func TestSandboxNetworkSession(t *testing.T) {
	modes(t, func(t *testing.T, bwrap bool) {
		w := plant(t)
		// An abstract socket, the kind a shared network namespace reaches without any file.
		w.dbus = startBus(t, fmt.Sprintf("unix:abstract=/tmp/hologram-code-test-%d-%t", os.Getpid(), bwrap))
		conf := fmt.Sprintf("cache = %q\nnetwork_sessions = [\"net\"]\n", cacheDir)
		k := startConf(t, w, bwrap, conf)
		host, port, _ := net.SplitHostPort(w.tcp)
		code := fmt.Sprintf(`import socket
def probe(name, family, addr):
    try:
        s = socket.socket(family, socket.SOCK_STREAM); s.settimeout(3); s.connect(addr); print(name, "REACHED", s.recv(20))
    except Exception as e:
        print(name, "DENIED", type(e).__name__, e)
probe("tcp", socket.AF_INET, (%q, %s))
probe("unix", socket.AF_UNIX, %q)
bus = %q
if bus.startswith("unix:abstract="):
    probe("dbus", socket.AF_UNIX, "\0" + bus.split("=", 1)[1].split(",")[0])
`, host, port, w.unix, w.dbus)
		text, _, _ := call(t, k, "net", py(code, 30))
		t.Logf("a session with the network:\n%s", text)
		if bwrap != strings.Contains(text, "tcp REACHED b'CONNECTED'") {
			t.Errorf("TCP with network_sessions (bubblewrap %v):\n%s", bwrap, text)
		}
		if !strings.Contains(text, "unix DENIED") || w.dbus != "" && !strings.Contains(text, "dbus DENIED") {
			t.Errorf("the host's unix sockets with the network:\n%s", text)
		}
		if text, _, _ := call(t, k, "other", py(code, 30)); strings.Contains(text, "REACHED") {
			t.Errorf("a session without the network reached:\n%s", text)
		}
	})
}

// TestSandboxHelloWorlds runs a hello world in each language, and shows a session's
// workspace persists between runs and belongs to that session alone.
func TestSandboxHelloWorlds(t *testing.T) {
	modes(t, func(t *testing.T, bwrap bool) {
		w := plant(t)
		k := start(t, w, bwrap)
		for _, tc := range []struct{ lang, code string }{
			{"python", `print("hello from python")`},
			{"bash", `echo "hello from bash"`},
			{"node", `console.log("hello from javascript")`},
			{"go", "package main\nimport \"fmt\"\nfunc main() { fmt.Println(\"hello from go\") }\n"},
		} {
			start := time.Now()
			text, _, isErr := call(t, k, "s1", fmt.Sprintf(`{"language":%q,"code":%s,"timeout":300}`, tc.lang, strconv.Quote(tc.code)))
			t.Logf("%s: %s in %s", tc.lang, strings.SplitN(text, "\n", 2)[0], time.Since(start).Round(time.Millisecond))
			if isErr || !strings.Contains(text, "exit 0") || !strings.Contains(text, "hello from ") {
				t.Errorf("%s hello world:\n%s", tc.lang, text)
			}
		}
		text, _, _ := call(t, k, "s1", `{"language":"sh","code":"echo kept > kept.txt","files":{"in/data.csv":"a,b\n1,2\n"}}`)
		if !strings.Contains(text, "kept.txt") {
			t.Errorf("the file the code wrote is not reported:\n%s", text)
		}
		text, _, _ = call(t, k, "s1", `{"language":"bash","code":"cat kept.txt in/data.csv"}`)
		if !strings.Contains(text, "kept\na,b\n1,2") {
			t.Errorf("the workspace did not persist:\n%s", text)
		}
		text, _, _ = call(t, k, "s2", `{"language":"bash","code":"ls; echo listed"}`)
		if strings.Contains(text, "kept.txt") {
			t.Errorf("another session sees s1's workspace:\n%s", text)
		}
		text, _, isErr := call(t, k, "s1", `{"language":"cobol","code":"x"}`)
		if !isErr || !strings.Contains(text, "python (python3, py)") {
			t.Errorf("an unknown language: %q", text)
		}
		raw, err := os.ReadFile(filepath.Join(w.data, "code", "runs.jsonl"))
		if err != nil || !bytes.Contains(raw, []byte(`"code":"echo kept \u003e kept.txt"`)) || !bytes.Contains(raw, []byte(`hello from go`)) {
			t.Errorf("the runs are not recorded with their code and result: %v\n%s", err, raw)
		}
	})
}

// TestSandboxContains runs what would hurt the machine: a fork bomb (the test is under a
// pids cap of its own), a 2 GiB allocation, 100 MB of output and an endless loop.
func TestSandboxContains(t *testing.T) {
	capped := capTest(t, 3000)
	modes(t, func(t *testing.T, bwrap bool) {
		w := plant(t)
		k := start(t, w, bwrap)
		text, _, _ := call(t, k, "s1", py("import os, time\nn = 0\nwhile True:\n    try:\n        os.fork(); n += 1\n    except OSError:\n        time.sleep(0.01)\n", 3))
		t.Logf("fork bomb: %s", firstLine(text))
		if !strings.Contains(text, "timed out after 3s: killed") {
			t.Errorf("the fork bomb was not killed at its timeout:\n%s", text)
		}
		if left, _ := filepath.Glob(filepath.Join(capped, "hologram-code-*", "cgroup.procs")); len(left) != 0 {
			t.Errorf("the run's pids cgroup is still there: %v", left)
		}
		for start := time.Now(); ; time.Sleep(50 * time.Millisecond) { // the killed are reaped by init, in their time
			raw, _ := os.ReadFile(filepath.Join(capped, "pids.current"))
			if n, _ := strconv.Atoi(strings.TrimSpace(string(raw))); n < 64 || time.Since(start) > 10*time.Second {
				t.Logf("processes under the test's cap %s after the fork bomb's end: %d", time.Since(start).Round(time.Millisecond), n)
				break
			}
		}
		text, _, _ = call(t, k, "s1", py("b = bytearray(2 << 30)\nprint('allocated', len(b))", 30))
		t.Logf("2 GiB: %s", strings.ReplaceAll(text, "\n", " | "))
		if !strings.Contains(text, "MemoryError") || strings.Contains(text, "allocated") {
			t.Errorf("a 2 GiB allocation was not refused:\n%s", text)
		}
		text, _, _ = call(t, k, "s1", py("import sys\nline = 'x' * 999 + '\\n'\nfor _ in range(100000):\n    sys.stdout.write(line)\nprint('end')", 60))
		if len(text) > pipeShow+4096 || !strings.Contains(text, "[stdout truncated: 100000004 bytes written, the first 1048576 kept, the rest dropped]") {
			t.Errorf("100 MB of output: %d bytes of result, ending %q", len(text), text[max(0, len(text)-300):])
		}
		started := time.Now()
		text, _, _ = call(t, k, "s1", py("while True:\n    pass", 2))
		took := time.Since(started)
		t.Logf("while True with timeout 2: killed after %s (the issue's bound: 2.5 s)", took.Round(time.Millisecond))
		if !strings.Contains(text, "timed out after 2s: killed") || took > 10*time.Second {
			t.Errorf("the endless loop: %s after %s", text, took)
		}
		if text, _, isErr := call(t, k, "s1", py("print('still here')", 30)); isErr || !strings.Contains(text, "still here") {
			t.Errorf("the plugin after the attacks:\n%s", text)
		}
	})
}

// TestSandboxPlot plots with matplotlib: the PNG comes back as an image item.
func TestSandboxPlot(t *testing.T) {
	if exec.Command("/usr/bin/python3", "-c", "import matplotlib").Run() != nil {
		if os.Getenv("HOLOGRAM_CI") != "" {
			t.Fatal("python3-matplotlib is missing")
		}
		t.Skip("python3-matplotlib is not installed")
	}
	modes(t, func(t *testing.T, bwrap bool) {
		w := plant(t)
		k := start(t, w, bwrap)
		text, items, isErr := call(t, k, "s1", py("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.savefig('plot.png')\nprint('saved')", 120))
		if isErr || len(items) != 1 || items[0].Type != "image" || items[0].MimeType != "image/png" || !strings.Contains(text, "plot.png") {
			t.Fatalf("the plot: %v %+v\n%s", isErr, items, text)
		}
		if png := items[0].Data; !strings.HasPrefix(string(png), "iVBORw0KGgo") { // base64 of the PNG signature
			t.Errorf("not a PNG: %.40s", png)
		}
		res, err := k.CallToolMeta(context.Background(), "code_files", `{"path":"plot.png"}`, protocol.RequestMeta{Session: "s1"})
		if err != nil || len(res.Content) != 1 || res.Content[0].Type != "image" {
			t.Errorf("code_files plot.png: %v %+v", err, res)
		}
	})
}

// TestSandboxHelloLatency measures code_run's python hello world, sandbox set-up included
// (the target: p50 ≤ 300 ms), with bubblewrap and with Landlock alone.
func TestSandboxHelloLatency(t *testing.T) {
	modes(t, func(t *testing.T, bwrap bool) {
		w := plant(t)
		k := start(t, w, bwrap)
		call(t, k, "s1", py("print('warm')", 30))
		var took []time.Duration
		for range 15 {
			start := time.Now()
			text, _, _ := call(t, k, "s1", py("print('hello')", 30))
			took = append(took, time.Since(start))
			if !strings.Contains(text, "hello") {
				t.Fatalf("hello: %s", text)
			}
		}
		slices.Sort(took)
		t.Logf("python hello world through code_run: p50 %s, min %s, max %s (15 runs)", took[len(took)/2].Round(time.Millisecond),
			took[0].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
	})
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }

// capTest puts the test process (and so every plugin it starts) in a pids cgroup of its own
// capped at max, for a test that runs a fork bomb; it moves back when the test ends.
func capTest(t *testing.T, max int) string {
	t.Helper()
	own := pidsCgroup()
	if own == "" {
		if os.Getenv("HOLOGRAM_CI") != "" {
			t.Fatal("no writable pids cgroup to cap the fork bomb test")
		}
		t.Skip("no writable pids cgroup: the fork bomb is not run uncapped")
	}
	dir := filepath.Join(own, fmt.Sprintf("hologram-code-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(own, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o600)
		killCgroup(dir, true)
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("the test's pids cgroup %s was not removed (something is left in it)", dir)
		}
	})
	return dir
}

// TestBrokenBwrap: a bubblewrap that cannot make a sandbox (a systemd unit with
// RestrictNamespaces=yes, here /bin/false) is set aside at start: runs are confined by
// Landlock alone and code_languages says why.
func TestBrokenBwrap(t *testing.T) {
	w := plant(t)
	k := startConf(t, w, true, fmt.Sprintf("cache = %q\nbwrap = \"/bin/false\"\n", cacheDir))
	langs, err := k.ToolText(context.Background(), "code_languages", `{}`, "")
	if err != nil || !strings.Contains(langs, "(not bubblewrap: /bin/false does not start") || strings.HasPrefix(strings.SplitN(langs, "sandbox: ", 2)[1], "bubblewrap") {
		t.Fatalf("code_languages: %q %v", langs, err)
	}
	if text, _, isErr := call(t, k, "s1", py("print(open(__file__).name)", 30)); isErr || !strings.Contains(text, filepath.Join(w.data, "code", "sessions", "s1", "tmp", "main.py")) {
		t.Errorf("a run with the broken bubblewrap set aside:\n%s", text)
	}
}
