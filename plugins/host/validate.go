package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// ErrInvalid is wrapped by every error that rejects a [Spec] or a native plugin's manifest.
var ErrInvalid = errors.New("invalid plugin")

// nameRE is what a plugin name (and a manifest name) may be.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// maxManifest bounds plugin.json.
const maxManifest = 1 << 20

// validName reports whether s is a valid plugin name: [A-Za-z0-9._-]{1,64}, not "." or "..".
func validName(s string) bool {
	return nameRE.MatchString(s) && s != "." && s != ".."
}

// prepared is a validated Spec with what starting it needs.
type prepared struct {
	spec     Spec
	manifest *Manifest   // native only
	perms    Permissions // the manifest's, expanded (native only)
	argv     []string    // what to execute
	dir      string      // working directory ("" inherits)
}

// prepare validates spec and, for a native plugin, reads and checks its manifest. The returned
// spec has Kind filled in and Dir made absolute.
func prepare(spec Spec) (*prepared, error) {
	if !validName(spec.Name) {
		return nil, fmt.Errorf("%w: name %q must be 1 to 64 of A-Z a-z 0-9 . _ -", ErrInvalid, spec.Name)
	}
	hasCmd, hasDir := len(spec.Command) > 0, spec.Dir != ""
	if hasCmd == hasDir {
		return nil, fmt.Errorf("%w: plugin %s: exactly one of command and dir must be set", ErrInvalid, spec.Name)
	}
	switch spec.Kind {
	case "":
		spec.Kind = KindMCP
		if hasDir {
			spec.Kind = KindNative
		}
	case KindMCP:
		if !hasCmd {
			return nil, fmt.Errorf("%w: plugin %s: an mcp plugin needs a command", ErrInvalid, spec.Name)
		}
	case KindNative:
		if !hasDir {
			return nil, fmt.Errorf("%w: plugin %s: a native plugin needs a dir", ErrInvalid, spec.Name)
		}
	default:
		return nil, fmt.Errorf("%w: plugin %s: unknown kind %q (mcp or native)", ErrInvalid, spec.Name, spec.Kind)
	}
	switch spec.Visibility {
	case "":
		spec.Visibility = VisibilityOwner
	case VisibilityOwner, VisibilityAny:
	default:
		return nil, fmt.Errorf("%w: plugin %s: visibility %q must be %q or %q", ErrInvalid, spec.Name, spec.Visibility, VisibilityOwner, VisibilityAny)
	}
	if spec.Kind == KindNative && spec.Visibility == VisibilityAny {
		return nil, fmt.Errorf("%w: plugin %s: visibility is set per tool in a native plugin's plugin.json, not for the whole plugin", ErrInvalid, spec.Name)
	}
	if spec.MaxFrame < 0 {
		return nil, fmt.Errorf("%w: plugin %s: max_frame %d is negative", ErrInvalid, spec.Name, spec.MaxFrame)
	}
	for _, kv := range spec.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("%w: plugin %s: env %q is not KEY=VALUE", ErrInvalid, spec.Name, kv)
		}
	}
	spec.Command = append([]string(nil), spec.Command...)
	spec.Env = append([]string(nil), spec.Env...)
	p := &prepared{spec: spec}
	if spec.Kind == KindMCP {
		if spec.Command[0] == "" {
			return nil, fmt.Errorf("%w: plugin %s: empty command", ErrInvalid, spec.Name)
		}
		p.argv = spec.Command
		return p, nil
	}
	dir, err := filepath.Abs(spec.Dir)
	if err != nil {
		return nil, fmt.Errorf("%w: plugin %s: dir: %v", ErrInvalid, spec.Name, err)
	}
	p.spec.Dir = dir
	m, entry, err := readManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: plugin %s: %v", ErrInvalid, spec.Name, err)
	}
	p.manifest = m
	if p.perms, err = m.Permissions.Expand(permissionVars(p.spec)); err != nil {
		return nil, fmt.Errorf("%w: plugin %s: manifest: %v", ErrInvalid, spec.Name, err)
	}
	p.argv = []string{entry}
	p.dir = dir
	return p, nil
}

// readManifest reads dir/plugin.json and resolves its entry, which must be an executable
// regular file inside dir once symbolic links are resolved.
func readManifest(dir string) (*Manifest, string, error) {
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, "", fmt.Errorf("dir: %w", err)
	}
	f, err := os.Open(filepath.Join(realDir, "plugin.json"))
	if err != nil {
		return nil, "", fmt.Errorf("manifest: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return nil, "", fmt.Errorf("manifest: %w", err)
	}
	if len(b) > maxManifest {
		return nil, "", fmt.Errorf("manifest: plugin.json is larger than %d bytes", maxManifest)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, "", fmt.Errorf("manifest: plugin.json: %w", err)
	}
	if !validName(m.Name) {
		return nil, "", fmt.Errorf("manifest: name %q must be 1 to 64 of A-Z a-z 0-9 . _ -", m.Name)
	}
	if m.Entry == "" {
		return nil, "", errors.New("manifest: entry is missing")
	}
	for name, d := range m.Tools {
		if !validVisibility(d.Visibility) {
			return nil, "", fmt.Errorf("manifest: tools.%s.visibility %q must be %q or %q", name, d.Visibility, VisibilityOwner, VisibilityAny)
		}
	}
	if !filepath.IsLocal(m.Entry) {
		return nil, "", fmt.Errorf("manifest: entry %q must be a relative path inside the plugin directory", m.Entry)
	}
	entry, err := filepath.EvalSymlinks(filepath.Join(realDir, m.Entry))
	if err != nil {
		return nil, "", fmt.Errorf("manifest: entry: %w", err)
	}
	if rel, err := filepath.Rel(realDir, entry); err != nil || !filepath.IsLocal(rel) {
		return nil, "", fmt.Errorf("manifest: entry %q resolves outside the plugin directory", m.Entry)
	}
	fi, err := os.Stat(entry)
	if err != nil {
		return nil, "", fmt.Errorf("manifest: entry: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return nil, "", fmt.Errorf("manifest: entry %q is not an executable file", m.Entry)
	}
	return &m, entry, nil
}

// permissionVars are the values of the variables a manifest's paths use: the kernel's data and
// configuration directories as the spec passes them (else the XDG ones, as the plugins find
// them), the plugin's directory and the owner's home.
func permissionVars(spec Spec) func(string) string {
	env := map[string]string{}
	for _, kv := range spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	get := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	xdg := func(v, fallback string) string {
		if d := get(v); filepath.IsAbs(d) {
			return filepath.Join(d, "hologram")
		}
		if h := get("HOME"); filepath.IsAbs(h) {
			return filepath.Join(h, fallback, "hologram")
		}
		return ""
	}
	return func(name string) string {
		switch name {
		case protocol.VarPluginDir:
			return spec.Dir
		case protocol.VarHome:
			return get("HOME")
		case protocol.VarMusicDir:
			return protocol.UserDir(get, "MUSIC", "Music")
		case protocol.VarDataDir:
			if d := get(name); d != "" {
				return d
			}
			return xdg("XDG_DATA_HOME", filepath.Join(".local", "share"))
		case protocol.VarConfigDir:
			if d := get(name); d != "" {
				return d
			}
			return xdg("XDG_CONFIG_HOME", ".config")
		}
		return ""
	}
}

// declaredEnv returns the entries of environ (KEY=VALUE) whose key is one of names: what a
// manifest with env_only lets its plugin inherit of the kernel's environment.
func declaredEnv(environ, names []string) []string {
	var out []string
	for _, kv := range environ {
		if k, _, ok := strings.Cut(kv, "="); ok && slices.Contains(names, k) {
			out = append(out, kv)
		}
	}
	return out
}
