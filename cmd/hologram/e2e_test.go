//go:build integration

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// The real-window tests run the hologram binaries, built once with the Makefile's flags, under
// Xvfb: they type into the real input with xdotool, read the app's trace (HOLOGRAM_GUI_TRACE,
// a FIFO here), drive the tray over a private D-Bus session bus with a StatusNotifierWatcher of
// their own, and save screenshots to build/screenshots/.

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hgbin")
	if err != nil {
		panic(err)
	}
	binDir = dir
	builds := []struct{ out, tags, pkg string }{
		{"hologram", "sqlite_fts5", "."},
		{"hologram-client", "sqlite_fts5,nokernel", "."},
		{"homed", "sqlite_fts5", "../homed"},
		{"waiter", "sqlite_fts5", "../waiter"},
	}
	for _, b := range builds {
		cmd := exec.Command(goTool(), "build", "-trimpath", "-tags="+b.tags, "-o", filepath.Join(dir, b.out), b.pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n", b.out, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// need skips the test when a tool is missing, or fails it under HOLOGRAM_CI=1.
func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("HOLOGRAM_CI") == "1" {
				t.Fatalf("%s is missing (HOLOGRAM_CI=1): install it (.ci/deps.sh)", tool)
			}
			t.Skipf("%s is missing", tool)
		}
	}
}

const waitLong = 60 * time.Second // generous: the machine is shared and Mesa draws in software

// xserver starts Xvfb on a free display (it picks one and tells it on -displayfd) and returns
// DISPLAY; the server stops when the test ends.
func xserver(t *testing.T) string {
	t.Helper()
	need(t, "Xvfb", "xdotool", "import")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// -noreset: by default Xvfb resets itself whenever its last client leaves (between two apps of
	// one test), and a client connecting during the reset fails to open the display.
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-noreset", "-screen", "0", "1280x800x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{pw}
	var errBuf syncBuf
	cmd.Stderr = &errBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
			t.Errorf("Xvfb exited during the test:\n%s", errBuf.String())
			return
		default:
		}
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("Xvfb said:\n%s", errBuf.String())
		}
	})
	num := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(pr).ReadString('\n')
		pr.Close()
		num <- strings.TrimSpace(line)
	}()
	select {
	case n := <-num:
		if n == "" {
			t.Fatalf("Xvfb told no display:\n%s", errBuf.String())
		}
		return ":" + n
	case <-time.After(waitLong):
		t.Fatalf("Xvfb did not start:\n%s", errBuf.String())
	}
	return ""
}

// privateBus starts a session bus of the test's own and returns its address.
func privateBus(t *testing.T) string {
	t.Helper()
	need(t, "dbus-daemon")
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(addr) == "" {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	return strings.TrimSpace(addr)
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// install is one user's installation: data dir, XDG dirs, socket.
type install struct {
	t       *testing.T
	root    string
	data    string
	sock    string
	display string
	nobin   string     // an empty directory: PATH for runs without a bus (no dbus-launch autolaunch)
	apps    []*running // the apps startGUI started, for a failure's diagnosis
}

func newInstall(t *testing.T, display string) *install {
	t.Helper()
	root, err := os.MkdirTemp("", "hg") // short: unix socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	in := &install{t: t, root: root, data: filepath.Join(root, "data"), sock: filepath.Join(root, "run", "k.sock"),
		display: display, nobin: filepath.Join(root, "nobin")}
	for _, d := range []string{in.nobin, filepath.Join(root, "run")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

// environ is a clean environment: nothing of the test runner's session leaks in (above all no
// D-Bus address). bus "" means no bus, and a PATH without dbus-launch.
func (in *install) environ(bus string, extra ...string) []string {
	env := []string{
		"HOME=" + in.root, "LANG=en_US.UTF-8", "DISPLAY=" + in.display,
		"XDG_CONFIG_HOME=" + filepath.Join(in.root, "config"), "XDG_DATA_HOME=" + filepath.Join(in.root, "xdgdata"),
		"XDG_CACHE_HOME=" + filepath.Join(in.root, "cache"), "XDG_RUNTIME_DIR=" + filepath.Join(in.root, "run"),
		"HOLOGRAM_SOCKET=" + in.sock,
	}
	if bus != "" {
		env = append(env, "DBUS_SESSION_BUS_ADDRESS="+bus, "PATH="+os.Getenv("PATH"))
	} else {
		env = append(env, "PATH="+in.nobin)
	}
	return append(env, extra...)
}

// running is a hologram process with its trace.
type running struct {
	t      *testing.T
	in     *install
	cmd    *exec.Cmd
	out    *syncBuf
	done   chan struct{}
	start  time.Time
	fifo   string
	mu     sync.Mutex
	lines  []map[string]any
	change chan struct{}
}

var guiSeq int

// startGUI runs bin (hologram or hologram-client) with its trace on a FIFO the test reads.
func (in *install) startGUI(bin, bus string, args ...string) *running {
	t := in.t
	t.Helper()
	guiSeq++
	g := &running{t: t, in: in, out: &syncBuf{}, done: make(chan struct{}), change: make(chan struct{}),
		fifo: filepath.Join(in.root, fmt.Sprintf("trace%d", guiSeq))}
	if err := syscall.Mkfifo(g.fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	reading := make(chan struct{})
	go g.read(reading)
	g.cmd = exec.Command(filepath.Join(binDir, bin), args...)
	g.cmd.Env = in.environ(bus, "HOLOGRAM_GUI_TRACE="+g.fifo)
	g.cmd.Stdout, g.cmd.Stderr = g.out, g.out
	g.start = time.Now()
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.cmd.Wait(); close(g.done) }()
	in.apps = append(in.apps, g)
	t.Cleanup(func() {
		g.cmd.Process.Kill()
		<-g.done
		// Unblock the reader if the app never opened its trace.
		if f, err := os.OpenFile(g.fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		<-reading
		if t.Failed() {
			t.Logf("%s output:\n%s", bin, g.out)
		}
	})
	return g
}

func (g *running) read(done chan struct{}) {
	defer close(done)
	f, err := os.Open(g.fifo)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			m = map[string]any{"kind": "unparsable", "text": sc.Text()}
		}
		g.mu.Lock()
		g.lines = append(g.lines, m)
		close(g.change)
		g.change = make(chan struct{})
		g.mu.Unlock()
	}
}

// waitTrace waits for a trace line with every field of want whose text (if check is set)
// passes check.
func (g *running) waitTrace(want map[string]any, check func(map[string]any) bool) map[string]any {
	g.t.Helper()
	deadline := time.After(waitLong)
	for {
		g.mu.Lock()
		lines, ch := g.lines, g.change
		g.mu.Unlock()
		for _, m := range lines {
			ok := true
			for k, v := range want {
				ok = ok && reflect.DeepEqual(m[k], v)
			}
			if ok && (check == nil || check(m)) {
				return m
			}
		}
		select {
		case <-ch:
		case <-g.done:
			g.t.Fatalf("the app exited (%v) before a trace line with %v; trace %v", g.cmd.ProcessState, want, lines)
		case <-deadline:
			g.t.Fatalf("no trace line with %v; %s", want, g.in.diagnose())
		}
	}
}

// stop sends SIGTERM and returns the exit code; a panic in the output fails the test.
func (g *running) stop() int {
	g.t.Helper()
	g.cmd.Process.Signal(syscall.SIGTERM)
	return g.wait()
}

func (g *running) wait() int {
	g.t.Helper()
	select {
	case <-g.done:
	case <-time.After(waitLong):
		// SIGQUIT makes the Go runtime print every goroutine's stack: what it waits for.
		g.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-g.done:
		case <-time.After(5 * time.Second):
		}
		g.t.Fatalf("the app did not exit (its goroutines, after SIGQUIT, at the end):\n%s", g.out)
	}
	if strings.Contains(g.out.String(), "panic:") || strings.Contains(g.out.String(), "SIGSEGV") {
		g.t.Fatalf("the app panicked:\n%s", g.out)
	}
	return g.cmd.ProcessState.ExitCode()
}

// window waits until a visible window whose name matches re exists and returns its id and
// geometry. It asks xdotool every 10 ms (xdotool's own --sync polls every 500 ms, too coarse to
// measure the start).
// hasWindow reports whether a visible window whose name matches re appears within d.
func (in *install) hasWindow(re string, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if out, _ := in.xdo(context.Background(), "search", "--onlyvisible", "--name", re); strings.TrimSpace(out) != "" {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

func (in *install) window(re string) (id string, x, y, w, h int) {
	t := in.t
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(waitLong)
	for id == "" {
		out, _ := in.xdo(context.Background(), "search", "--onlyvisible", "--name", re)
		if f := strings.Fields(out); len(f) > 0 {
			id = f[0]
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("no window %q; %s", re, in.diagnose())
		}
	}
	geo, err := in.xdo(context.Background(), "getwindowgeometry", "--shell", id)
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]int{}
	for _, line := range strings.Split(geo, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			vals[k], _ = strconv.Atoi(v)
		}
	}
	return id, vals["X"], vals["Y"], vals["WIDTH"], vals["HEIGHT"]
}

// diagnose is what a failed wait reports: the X server's windows and each running app's trace;
// it also makes each running app print its goroutines (SIGQUIT), which its output then shows.
func (in *install) diagnose() string {
	var b strings.Builder
	ids, _ := in.xdo(context.Background(), "search", "--name", "")
	visible, _ := in.xdo(context.Background(), "search", "--onlyvisible", "--name", "")
	shown := map[string]bool{}
	for _, id := range strings.Fields(visible) {
		shown[id] = true
	}
	b.WriteString("windows:")
	for _, id := range strings.Fields(ids) {
		name, _ := in.xdo(context.Background(), "getwindowname", id)
		fmt.Fprintf(&b, " %s %q visible=%v;", id, strings.TrimSpace(name), shown[id])
	}
	for _, g := range in.apps {
		select {
		case <-g.done:
			continue
		default:
		}
		g.mu.Lock()
		fmt.Fprintf(&b, "\ntrace of pid %d: %v", g.cmd.Process.Pid, g.lines)
		g.mu.Unlock()
		g.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-g.done:
		case <-time.After(5 * time.Second):
		}
	}
	return b.String()
}

func (in *install) xdo(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "xdotool", args...)
	cmd.Env = []string{"DISPLAY=" + in.display, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("xdotool %v: %w: %s", args, err, out)
	}
	return string(out), nil
}

func (in *install) do(args ...string) {
	in.t.Helper()
	if _, err := in.xdo(context.Background(), args...); err != nil {
		in.t.Fatal(err)
	}
}

// chat types text into the chat input of the window at (x, y, w, h) and sends it with Enter.
func (in *install) chat(x, y, w, h int, text string) {
	in.t.Helper()
	in.do("mousemove", strconv.Itoa(x+w*6/10), strconv.Itoa(y+h-80), "click", "1")
	in.do("type", "--delay", "15", text)
	in.do("key", "Return")
}

// capture grabs the top-left 1000×680 of the screen (no window manager: windows sit at 0,0).
func (in *install) capture() image.Image {
	in.t.Helper()
	cmd := exec.Command("import", "-window", "root", "-crop", "1000x680+0+0", "png:-")
	cmd.Env = []string{"DISPLAY=" + in.display, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		in.t.Fatalf("import: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		in.t.Fatalf("decode screenshot: %v", err)
	}
	return img
}

// screenshot captures until two captures in a row are the same, not blank, and differ from
// not (the previous screen), so the shot shows the new screen fully drawn, and saves it as
// build/screenshots/<name>.png.
func (in *install) screenshot(name string, not image.Image) image.Image {
	in.t.Helper()
	var prev image.Image
	for i := 0; i < 100; i++ {
		img := in.capture()
		if prev != nil && diffFraction(img, prev) == 0 && blank(img) == "" && (not == nil || diffFraction(img, not) > 0.01) {
			dir := filepath.Join("..", "..", "build", "screenshots")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				in.t.Fatal(err)
			}
			f, err := os.Create(filepath.Join(dir, name+".png"))
			if err != nil {
				in.t.Fatal(err)
			}
			defer f.Close()
			if err := png.Encode(f, img); err != nil {
				in.t.Fatal(err)
			}
			return img
		}
		prev = img
	}
	in.t.Fatalf("the %s screen never settled", name)
	return nil
}

// drawn waits until the screen is drawn and at rest (two identical captures in a row, not
// blank), so input goes to laid-out widgets: events before the first frame are lost.
func (in *install) drawn() image.Image {
	in.t.Helper()
	var prev image.Image
	for i := 0; i < 100; i++ {
		img := in.capture()
		if prev != nil && blank(img) == "" && diffFraction(img, prev) == 0 {
			return img
		}
		prev = img
	}
	in.t.Fatal("the screen never came to rest")
	return nil
}

// diffFraction is the fraction of pixels that differ between a and b.
func diffFraction(a, b image.Image) float64 {
	r := a.Bounds()
	if r != b.Bounds() {
		return 1
	}
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				n++
			}
		}
	}
	return float64(n) / float64(r.Dx()*r.Dy())
}

// blank says why img is (nearly) one colour, or "".
func blank(img image.Image) string {
	counts := map[[4]uint32]int{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c0, c1, c2, c3 := img.At(x, y).RGBA()
			counts[[4]uint32{c0, c1, c2, c3}]++
		}
	}
	most := 0
	for _, n := range counts {
		most = max(most, n)
	}
	if len(counts) < 16 || float64(most) > 0.99*float64(r.Dx()*r.Dy()) {
		return fmt.Sprintf("%d colours, the commonest covers %d of %d pixels", len(counts), most, r.Dx()*r.Dy())
	}
	return ""
}

// kernelClient is a client of the kernel on the installation's socket.
func (in *install) kernelClient() *client.HTTP {
	in.t.Helper()
	c, err := client.Dial(client.Options{Socket: in.sock})
	if err != nil {
		in.t.Fatal(err)
	}
	in.t.Cleanup(func() { c.Close() })
	return c
}

// realReply is the scripted model's answer in TestRealWindow (Markdown, as a model writes it,
// for the chat screenshot).
const realReply = "Quite a few things:\n\n" +
	"- **Chat** with whichever model you configured, local or in the cloud.\n" +
	"- **Remember**: what we talk about sinks into memory, and I recall it when it matters.\n" +
	"- **Use tools**: read and write your notes through the `files` plugin, or any MCP server you add.\n\n" +
	"What would you like to start with?"

func isReply(m map[string]any) bool {
	s, _ := m["text"].(string)
	return strings.Contains(s, "PONG")
}

// memory reads a process's resident memory: total, anonymous and file-backed (mostly shared
// libraries: Mesa's software GL maps LLVM), in MB.
func memory(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		for _, k := range []string{"VmRSS", "RssAnon", "RssFile"} {
			if v, ok := strings.CutPrefix(line, k+":"); ok {
				n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				out = append(out, fmt.Sprintf("%s %d MB", k, n/1024))
			}
		}
	}
	return strings.Join(out, ", ")
}

// TestRealWindow: the welcome screen on a fresh data dir; then, with a provider (the fake LLM),
// a message typed into the real input gets its reply; screenshots of the four screens.
func TestRealWindow(t *testing.T) {
	in := newInstall(t, xserver(t))
	llm := llmtest.NewServer(t)

	g := in.startGUI("hologram", "", "--data", in.data)
	_, _, _, w, h := in.window("^HologramAgent$")
	t.Logf("start to first frame, kernel in-process, fresh data dir: %v", time.Since(g.start).Round(time.Millisecond))
	if w != 1000 || h != 680 {
		t.Errorf("main window is %d×%d, want 1000×680", w, h)
	}
	g.waitTrace(map[string]any{"kind": "screen", "screen": "welcome"}, nil)
	welcome := in.screenshot("welcome", nil)

	// A provider (and a plugin, for the plugins screen) through the kernel's own socket, then
	// a restart: the app now opens on the chat.
	kc := in.kernelClient()
	ctx := context.Background()
	if _, err := kc.AddProvider(ctx, client.ProviderConfig{Name: "local", BaseURL: llm.URL(), Model: "qwen2.5"}); err != nil {
		t.Fatal(err)
	}
	// The filesystem MCP server (an npm peer, `make npm-peers`) by its command name, as a user
	// would add it: node and the server are linked into the app's PATH.
	fsServer, _ := filepath.Abs("../../plugins/testdata/npm/node_modules/.bin/mcp-server-filesystem")
	node, nerr := exec.LookPath("node")
	if _, err := os.Stat(fsServer); err != nil || nerr != nil {
		if os.Getenv("HOLOGRAM_CI") == "1" {
			t.Fatalf("the filesystem MCP server or node is missing (run `make npm-peers`): %v %v", err, nerr)
		}
		t.Logf("no filesystem MCP server (%v %v): the plugins screen shows none", err, nerr)
	} else {
		for name, target := range map[string]string{"node": node, "mcp-server-filesystem": fsServer} {
			if err := os.Symlink(target, filepath.Join(in.nobin, name)); err != nil {
				t.Fatal(err)
			}
		}
		notes := filepath.Join(in.root, "notes")
		if err := os.Mkdir(notes, 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := kc.AddPlugin(ctx, client.PluginConfig{Name: "files", Command: []string{"mcp-server-filesystem", notes}}); err != nil {
			t.Fatal(err)
		}
	}
	if code := g.stop(); code != 0 {
		t.Fatalf("exit %d on SIGTERM:\n%s", code, g.out)
	}

	g = in.startGUI("hologram", "", "--data", in.data)
	_, x, y, w, h := in.window("^HologramAgent$")
	t.Logf("start to first frame, kernel in-process, existing data dir: %v", time.Since(g.start).Round(time.Millisecond))
	g.waitTrace(map[string]any{"kind": "screen", "screen": "chat"}, nil)
	in.drawn()
	llm.Script(llmtest.Reply{Text: realReply})
	in.chat(x, y, w, h, "What can you do for me?")
	g.waitTrace(map[string]any{"kind": "message", "window": "main", "role": "user", "text": "What can you do for me?"}, nil)
	reply := g.waitTrace(map[string]any{"kind": "message", "window": "main", "role": "assistant"}, func(m map[string]any) bool {
		return m["text"] == realReply
	})
	t.Logf("reply in the view-model: %q", reply["text"])
	t.Logf("full variant after a turn: %s", memory(g.cmd.Process.Pid))
	chat := in.screenshot("chat", welcome)

	// Leave the input (its shortcuts would take the keys), then Alt+4 and Alt+5.
	in.do("mousemove", strconv.Itoa(x+w-60), strconv.Itoa(y+25), "click", "1")
	in.do("key", "alt+4")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "plugins"}, nil)
	plugins := in.screenshot("plugins", chat)
	in.do("key", "alt+5")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "settings"}, nil)
	settings := in.screenshot("settings", plugins)

	shots := map[string]image.Image{"welcome": welcome, "chat": chat, "plugins": plugins, "settings": settings}
	names := []string{"welcome", "chat", "plugins", "settings"}
	for i, a := range names {
		if why := blank(shots[a]); why != "" {
			t.Errorf("the %s screenshot is blank: %s", a, why)
		}
		for _, b := range names[i+1:] {
			if d := diffFraction(shots[a], shots[b]); d < 0.01 {
				t.Errorf("the %s and %s screenshots differ in %.2f%% of pixels only", a, b, 100*d)
			}
		}
	}
	if code := g.stop(); code != 0 {
		t.Fatalf("exit %d on SIGTERM:\n%s", code, g.out)
	}
}

// watcher is a StatusNotifierWatcher of the test's own: it accepts an item's registration and
// reports the registering connection.
type watcher struct {
	conn    *dbus.Conn
	items   chan string
	updates chan *dbus.Signal // the menus' LayoutUpdated signals
}

func (w *watcher) RegisterStatusNotifierItem(sender dbus.Sender, service string) *dbus.Error {
	w.items <- string(sender)
	return nil
}

func (w *watcher) RegisterStatusNotifierHost(string) *dbus.Error { return nil }

func newWatcher(t *testing.T, addr string) *watcher {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	w := &watcher{conn: conn, items: make(chan string, 4), updates: make(chan *dbus.Signal, 64)}
	if err := conn.AddMatchSignal(dbus.WithMatchInterface("com.canonical.dbusmenu"), dbus.WithMatchMember("LayoutUpdated")); err != nil {
		t.Fatal(err)
	}
	conn.Signal(w.updates)
	if err := conn.Export(w, "/StatusNotifierWatcher", "org.kde.StatusNotifierWatcher"); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName("org.kde.StatusNotifierWatcher", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning org.kde.StatusNotifierWatcher: %v %v", reply, err)
	}
	return w
}

// menuItem is one entry of a dbusmenu layout.
type menuItem struct {
	id    int32
	label string
	kind  string // "separator" or ""
}

// menu reads the item's menu with com.canonical.dbusmenu.GetLayout once ready holds for it,
// waiting on the menu's LayoutUpdated signals (not on a clock) in between.
func (w *watcher) menu(t *testing.T, item string, ready func(items []menuItem) bool) (dbus.ObjectPath, []menuItem) {
	t.Helper()
	v, err := w.conn.Object(item, "/StatusNotifierItem").GetProperty("org.kde.StatusNotifierItem.Menu")
	if err != nil {
		t.Fatalf("reading the item's Menu property: %v", err)
	}
	path, ok := v.Value().(dbus.ObjectPath)
	if !ok {
		t.Fatalf("Menu is %T", v.Value())
	}
	deadline := time.After(waitLong)
	for {
		_, items := w.layout(t, item, path)
		if ready(items) {
			return path, items
		}
		select {
		case <-w.updates:
		case <-deadline:
			t.Fatalf("the tray menu never settled: %+v", items)
		}
	}
}

func (w *watcher) layout(t *testing.T, item string, path dbus.ObjectPath) (uint32, []menuItem) {
	t.Helper()
	var rev uint32
	var layout struct {
		ID       int32
		Props    map[string]dbus.Variant
		Children []dbus.Variant
	}
	if err := w.conn.Object(item, path).Call("com.canonical.dbusmenu.GetLayout", 0, int32(0), int32(-1), []string{}).Store(&rev, &layout); err != nil {
		t.Fatalf("GetLayout: %v", err)
	}
	var items []menuItem
	for _, c := range layout.Children {
		fields, ok := c.Value().([]any)
		if !ok || len(fields) < 2 {
			t.Fatalf("menu child %v", c)
		}
		it := menuItem{}
		it.id, _ = fields[0].(int32)
		props, _ := fields[1].(map[string]dbus.Variant)
		if l, ok := props["label"]; ok {
			it.label, _ = l.Value().(string)
		}
		if k, ok := props["type"]; ok {
			it.kind, _ = k.Value().(string)
		}
		items = append(items, it)
	}
	return rev, items
}

func (w *watcher) click(t *testing.T, item string, path dbus.ObjectPath, items []menuItem, label string) {
	t.Helper()
	for _, it := range items {
		if it.label == label {
			call := w.conn.Object(item, path).Call("com.canonical.dbusmenu.Event", 0, it.id, "clicked", dbus.MakeVariant(""), uint32(0))
			if call.Err != nil {
				t.Fatalf("clicking %q: %v", label, call.Err)
			}
			return
		}
	}
	t.Fatalf("no menu item %q in %+v", label, items)
}

func labels(items []menuItem) string {
	var out []string
	for _, it := range items {
		if it.kind != "separator" {
			out = append(out, it.label)
		}
	}
	return strings.Join(out, "|")
}

// TestTray: under a private session bus with the test's StatusNotifierWatcher, the item
// registers, its menu is read and clicked over com.canonical.dbusmenu: Quick chat opens its
// window, Pause pauses the kernel (and the item says Resume), Quit exits 0.
func TestTray(t *testing.T) {
	in := newInstall(t, xserver(t))
	bus := privateBus(t)
	w := newWatcher(t, bus)

	g := in.startGUI("hologram", bus, "--data", in.data)
	in.window("^HologramAgent$")
	var item string
	select {
	case item = <-w.items:
	case <-time.After(waitLong):
		t.Fatalf("the tray item never registered:\n%s", g.out)
	}
	// Fyne builds the menu twice: once before the tray is connected and again when the tray is
	// ready, on a goroutine of its own (so maybe after registering), with new item ids; a click
	// on the first build's ids is lost ("no menu item with ID …"). systray numbers items from 1
	// up and never reuses an id, so the second build is the one whose first id is not 1.
	path, items := w.menu(t, item, func(items []menuItem) bool {
		return len(items) > 0 && items[0].id > 1 && labels(items) == "Quick chat|Open HologramAgent|Screenshot|Pause|Quit"
	})
	if got := labels(items); got != "Quick chat|Open HologramAgent|Screenshot|Pause|Quit" {
		t.Fatalf("tray menu %q", got)
	}

	// A click carries the ids of the menu as it was read; Fyne may build the menu once more
	// after that (the kernel's connection changes it), and the click on the old ids is lost, as
	// a tray host would only send it after reading the new layout. So a click that opens nothing
	// within a while is sent again with the menu as it is then.
	for try := 1; ; try++ {
		w.click(t, item, path, items, "Quick chat")
		if in.hasWindow("Quick chat", 10*time.Second) {
			break
		}
		if try == 4 {
			t.Fatalf("Quick chat did not open after %d clicks; menu %+v; %s", try, items, in.diagnose())
		}
		_, items = w.layout(t, item, path)
	}
	in.window("Quick chat")
	g.waitTrace(map[string]any{"kind": "window", "window": "quick", "hidden": false}, nil)

	w.click(t, item, path, items, "Pause")
	g.waitTrace(map[string]any{"kind": "paused", "paused": true}, nil)
	st, err := in.kernelClient().Status(context.Background())
	if err != nil || !st.Paused {
		t.Fatalf("the kernel is not paused: %+v %v", st, err)
	}
	path, items = w.menu(t, item, func(items []menuItem) bool {
		return labels(items) == "Quick chat|Open HologramAgent|Screenshot|Resume|Quit"
	})
	if got := labels(items); got != "Quick chat|Open HologramAgent|Screenshot|Resume|Quit" {
		t.Fatalf("tray menu after Pause %q", got)
	}

	w.click(t, item, path, items, "Quit")
	if code := g.wait(); code != 0 {
		t.Fatalf("exit %d after tray Quit:\n%s", code, g.out)
	}
}

// TestNoBus: with no D-Bus address (and no dbus-launch to autolaunch one) the app runs without
// a tray and quits on SIGTERM without a panic.
func TestNoBus(t *testing.T) {
	in := newInstall(t, xserver(t))
	g := in.startGUI("hologram", "", "--data", in.data)
	in.window("^HologramAgent$")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "welcome"}, nil)
	if code := g.stop(); code != 0 {
		t.Fatalf("exit %d on SIGTERM:\n%s", code, g.out)
	}
	if !strings.Contains(g.out.String(), "no tray") {
		t.Errorf("no word about the missing tray:\n%s", g.out)
	}
}

// TestRemote: the client variant attached to homed over TCP loopback with a token: the window
// comes up and a message gets its reply; with a wrong token the banner says so and the app
// keeps running.
// homed starts homed on the install's data dir, serving its socket and TCP on a free loopback
// port with a generated token; it returns the address and the token file. homed stops with the
// test.
func (in *install) homed() (addr, tokenFile string) {
	t := in.t
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	tokenFile = filepath.Join(in.root, "token")
	homed := exec.Command(filepath.Join(binDir, "homed"), "--data", in.data, "--socket", in.sock, "--listen", addr, "--token-file", tokenFile)
	homed.Env = in.environ("")
	pr, pw := io.Pipe()
	homed.Stderr = pw
	log := &syncBuf{}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		once := sync.Once{}
		for sc.Scan() {
			log.Write([]byte(sc.Text() + "\n"))
			if strings.Contains(sc.Text(), "homed ready") {
				once.Do(func() { close(ready) })
			}
		}
	}()
	if err := homed.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { homed.Wait(); pw.Close(); close(exited) }()
	t.Cleanup(func() { homed.Process.Signal(syscall.SIGTERM); <-exited })
	select {
	case <-ready:
	case <-exited:
		t.Fatalf("homed exited:\n%s", log)
	case <-time.After(waitLong):
		t.Fatalf("homed not ready:\n%s", log)
	}
	return addr, tokenFile
}

func TestRemote(t *testing.T) {
	in := newInstall(t, xserver(t))
	llm := llmtest.NewServer(t)
	addr, tokenFile := in.homed()
	if _, err := in.kernelClient().AddProvider(context.Background(), client.ProviderConfig{Name: "local", BaseURL: llm.URL(), Model: "m"}); err != nil {
		t.Fatal(err)
	}
	url := "http://" + addr

	g := in.startGUI("hologram-client", "", "--remote", url, "--token-file", tokenFile)
	_, x, y, w, h := in.window("^HologramAgent$")
	t.Logf("client variant: start to first frame %v", time.Since(g.start).Round(time.Millisecond))
	g.waitTrace(map[string]any{"kind": "screen", "screen": "chat"}, nil)
	g.waitTrace(map[string]any{"kind": "banner", "state": "connected"}, nil)
	in.drawn()
	t.Logf("client variant with the window up: %s", memory(g.cmd.Process.Pid))
	in.chat(x, y, w, h, "hello over TCP")
	g.waitTrace(map[string]any{"kind": "message", "window": "main", "role": "assistant"}, isReply)
	if code := g.stop(); code != 0 {
		t.Fatalf("exit %d on SIGTERM:\n%s", code, g.out)
	}

	bad := filepath.Join(in.root, "bad-token")
	if err := os.WriteFile(bad, []byte("not-the-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g = in.startGUI("hologram-client", "", "--remote", url, "--token-file", bad)
	in.window("^HologramAgent$")
	g.waitTrace(map[string]any{"kind": "banner", "state": "wrong_token"}, nil)
	select {
	case <-g.done:
		t.Fatalf("the app exited on a wrong token:\n%s", g.out)
	default:
	}
	if code := g.stop(); code != 0 {
		t.Fatalf("exit %d on SIGTERM:\n%s", code, g.out)
	}

	// The client variant refuses to start without --remote when no kernel runs on the data dir.
	cmd := exec.Command(filepath.Join(binDir, "hologram-client"), "--data", filepath.Join(in.root, "empty"))
	cmd.Env = in.environ("", "HOLOGRAM_SOCKET="+filepath.Join(in.root, "none.sock"))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "client build") {
		t.Fatalf("client variant without a kernel: %v\n%s", err, out)
	}
}

// TestNoDisplayClearError: without a reachable display the app says so and exits 1 (GLFW would
// panic).
func TestNoDisplayClearError(t *testing.T) {
	for _, tc := range []struct{ display, want string }{
		{"", "DISPLAY is not set"},
		{":4242", "cannot reach the X display :4242"},
		{"nonsense", "not a display name"},
	} {
		cmd := exec.Command(filepath.Join(binDir, "hologram"), "--data", t.TempDir())
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "DISPLAY=" + tc.display}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "panic") {
			t.Errorf("DISPLAY=%q: %v\n%s", tc.display, err, out)
		}
	}
}
