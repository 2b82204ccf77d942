package protocol

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUserDir: the variable wins, then user-dirs.dirs ($HOME/… or absolute), then the fallback
// under HOME; nothing absolute is "".
func TestUserDir(t *testing.T) {
	home := t.TempDir()
	conf := filepath.Join(home, ".config")
	if err := os.MkdirAll(conf, 0o700); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "user-dirs.dirs"), []byte("# written by xdg-user-dirs-update\nXDG_MUSIC_DIR=\"/srv/music\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "user-dirs.dirs"), []byte("XDG_DESKTOP_DIR=\"$HOME/Desktop\"\nXDG_MUSIC_DIR=\"$HOME/Musik\"\nXDG_VIDEOS_DIR=\"relative\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		dir  string
		want string
	}{
		{"variable", map[string]string{"XDG_MUSIC_DIR": "/data/music/", "HOME": home}, "MUSIC", "/data/music"},
		{"relative variable ignored", map[string]string{"XDG_MUSIC_DIR": "music", "HOME": home}, "MUSIC", filepath.Join(home, "Musik")},
		{"user-dirs.dirs under HOME", map[string]string{"HOME": home}, "MUSIC", filepath.Join(home, "Musik")},
		{"XDG_CONFIG_HOME's user-dirs.dirs", map[string]string{"HOME": home, "XDG_CONFIG_HOME": other}, "MUSIC", "/srv/music"},
		{"relative value: fallback", map[string]string{"HOME": home}, "VIDEOS", filepath.Join(home, "Music")},
		{"no line: fallback", map[string]string{"HOME": home}, "PICTURES", filepath.Join(home, "Music")},
		{"nothing absolute", map[string]string{}, "MUSIC", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UserDir(func(k string) string { return tc.env[k] }, tc.dir, "Music"); got != tc.want {
				t.Fatalf("UserDir(%s) = %q, want %q", tc.dir, got, tc.want)
			}
		})
	}
}
