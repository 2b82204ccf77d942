package kernel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/plugins/host"
)

// systemPluginsDir is where the packages install the built-in plugins.
const systemPluginsDir = "/usr/lib/hologram/plugins"

// builtinPrefix keys the owner's choice for a built-in plugin ("enabled" or "disabled"), set by
// enabling or disabling it through the API, in the settings.
const builtinPrefix = "builtin/"

// modulePath is the module whose checkout's bin/plugins (written by `make build`) holds
// built-in plugins.
const modulePath = "github.com/hologramagent/hologram"

// Environment the kernel gives every built-in plugin, so that it keeps its data in the
// kernel's data directory and reads its own configuration file from the kernel's
// configuration directory (<dir>/plugins/<name>.toml).
const (
	EnvPluginDataDir   = "HOLOGRAM_DATA_DIR"
	EnvPluginConfigDir = "HOLOGRAM_CONFIG_DIR"
)

// builtinPlace is one directory that may hold the built-in plugins.
type builtinPlace struct{ label, dir string }

// builtinPlaces returns where the built-in plugins are looked for, in order: explicit (the
// only place when set); else /usr/lib/hologram/plugins, <exe dir>/plugins,
// <exe dir>/../lib/hologram/plugins and bin/plugins of the source checkout holding the
// executable. The working directory is not searched, so a test binary or a tool run inside a
// checkout never starts whatever `make build` left there.
func builtinPlaces(explicit, exe string) []builtinPlace {
	if explicit != "" {
		return []builtinPlace{{"configured (builtin.dir / HOLOGRAM_PLUGINS_DIR)", explicit}}
	}
	places := []builtinPlace{{"system", systemPluginsDir}}
	if exe != "" {
		dir := filepath.Dir(exe)
		places = append(places, builtinPlace{"next to the executable", filepath.Join(dir, "plugins")},
			builtinPlace{"next to the executable", filepath.Join(dir, "..", "lib", "hologram", "plugins")})
		if root := moduleRoot(dir); root != "" {
			places = append(places, builtinPlace{"source checkout (make build)", filepath.Join(root, "bin", "plugins")})
		}
	}
	return places
}

// moduleRoot returns the first directory upward from dir whose go.mod declares [modulePath].
func moduleRoot(dir string) string {
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && declaresModule(data) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func declaresModule(gomod []byte) bool {
	for line := range bytes.Lines(gomod) {
		f := strings.Fields(string(line))
		if len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == modulePath {
			return true
		}
	}
	return false
}

// builtinIn returns the built-in plugins dir holds (<dir>/<name>/plugin.json), in
// [config.BuiltinPlugins] order.
func builtinIn(dir string) []string {
	var found []string
	for _, b := range config.BuiltinPlugins {
		if fi, err := os.Stat(filepath.Join(dir, b.Name, "plugin.json")); err == nil && fi.Mode().IsRegular() {
			found = append(found, b.Name)
		}
	}
	return found
}

// findBuiltin returns the first of places holding at least one built-in plugin, and those
// plugins. Without one it returns "" and what each place lacked.
func findBuiltin(places []builtinPlace) (dir string, names []string, tried []string) {
	for _, p := range places {
		p.dir = filepath.Clean(p.dir)
		fi, err := os.Stat(p.dir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			tried = append(tried, fmt.Sprintf("%s %s: does not exist", p.label, p.dir))
			continue
		case err != nil:
			tried = append(tried, fmt.Sprintf("%s %s: %v", p.label, p.dir, err))
			continue
		case !fi.IsDir():
			tried = append(tried, fmt.Sprintf("%s %s: not a directory", p.label, p.dir))
			continue
		}
		if names := builtinIn(p.dir); len(names) > 0 {
			return p.dir, names, tried
		}
		tried = append(tried, fmt.Sprintf("%s %s: holds no built-in plugin (<name>/plugin.json)", p.label, p.dir))
	}
	return "", nil, tried
}

// builtinSpecs finds the built-in plugins and returns their specs: each with the kernel's data
// and configuration directories in its environment, disabled unless it starts by default or
// is enabled (the config file's [builtin] first, then the owner's choice through the API).
// Plugins of the same name from the config file or the API (shadowed) win and are skipped. An
// explicit directory that holds no built-in plugin is an error; otherwise finding none is
// logged.
func (p *plugins) builtinSpecs(ctx context.Context, shadowed map[string]bool) ([]host.Spec, error) {
	k := p.k
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	dir, names, tried := findBuiltin(builtinPlaces(k.cfg.Builtin.Dir, exe))
	if dir == "" {
		if k.cfg.Builtin.Dir != "" {
			return nil, fmt.Errorf("built-in plugins: %s", strings.Join(tried, "; "))
		}
		k.log.Info("no built-in plugins found", "tried", strings.Join(tried, "; "))
		return nil, nil
	}
	env := []string{EnvPluginDataDir + "=" + k.cfg.DataDir}
	if cf := k.cfg.ConfigFile; filepath.IsAbs(cf) {
		env = append(env, EnvPluginConfigDir+"="+filepath.Dir(cf))
	}
	if k.cfg.Listen != "" {
		// The web plugin refuses the kernel's own API even when its range is allow-listed.
		env = append(env, "HOLOGRAM_LISTEN="+k.cfg.Listen)
	}
	owner, err := k.store.ListSettings(ctx, builtinPrefix)
	if err != nil {
		return nil, fmt.Errorf("loading the built-in plugins' settings: %w", err)
	}
	var specs []host.Spec
	for _, b := range config.BuiltinPlugins {
		if !slices.Contains(names, b.Name) {
			continue
		}
		if shadowed[b.Name] {
			k.log.Info("built-in plugin shadowed by a configured plugin of the same name", "plugin", b.Name)
			continue
		}
		on := b.Default || (b.Detect != nil && b.Detect(os.Getenv))
		benv := append(slices.Clone(env), k.cfg.Builtin.Env[b.Name]...)
		if b.Name == "a2a" && len(k.cfg.A2A.Peers) > 0 { // the agents to call ([[a2a.peers]]): on unless disabled
			on = true
			peers, _ := json.Marshal(k.cfg.A2A.Peers)
			benv = append(benv, "HOLOGRAM_A2A_PEERS="+string(peers))
		}
		switch owner[builtinPrefix+b.Name] {
		case "enabled":
			on = true
		case "disabled":
			on = false
		}
		if slices.Contains(k.cfg.Builtin.Enable, b.Name) {
			on = true
		}
		if slices.Contains(k.cfg.Builtin.Disable, b.Name) {
			on = false
		}
		specs = append(specs, host.Spec{Name: b.Name, Kind: host.KindNative, Dir: filepath.Join(dir, b.Name),
			Env: benv, Disabled: !on})
	}
	p.builtinMu.Lock()
	for _, s := range specs {
		p.builtin[s.Name] = true
	}
	p.builtinMu.Unlock()
	k.log.Info("built-in plugins found", "dir", dir, "plugins", strings.Join(names, ","))
	return specs, nil
}

// isBuiltin reports whether the plugin of that name is a built-in one.
func (p *plugins) isBuiltin(name string) bool {
	p.builtinMu.Lock()
	defer p.builtinMu.Unlock()
	return p.builtin[name]
}

// rememberBuiltin records the owner's enabling or disabling of a built-in plugin so that it
// survives a restart (the config file's [builtin] lists still win).
func (k *Kernel) rememberBuiltin(ctx context.Context, name string, disabled bool) {
	v := "enabled"
	if disabled {
		v = "disabled"
	}
	if err := k.store.SetSetting(ctx, builtinPrefix+name, v); err != nil {
		k.log.Warn("built-in plugin state not saved", "plugin", name, "err", err)
	}
}
