package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
	"github.com/hologramagent/hologram/plugins/sdk"
)

// writeTrack writes a FLAC file with tags under root.
func writeTrack(t *testing.T, root, rel string, comments ...string) {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, flacFile(comments...), 0o644); err != nil {
		t.Fatal(err)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestLibrary: the folder is indexed by its tags (the path where a file has none), searched by
// words and by "… by Artist", kept in library.json, and rescanned: a new file is added, a
// changed one re-read, a removed one dropped, an unchanged one not read again.
func TestLibrary(t *testing.T) {
	root, data := t.TempDir(), t.TempDir()
	writeTrack(t, root, "testers/first/01.flac", "TITLE=Song One", "ARTIST=The Testers", "ALBUM=First", "TRACKNUMBER=1")
	writeTrack(t, root, "testers/first/02.flac", "TITLE=Song Two", "ARTIST=The Testers", "ALBUM=First", "TRACKNUMBER=2")
	writeTrack(t, root, "other/Other Band/Loud/05 - Noise.flac")
	if err := os.WriteFile(filepath.Join(root, "cover.jpg"), []byte("jpeg"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	l, err := openLibrary(discard(), root, data, clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.refresh(ctx, false); err != nil || l.size() != 3 {
		t.Fatalf("refresh: %v, %d tracks", err, l.size())
	}
	paths := func(ts []track) string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Path)
		}
		return strings.Join(out, " ")
	}
	for q, want := range map[string]string{
		"testers":                       "testers/first/01.flac testers/first/02.flac",
		"something by the testers":      "testers/first/01.flac testers/first/02.flac",
		"two by testers":                "testers/first/02.flac",
		"noise":                         "other/Other Band/Loud/05 - Noise.flac",
		"by Other Band":                 "other/Other Band/Loud/05 - Noise.flac",
		"Songs by Nobody":               "",
		"song one":                      "testers/first/01.flac",
		"":                              "",
		"stand by me (no artist named)": "",
	} {
		if got := paths(l.search(q)); got != want {
			t.Errorf("search %q = %q, want %q", q, got, want)
		}
	}
	if got := l.search("noise")[0]; got.Title != "Noise" || got.Artist != "Other Band" || got.Album != "Loud" || got.Track != 5 ||
		got.abs != filepath.Join(root, "other/Other Band/Loud/05 - Noise.flac") {
		t.Fatalf("a file without tags: %+v", got)
	}

	// Within rescanAfter nothing is scanned; after it the changes are found.
	writeTrack(t, root, "new.flac", "TITLE=Fresh", "ARTIST=Newcomer")
	if err := os.Remove(filepath.Join(root, "testers/first/02.flac")); err != nil {
		t.Fatal(err)
	}
	writeTrack(t, root, "testers/first/01.flac", "TITLE=Song One (remastered)", "ARTIST=The Testers", "ALBUM=First")
	later := time.Now().Add(time.Hour) // a modification time the old entry cannot have
	os.Chtimes(filepath.Join(root, "testers/first/01.flac"), later, later)
	if _ = l.refresh(ctx, false); l.size() != 3 || len(l.search("fresh")) != 0 {
		t.Fatal("rescanned within rescanAfter")
	}
	now = now.Add(rescanAfter)
	if err := l.refresh(ctx, false); err != nil || l.size() != 3 || len(l.search("fresh")) != 1 || len(l.search("two")) != 0 ||
		len(l.search("remastered")) != 1 {
		t.Fatalf("after the rescan: %v, %d tracks", err, l.size())
	}

	// The index is kept: a new library over the same folder trusts it for unchanged files (a
	// file rewritten with its size and time kept is not read again).
	path := filepath.Join(root, "new.flac")
	fi, _ := os.Stat(path)
	raw := flacFile("TITLE=Fresh", "ARTIST=Newcomer")
	copy(raw[len(raw)-len("Newcomer")-64:], "Oldtimer")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	again, err := openLibrary(discard(), root, data, clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := again.refresh(ctx, false); err != nil || again.size() != 3 || len(again.search("by newcomer")) != 1 {
		t.Fatalf("reopened: %v, %d tracks, %+v", err, again.size(), again.search("fresh"))
	}
	// Another folder's index is not used.
	other, _ := openLibrary(discard(), t.TempDir(), data, clock)
	if err := other.refresh(ctx, false); err != nil || other.size() != 0 {
		t.Fatalf("another folder: %v, %d tracks", err, other.size())
	}
	// A missing folder says what to set.
	gone, _ := openLibrary(discard(), filepath.Join(root, "missing"), t.TempDir(), clock)
	if err := gone.refresh(ctx, false); err == nil || !strings.Contains(err.Error(), "does not exist (set XDG_MUSIC_DIR") {
		t.Fatalf("a missing folder: %v", err)
	}
}

func TestMPDAddress(t *testing.T) {
	for _, tc := range []struct {
		host, port                   string
		network, addr, password, str string
	}{
		{"", "", "tcp", "localhost:6600", "", "localhost:6600"},
		{"music.lan", "6601", "tcp", "music.lan:6601", "", "music.lan:6601"},
		{"s3cret@127.0.0.1", "", "tcp", "127.0.0.1:6600", "s3cret", "127.0.0.1:6600"},
		{"p@ss@::1", "7000", "tcp", "[::1]:7000", "p@ss", "[::1]:7000"},
		{"/run/mpd/socket", "", "unix", "/run/mpd/socket", "", "/run/mpd/socket"},
		{"pw@/run/mpd/socket", "", "unix", "/run/mpd/socket", "pw", "/run/mpd/socket"},
		{"@mpd", "", "unix", "\x00mpd", "", "@mpd"},
	} {
		a := mpdAddress(plugintest.Env(map[string]string{"MPD_HOST": tc.host, "MPD_PORT": tc.port}))
		if a.network != tc.network || a.addr != tc.addr || a.password != tc.password || a.String() != tc.str {
			t.Errorf("MPD_HOST=%q MPD_PORT=%q: %+v (%s)", tc.host, tc.port, a, a)
		}
	}
}

func TestVolumeTarget(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		current int
		want    int
		err     string
	}{
		{"50", 20, 50, ""}, {"50%", -1, 50, ""}, {"+10", 45, 55, ""}, {"-10", 5, 0, ""}, {"+30", 90, 100, ""},
		{"0", 10, 0, ""}, {"101", 10, 0, "0 to 100"}, {"loud", 10, 0, "give 0 to 100"}, {"", 10, 0, "give 0 to 100"},
		{"+10", -1, 0, "does not report its volume"},
	} {
		got, err := volumeTarget(tc.spec, tc.current)
		if plugintest.WantErr(t, err, tc.err) {
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("volumeTarget(%q, %d) = %d, %v; want %d", tc.spec, tc.current, got, err, tc.want)
		}
	}
}

// TestNoPlayer: with no mpd and no session bus every control says what it looked for.
func TestNoPlayer(t *testing.T) {
	ln := closedPort(t)
	lib, _ := openLibrary(discard(), t.TempDir(), t.TempDir(), time.Now)
	m := &music{log: discard(), lib: lib, mpd: &mpd{addr: mpdAddress(plugintest.Env(map[string]string{"MPD_HOST": "127.0.0.1", "MPD_PORT": ln}))}, busErr: errNoBus}
	p := m.plugin()
	plugintest.CheckManifest(t, p)
	for _, tool := range p.Tools {
		if tool.Name == "music_search" || tool.Name == "music_status" {
			continue
		}
		args := `{}`
		switch tool.Name {
		case "music_volume":
			args = `{"percent":"+10"}`
		case "music_queue", "music_play":
			args = `{"query":"x"}`
		}
		_, err := tool.Run(context.Background(), nil, []byte(args))
		if err == nil || !strings.Contains(err.Error(), "no music player: mpd is not answering at 127.0.0.1:"+ln) ||
			!strings.Contains(err.Error(), "set MPD_HOST / MPD_PORT") || !strings.Contains(err.Error(), errNoBus.Error()) {
			t.Errorf("%s: %v", tool.Name, err)
		}
	}
	res, err := p.Tools[0].Run(context.Background(), nil, []byte(`{}`))
	if err != nil || !strings.Contains(res.Content[0].Text, "no music player") || !strings.Contains(res.Content[0].Text, "library: ") {
		t.Fatalf("music_status: %+v %v", res, err)
	}
	var r sdk.Result
	if r, err = p.Tools[6].Run(context.Background(), nil, []byte(`{"query":"x"}`)); err != nil || !strings.Contains(r.Content[0].Text, "nothing in the music library (0 tracks)") {
		t.Fatalf("music_search: %+v %v", r, err)
	}
	if !errors.Is(m.busErr, errNoBus) {
		t.Fatal(m.busErr)
	}
}
