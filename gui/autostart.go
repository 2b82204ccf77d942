package gui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// autostartFile is the name of the XDG autostart entry (XDG Autostart Specification 0.5).
const autostartFile = "hologram.desktop"

// autostartPath returns $XDG_CONFIG_HOME/autostart/hologram.desktop, with XDG_CONFIG_HOME
// defaulting to $HOME/.config as the XDG Base Directory Specification says (a relative value
// is ignored, as the specification requires).
func autostartPath(getenv func(string) string) (string, error) {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home := getenv("HOME")
		if home == "" || !filepath.IsAbs(home) {
			return "", errors.New("autostart: neither XDG_CONFIG_HOME nor HOME is an absolute path")
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "autostart", autostartFile), nil
}

// autostartEnabled reports whether the autostart entry exists.
func autostartEnabled(getenv func(string) string) (bool, error) {
	p, err := autostartPath(getenv)
	if err != nil {
		return false, err
	}
	_, err = os.Stat(p)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("autostart: %w", err)
}

// setAutostart writes the autostart entry starting executable at login (on), or removes it.
// The entry is written to a temporary file and renamed into place.
func setAutostart(getenv func(string) string, executable string, on bool) error {
	p, err := autostartPath(getenv)
	if err != nil {
		return err
	}
	if !on {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("autostart: remove entry: %w", err)
		}
		return nil
	}
	if !filepath.IsAbs(executable) {
		return fmt.Errorf("autostart: the program path %q is not absolute", executable)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".hologram-*.desktop")
	if err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if _, err := tmp.WriteString(autostartEntry(executable)); err != nil {
		tmp.Close()
		return fmt.Errorf("autostart: write entry: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("autostart: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("autostart: write entry: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	return nil
}

// autostartEntry is the desktop entry that starts executable at login (only keys of the
// Desktop Entry Specification 1.0, plus GNOME's autostart switch).
func autostartEntry(executable string) string {
	return "[Desktop Entry]\n" +
		"Type=Application\n" +
		"Version=1.0\n" +
		"Name=HologramAgent\n" +
		"Comment=Your personal AI agent\n" +
		"Exec=" + desktopExecArg(executable) + "\n" +
		"Icon=hologram\n" +
		"Terminal=false\n" +
		"Categories=Utility;\n" +
		"X-GNOME-Autostart-enabled=true\n"
}

// desktopExecArg quotes one argument of an Exec key: an argument with a reserved character is
// put in double quotes with " ` $ \ escaped by a backslash; '%' is doubled (field codes); then
// the value is escaped as a desktop entry string, which doubles every backslash.
func desktopExecArg(arg string) string {
	s := strings.ReplaceAll(arg, "%", "%%")
	if strings.ContainsAny(s, " \t\n\"'\\><~|&;$*?#()`") {
		s = `"` + strings.NewReplacer(`"`, `\"`, "`", "\\`", `$`, `\$`, `\`, `\\`).Replace(s) + `"`
	}
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`, "\r", `\r`).Replace(s)
}
