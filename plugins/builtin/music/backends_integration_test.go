//go:build integration

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/prop"
)

// need fails the test (HOLOGRAM_CI=1) or skips it when a program is missing.
func need(t *testing.T, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("HOLOGRAM_CI") == "1" {
				t.Fatalf("%s is missing (.ci/deps.sh installs it)", p)
			}
			t.Skipf("%s is missing (.ci/deps.sh installs it)", p)
		}
	}
}

// song is one file of the generated library.
type song struct{ path, title, artist, album string }

// testSongs is the generated library: two artists, 61 s each.
var testSongs = []song{
	{"The Testers/First/01 Song One.flac", "Song One", "The Testers", "First"},
	{"The Testers/First/02 Song Two.flac", "Song Two", "The Testers", "First"},
	{"The Testers/First/03 Song Three.flac", "Song Three", "The Testers", "First"},
	{"Other Band/Loud/01 Noise.flac", "Noise", "Other Band", "Loud"},
}

// makeLibrary writes testSongs with sox (FLAC, 8 kHz mono: small files) into a new folder.
func makeLibrary(t *testing.T) string {
	t.Helper()
	need(t, "sox")
	root := t.TempDir()
	for i, s := range testSongs {
		path := filepath.Join(root, s.path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sox", "-n", "-r", "8000", "-c", "1", "-b", "16",
			"--comment", "TITLE="+s.title, "--comment", "ARTIST="+s.artist, "--comment", "ALBUM="+s.album,
			"--comment", "TRACKNUMBER="+strconv.Itoa(i%3+1), path, "synth", "61", "sine", strconv.Itoa(220+110*i), "gain", "-30")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sox: %v\n%s", err, out)
		}
	}
	return root
}

// mpdServer is a real mpd on a local TCP port, with a null audio output (software mixer:
// the volume works) and the library as its music_directory.
type mpdServer struct {
	addr mpdAddr
	port string
}

// startMPD starts mpd over lib, with a password when password is set, and waits until its
// database holds every song.
func startMPD(t *testing.T, lib, password string) *mpdServer {
	t.Helper()
	need(t, "mpd")
	dir := t.TempDir()
	port := closedPort(t)
	conf := fmt.Sprintf(`music_directory %q
db_file %q
state_file %q
bind_to_address "127.0.0.1"
port %q
audio_output {
	type "null"
	name "null"
	mixer_type "software"
}
`, lib, filepath.Join(dir, "db"), filepath.Join(dir, "state"), port)
	if password != "" {
		conf += fmt.Sprintf("password %q\n", password+"@read,add,control,admin")
	}
	if err := os.WriteFile(filepath.Join(dir, "mpd.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("mpd", "--no-daemon", "--stderr", filepath.Join(dir, "mpd.conf"))
	var log syncBuf
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	host := "127.0.0.1"
	if password != "" {
		host = password + "@" + host
	}
	s := &mpdServer{addr: mpdAddress(func(k string) string { return map[string]string{"MPD_HOST": host, "MPD_PORT": port}[k] }), port: port}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if st, err := s.try("stats"); err == nil && get(st, "songs") == strconv.Itoa(len(testSongs)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mpd did not index the library in 30 s; its log:\n%s", log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

// try runs one command on a new connection.
func (s *mpdServer) try(cmd string, args ...string) ([]pair, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := dialMPD(ctx, s.addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.run(ctx, cmd, args...)
}

// status returns mpd's status and current song, as one map.
func (s *mpdServer) status(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, cmd := range []string{"status", "currentsong"} {
		ps, err := s.try(cmd)
		if err != nil {
			t.Fatalf("mpd %s: %v", cmd, err)
		}
		for _, p := range ps {
			out[p.k] = p.v
		}
	}
	return out
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

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

// fakePlayer is an MPRIS player on a session bus: it records the calls it gets and plays
// what it is told to.
type fakePlayer struct {
	conn  *dbus.Conn
	props *prop.Properties
	mu    sync.Mutex
	calls []string
}

// startPlayer connects to the bus at addr and takes org.mpris.MediaPlayer2.<name>.
func startPlayer(t *testing.T, addr, name string) *fakePlayer {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	p := &fakePlayer{conn: conn}
	if err := conn.ExportMethodTable(map[string]any{
		"Play":      func() *dbus.Error { p.record("Play"); p.set("PlaybackStatus", "Playing"); return nil },
		"Pause":     func() *dbus.Error { p.record("Pause"); p.set("PlaybackStatus", "Paused"); return nil },
		"PlayPause": func() *dbus.Error { p.record("PlayPause"); return nil },
		"Stop":      func() *dbus.Error { p.record("Stop"); p.set("PlaybackStatus", "Stopped"); return nil },
		"Next":      func() *dbus.Error { p.record("Next"); return nil },
		"Previous":  func() *dbus.Error { p.record("Previous"); return nil },
		"OpenUri": func(uri string) *dbus.Error {
			p.record("OpenUri " + uri)
			p.set("Metadata", map[string]dbus.Variant{"xesam:title": dbus.MakeVariant(filepath.Base(uri)), "xesam:artist": dbus.MakeVariant([]string{"opened"}),
				"mpris:length": dbus.MakeVariant(int64(61_000_000))})
			p.set("PlaybackStatus", "Playing")
			return nil
		},
	}, mprisPath, mprisPlayer); err != nil {
		t.Fatal(err)
	}
	p.props, err = prop.Export(conn, mprisPath, prop.Map{
		mprisRoot: {
			"Identity":     {Value: "Fake Player", Emit: prop.EmitTrue},
			"HasTrackList": {Value: false, Emit: prop.EmitTrue},
		},
		mprisPlayer: {
			"PlaybackStatus": {Value: "Stopped", Emit: prop.EmitTrue},
			"Volume": {Value: 0.5, Writable: true, Emit: prop.EmitTrue, Callback: func(c *prop.Change) *dbus.Error {
				p.record(fmt.Sprintf("Volume %.2f", c.Value.(float64)))
				return nil
			}},
			"Position": {Value: int64(3_000_000), Emit: prop.EmitFalse},
			"Metadata": {Value: map[string]dbus.Variant{}, Emit: prop.EmitTrue},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName(mprisPrefix+name, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("RequestName: %v %v", reply, err)
	}
	return p
}

func (p *fakePlayer) record(c string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, c)
}

func (p *fakePlayer) set(name string, v any) {
	p.props.SetMust(mprisPlayer, name, v)
}

// got returns the calls so far.
func (p *fakePlayer) got() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls)
}

// TestMPDEnqueue: a library track at a path mpd does not know is found in mpd's database by
// its title and artist; a query the library does not hold is searched there; an unknown song
// (its title quoted) is skipped.
func TestMPDEnqueue(t *testing.T) {
	lib := makeLibrary(t)
	srv := startMPD(t, lib, "")
	ctx := context.Background()
	b := &mpd{addr: srv.addr}
	n, err := b.enqueue(ctx, []track{{Path: "elsewhere/one.flac", Title: "Song One", Artist: "The Testers"},
		{Path: "elsewhere/gone.flac", Title: "Never \"Recorded\"", Artist: "Nobody"}}, true, true)
	if st := srv.status(t); err != nil || n != 1 || st["state"] != "play" || st["file"] != testSongs[0].path {
		t.Fatalf("enqueue: %d, %v; mpd %v", n, err, st)
	}
	n, err = b.searchAdd(ctx, "noise", false, false)
	if st := srv.status(t); err != nil || n != 1 || st["playlistlength"] != "2" || st["file"] != testSongs[0].path {
		t.Fatalf("searchAdd: %d, %v; mpd %v", n, err, st)
	}
	if n, err := b.searchAdd(ctx, "no such thing", false, false); err != nil || n != 0 {
		t.Fatalf("searchAdd of nothing: %d, %v", n, err)
	}
	if err := b.setVolume(ctx, 30); err != nil {
		t.Fatal(err)
	}
	st, err := b.status(ctx)
	if err != nil || st.State != statePlaying || st.Title != "Song One" || st.Volume != 30 || st.Queue != 2 || st.Length < 60 {
		t.Fatalf("status %+v, %v", st, err)
	}
}

func TestMPDQuote(t *testing.T) {
	for in, want := range map[string]string{`plain`: `"plain"`, `say "hi"`: `"say \"hi\""`, `back\slash`: `"back\\slash"`, ``: `""`} {
		if got := mpdQuote(in); got != want {
			t.Errorf("mpdQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
