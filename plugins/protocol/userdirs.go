package protocol

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// UserDir returns the owner's XDG user directory of that name ("MUSIC", "DOWNLOAD"), as
// xdg-user-dir finds it: $XDG_<NAME>_DIR when it is absolute, else the XDG_<NAME>_DIR line of
// $XDG_CONFIG_HOME/user-dirs.dirs (~/.config/user-dirs.dirs; "$HOME/…" or an absolute path),
// else $HOME/<fallback>. It returns "" when none of these is absolute (no HOME). The host
// expands ${XDG_MUSIC_DIR} in a manifest's paths with it, and the music plugin finds its
// library with it, so both name the same folder.
func UserDir(getenv func(string) string, name, fallback string) string {
	key := "XDG_" + name + "_DIR"
	if d := getenv(key); filepath.IsAbs(d) {
		return filepath.Clean(d)
	}
	home := getenv("HOME")
	conf := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(conf) && filepath.IsAbs(home) {
		conf = filepath.Join(home, ".config")
	}
	if filepath.IsAbs(conf) {
		if d := userDirsLine(filepath.Join(conf, "user-dirs.dirs"), key, home); d != "" {
			return d
		}
	}
	if !filepath.IsAbs(home) {
		return ""
	}
	return filepath.Join(home, fallback)
}

// userDirsLine returns the value of key in the user-dirs.dirs file at path (shell syntax:
// KEY="$HOME/Music" or KEY="/abs/path"), or "" when the file, the key or an absolute value is
// missing.
func userDirsLine(path, key, home string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || k != key {
			continue
		}
		v = strings.Trim(v, `"`)
		if rest, ok := strings.CutPrefix(v, "$HOME"); ok {
			if !filepath.IsAbs(home) || (rest != "" && rest[0] != '/') {
				return ""
			}
			v = home + rest
		}
		if filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
		return ""
	}
	return ""
}
