//go:build integration

package main

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/kerneltest/hosttest"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox/sandboxtest"
)

// startFakeOpenAI starts ../shared/tools/fake_openai.py, the project's independent fake
// provider (it calls tool NAME when the user's message holds `CALL NAME {json}`, then answers
// "DONE <result>"), and returns its base URL.
func startFakeOpenAI(t *testing.T) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "shared", "tools", "fake_openai.py"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("the shared fake provider: %v (the repository's ../shared/tools/fake_openai.py)", err)
	}
	dir := t.TempDir()
	port := filepath.Join(dir, "port")
	cmd := exec.Command("python3", script, port, filepath.Join(dir, "log"))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("python3 %s: %v", script, err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if raw, err := os.ReadFile(port); err == nil && len(raw) > 0 {
			return "http://127.0.0.1:" + strings.TrimSpace(string(raw)) + "/v1"
		}
		if time.Now().After(deadline) {
			t.Fatal("fake_openai.py wrote no port in 10 s")
		}
	}
}

// agent is a real kernel whose model is fake_openai.py, running the built music plugin.
type agent struct {
	k   *hosttest.Kernel
	pid int
}

// startAgent starts the kernel and the plugin built in dir ([hosttest.Build], called before
// the test changes HOME: the go command keeps its caches there); the plugin finds mpd, the bus
// and the library through the kernel's environment (set by the caller), which its manifest
// passes through.
func startAgent(t *testing.T, dir string) *agent {
	t.Helper()
	began := time.Now()
	k := hosttest.Start(t, hosttest.Options{})
	t.Logf("kernel started in %s", time.Since(began).Round(time.Millisecond))
	if _, err := k.Service().AddProvider(hosttest.Context(t), client.ProviderConfig{Name: "fake", BaseURL: startFakeOpenAI(t), Model: "fake-1"}); err != nil {
		t.Fatal(err)
	}
	p := k.RunPlugin(t, "music", dir, "HOLOGRAM_DATA_DIR="+t.TempDir())
	t.Logf("plugin running in %s", time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() { t.Logf("test body done at %s", time.Since(began).Round(time.Millisecond)) })
	sandboxtest.CheckProcess(t, p.PID) // its main confined itself
	k.WaitLog(t, "music", `"msg":"music started"`)
	return &agent{k: k, pid: p.PID}
}

// call runs one owner turn `CALL tool args` and returns the tool's result.
func (a *agent) call(t *testing.T, tool, args string) client.Message {
	t.Helper()
	began := time.Now()
	defer func() { t.Logf("%s %s: %s", tool, args, time.Since(began).Round(time.Millisecond)) }()
	res := a.k.Ask(t, "main", "CALL "+tool+" "+args)
	if !strings.HasPrefix(res.Text, "DONE ") {
		t.Fatalf("%s %s: the model answered %q (the tool was not offered?)", tool, args, res.Text)
	}
	msgs, err := a.k.Service().History(hosttest.Context(t), "main", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "tool" {
			if msgs[i].ToolName != tool {
				t.Fatalf("the last tool result is %s's, not %s's: %+v", msgs[i].ToolName, tool, msgs[i])
			}
			return msgs[i]
		}
	}
	t.Fatalf("%s: no tool result in the history", tool)
	return client.Message{}
}

// ok runs call and checks the result succeeded and holds every one of want.
func (a *agent) ok(t *testing.T, tool, args string, want ...string) string {
	t.Helper()
	m := a.call(t, tool, args)
	if m.ToolStatus != "ok" {
		t.Fatalf("%s %s: %s %q", tool, args, m.ToolStatus, m.Content)
	}
	for _, w := range want {
		if !strings.Contains(m.Content, w) {
			t.Fatalf("%s %s: %q lacks %q", tool, args, m.Content, w)
		}
	}
	return m.Content
}

// failed runs call and checks the result failed with every one of want.
func (a *agent) failed(t *testing.T, tool, args string, want ...string) {
	t.Helper()
	m := a.call(t, tool, args)
	if m.ToolStatus == "ok" {
		t.Fatalf("%s %s succeeded: %q", tool, args, m.Content)
	}
	for _, w := range want {
		if !strings.Contains(m.Content, w) {
			t.Fatalf("%s %s: %q lacks %q", tool, args, m.Content, w)
		}
	}
}

// TestMusicWithMPD drives a real mpd through the agent: the model's calls (fake_openai.py)
// search the generated library, play "something by" an artist (mpd says state: play, on that
// artist's song), pause, resume, skip, set and change the volume, and queue another artist.
// mpd is found through MPD_HOST ("password@host") and MPD_PORT in the kernel's environment;
// a desktop player playing on the session bus is paused when the library starts on mpd.
func TestMusicWithMPD(t *testing.T) {
	built := hosttest.Build(t)
	lib := makeLibrary(t)
	srv := startMPD(t, lib, "s3cret")
	t.Setenv("MPD_HOST", "s3cret@127.0.0.1")
	t.Setenv("MPD_PORT", srv.port)
	t.Setenv("XDG_MUSIC_DIR", lib)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", privateBus(t))
	t.Setenv("HOME", t.TempDir())
	start := time.Now()
	a := startAgent(t, built)
	// The Plugins views list it (waiter plugin list, the desktop's and the web's) with its
	// tools and what it declared.
	ps, err := a.k.Service().Plugins(hosttest.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ps, func(p client.Plugin) bool { return p.Name == "music" })
	if i < 0 || ps[i].State != "running" || len(ps[i].Tools) != 8 || !slices.Contains(ps[i].Permissions.Env, "MPD_HOST") || !ps[i].Permissions.EnvOnly ||
		len(ps[i].Permissions.Paths) == 0 || ps[i].Permissions.Paths[0].Path != lib || ps[i].Permissions.Paths[0].Access != "read" {
		t.Fatalf("the plugin as listed: %+v", ps)
	}

	a.ok(t, "music_status", `{}`, "mpd at 127.0.0.1:"+srv.port+": stopped", "library: "+lib+", 4 tracks")
	a.ok(t, "music_search", `{"query":"testers"}`, "3 tracks match", "Song One — The Testers — First (The Testers/First/01 Song One.flac)")
	a.ok(t, "music_search", `{"query":"nothing like this"}`, "nothing in the music library (4 tracks)")

	// A desktop player is playing something else: playing the library through mpd pauses it.
	other := startPlayer(t, os.Getenv("DBUS_SESSION_BUS_ADDRESS"), "other")
	other.set("PlaybackStatus", "Playing")
	a.k.WaitLog(t, "music", `"msg":"MPRIS player appeared"`, mprisPrefix+"other")
	a.ok(t, "music_play", `{"query":"something by The Testers"}`, "mpd at 127.0.0.1:"+srv.port+": playing 3 tracks")
	if got := other.got(); !slices.Equal(got, []string{"Pause"}) {
		t.Fatalf("the other player got %q, want [Pause]", got)
	}
	st := srv.status(t)
	if st["state"] != "play" || st["Artist"] != "The Testers" || st["Title"] != "Song One" || st["playlistlength"] != "3" {
		t.Fatalf("after music_play, mpd: %v", st)
	}
	if d, _ := strconv.ParseFloat(st["duration"], 64); d < 60 {
		t.Fatalf("the song lasts %v s, want at least 60", st["duration"])
	}
	a.ok(t, "music_pause", `{}`, "paused")
	if st := srv.status(t); st["state"] != "pause" {
		t.Fatalf("after music_pause, mpd: %v", st)
	}
	a.ok(t, "music_play", `{}`, "now playing")
	if st := srv.status(t); st["state"] != "play" {
		t.Fatalf("after music_play {}, mpd: %v", st)
	}
	a.ok(t, "music_next", `{}`, "now playing Song Two by The Testers")
	if st := srv.status(t); st["state"] != "play" || st["Title"] != "Song Two" {
		t.Fatalf("after music_next, mpd: %v", st)
	}
	a.ok(t, "music_previous", `{}`, "Song One")
	a.ok(t, "music_volume", `{"percent":"50"}`, "volume set to 50%")
	if st := srv.status(t); st["volume"] != "50" {
		t.Fatalf("after music_volume 50, mpd: %v", st)
	}
	a.ok(t, "music_volume", `{"percent":"-10"}`, "volume set to 40%")
	if st := srv.status(t); st["volume"] != "40" {
		t.Fatalf("after music_volume -10, mpd: %v", st)
	}
	a.ok(t, "music_queue", `{"query":"Other Band"}`, "queued 1 track")
	if st := srv.status(t); st["playlistlength"] != "4" || st["state"] != "play" || st["Title"] != "Song One" {
		t.Fatalf("after music_queue, mpd: %v", st)
	}
	a.failed(t, "music_play", `{"query":"by Nobody At All"}`, `nothing in the music library matches "by Nobody At All"`)
	a.ok(t, "music_status", `{}`, "playing Song One by The Testers (First)", "volume 40%", "4 in the queue")

	// A file added to the folder is found by the next search (the index follows the folder).
	extra := filepath.Join(lib, "Late", "Arrival.flac")
	if err := os.MkdirAll(filepath.Dir(extra), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sox", "-n", "-r", "8000", "-c", "1", "--comment", "TITLE=Arrival", "--comment", "ARTIST=Latecomer", extra, "trim", "0", "61").CombinedOutput(); err != nil {
		t.Fatalf("sox: %v %s", err, out)
	}
	time.Sleep(rescanAfter)
	a.ok(t, "music_search", `{"query":"latecomer"}`, "1 track match", "Arrival — Latecomer")
	t.Logf("%d turns through the kernel and mpd in %s", 16, time.Since(start).Round(time.Millisecond))
}

// TestMusicWithMPRIS: with no mpd, the controls act on the MPRIS player on the session bus,
// followed as it appears and leaves: none at first (a clear message), then a player written
// here plays a library track by its file URI, pauses, skips and changes its volume; once it
// leaves, the message is back.
func TestMusicWithMPRIS(t *testing.T) {
	built := hosttest.Build(t)
	lib := makeLibrary(t)
	bus := privateBus(t)
	t.Setenv("MPD_HOST", "127.0.0.1")
	t.Setenv("MPD_PORT", closedPort(t))
	t.Setenv("XDG_MUSIC_DIR", lib)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", bus)
	t.Setenv("HOME", t.TempDir())
	a := startAgent(t, built)

	noPlayer := []string{"no music player: mpd is not answering at 127.0.0.1:", "set MPD_HOST / MPD_PORT", "no MPRIS player is on the session bus"}
	a.failed(t, "music_pause", `{}`, noPlayer...)
	a.failed(t, "music_play", `{"query":"noise"}`, noPlayer...)

	p := startPlayer(t, bus, "fake")
	a.k.WaitLog(t, "music", `"msg":"MPRIS player appeared"`, mprisPrefix+"fake")
	a.ok(t, "music_status", `{}`, "MPRIS player Fake Player (fake): stopped, volume 50%", "mpd at 127.0.0.1:")
	a.ok(t, "music_play", `{"query":"noise by other band"}`, "MPRIS player Fake Player (fake): playing 1 track", "now playing 01%20Noise.flac by opened")
	uri := "file://" + (&url.URL{Path: filepath.Join(lib, "Other Band", "Loud", "01 Noise.flac")}).EscapedPath()
	a.ok(t, "music_pause", `{}`, "paused")
	a.ok(t, "music_next", `{}`, "skipped")
	a.ok(t, "music_volume", `{"percent":"+10"}`, "volume set to 60%")
	a.failed(t, "music_queue", `{"query":"testers"}`, "cannot queue tracks: it has no MPRIS track list")
	want := []string{"OpenUri " + uri, "Pause", "Next", "Volume 0.60"}
	if got := p.got(); !slices.Equal(got, want) {
		t.Fatalf("the player got %q, want %q", got, want)
	}

	p.conn.Close()
	a.k.WaitLog(t, "music", `"msg":"MPRIS player left"`)
	a.failed(t, "music_next", `{}`, noPlayer...)
}
