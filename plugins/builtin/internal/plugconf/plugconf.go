// Package plugconf finds where a built-in plugin keeps its data and its configuration, and reads
// its configuration file.
//
// Plugins configured by a file (files, notes, shell) take the data and configuration
// directories the kernel passes them ([EnvDataDir], [EnvConfigDir]), else the XDG ones, and
// read <config dir>/plugins/<name>.toml ([Load]). Plugins configured through their environment
// (calendar, rss) keep their state in a directory of their own ([StateDir]). Paths the owner
// writes may start with ~/ ([ExpandHome]).
//
// The package imports only the standard library and the TOML decoder: it is linked into the
// plugins' binaries. Every function reads the environment through a getenv (os.Getenv in the
// plugin), so tests give their own.
package plugconf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// Environment the kernel passes to built-in plugins (kernel.EnvPluginDataDir and
// kernel.EnvPluginConfigDir); without them the XDG directories are used.
const (
	EnvDataDir   = "HOLOGRAM_DATA_DIR"
	EnvConfigDir = "HOLOGRAM_CONFIG_DIR"
)

// xdg returns $<v>/hologram when $<v> is absolute, else $HOME/<fallback>/hologram (relative
// when HOME is not absolute: the callers check).
func xdg(getenv func(string) string, v, fallback string) string {
	if d := getenv(v); filepath.IsAbs(d) {
		return filepath.Join(d, "hologram")
	}
	return filepath.Join(getenv("HOME"), fallback, "hologram")
}

// dataHome is xdg for XDG_DATA_HOME.
func dataHome(getenv func(string) string) string {
	return xdg(getenv, "XDG_DATA_HOME", filepath.Join(".local", "share"))
}

// File is a plugin's configuration file as [Load] found it.
type File struct {
	// Data is the data directory: $HOLOGRAM_DATA_DIR, else $XDG_DATA_HOME/hologram.
	Data string
	// Path is the configuration file, <config dir>/plugins/<name>.toml, where the config dir is
	// $HOLOGRAM_CONFIG_DIR, else $XDG_CONFIG_HOME/hologram.
	Path string
	// Found reports whether Path exists; a missing file is no error (the defaults apply).
	Found bool
}

// Load finds the data and configuration directories and decodes the plugin's configuration
// file, <config dir>/plugins/<name>.toml, into v when it exists. keys lists the keys the file
// may hold ("roots, read_only"): a key v has no field for is an error that names them.
func Load(getenv func(string) string, name string, v any, keys string) (File, error) {
	data, conf := getenv(EnvDataDir), getenv(EnvConfigDir)
	if data == "" {
		data = dataHome(getenv)
	}
	if conf == "" {
		conf = xdg(getenv, "XDG_CONFIG_HOME", ".config")
	}
	if !filepath.IsAbs(data) || !filepath.IsAbs(conf) {
		return File{}, fmt.Errorf("cannot tell the data and config directories (data %q, config %q): set %s and %s, or HOME",
			data, conf, EnvDataDir, EnvConfigDir)
	}
	f := File{Data: data, Path: filepath.Join(conf, "plugins", name+".toml")}
	raw, err := os.ReadFile(f.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil
	case err != nil:
		return File{}, fmt.Errorf("config %s: %w", f.Path, err)
	}
	md, err := toml.Decode(string(raw), v)
	if err != nil {
		return File{}, fmt.Errorf("config %s: %w", f.Path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return File{}, fmt.Errorf("config %s: unknown key %q (%s)", f.Path, und[0].String(), keys)
	}
	f.Found = true
	return f, nil
}

// StateDir returns where a plugin configured through its environment keeps its state:
// $<override> when set (it must be an absolute path), else <the kernel's data dir>/<name> when
// the kernel passed it ($HOLOGRAM_DATA_DIR: a system service's /var/lib/hologram, say), else
// $XDG_DATA_HOME/hologram/<name> ($HOME/.local/share when XDG_DATA_HOME is unset or relative, as
// the XDG specification says).
func StateDir(getenv func(string) string, override, name string) (string, error) {
	switch dir := getenv(override); {
	case dir != "" && !filepath.IsAbs(dir):
		return "", fmt.Errorf("%s=%q must be an absolute path", override, dir)
	case dir != "":
		return filepath.Clean(dir), nil
	}
	switch data := getenv(EnvDataDir); {
	case data != "" && !filepath.IsAbs(data):
		return "", fmt.Errorf("%s=%q must be an absolute path", EnvDataDir, data)
	case data != "":
		return filepath.Join(data, name), nil
	}
	data := dataHome(getenv)
	if !filepath.IsAbs(data) {
		return "", errors.New("neither XDG_DATA_HOME nor HOME is an absolute path: set " + override)
	}
	return filepath.Join(data, name), nil
}

// ExpandHome returns path with a leading ~ or ~/ replaced by home, and refuses a path that is
// then not absolute. what names the path in errors ("root", "dir").
func ExpandHome(what, path, home string) (string, error) {
	if path == "~" || strings.HasPrefix(path, "~/") {
		if home == "" {
			return "", fmt.Errorf("%s %q: HOME is not set", what, path)
		}
		path = filepath.Join(home, path[1:])
	}
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%s %q must be an absolute path (or start with ~/)", what, path)
	}
	return path, nil
}
