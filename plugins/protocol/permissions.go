package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// EnvPermissions is the variable the host passes a native plugin its manifest's permissions
// in, expanded ([Permissions.Expand]) and encoded as JSON; a built-in plugin confines itself
// to them (plus what its own configuration adds).
const EnvPermissions = "HOLOGRAM_PERMISSIONS"

// Path accesses a manifest may declare.
const (
	AccessRead  = "read"  // read files and list directories
	AccessWrite = "write" // read, create, change and remove below the path
	AccessExec  = "exec"  // read and run the programs below the path
)

// Variables a manifest path may start with; the host expands them ([Permissions.Expand]).
const (
	VarDataDir   = "HOLOGRAM_DATA_DIR"   // the kernel's data directory
	VarConfigDir = "HOLOGRAM_CONFIG_DIR" // the kernel's configuration directory
	VarPluginDir = "PLUGIN_DIR"          // the plugin's own directory (plugin.json's)
	VarHome      = "HOME"                // the owner's home; "~/" is the same
	VarMusicDir  = "XDG_MUSIC_DIR"       // the owner's music folder ([UserDir] "MUSIC", else ~/Music)
)

// PathPermission is one path a plugin declares: Path starts with "/", "~/" or "${VAR}" of
// the variables above.
type PathPermission struct {
	Path   string `json:"path"`
	Access string `json:"access"`
}

// Permissions are plugin.json's "permissions": what the plugin needs. Paths, Env and
// Network are machine-readable (the host shows them and built-in plugins confine themselves to
// them); Notes are free text for what a manifest cannot say statically ("the roots of
// files.toml"). The older descriptive form — paths and network as lists of sentences — still
// parses: its sentences become Notes, and a non-empty network list means Network.
type Permissions struct {
	Paths []PathPermission `json:"paths,omitempty"`
	Env   []string         `json:"env,omitempty"` // environment variables it reads
	// EnvOnly asks the host to pass the plugin only the variables Env lists (when the kernel's
	// environment has them), besides those the kernel sets for it (its data and configuration
	// directories, [EnvPermissions], the owner's [builtin.env]); without it the plugin inherits
	// the kernel's whole environment.
	EnvOnly bool     `json:"env_only,omitempty"`
	Network bool     `json:"network"`         // it connects out (or listens)
	Exec    bool     `json:"exec,omitempty"`  // it runs other programs
	Notes   []string `json:"notes,omitempty"` // what else it needs, in words
}

var (
	envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	varRE     = regexp.MustCompile(`^\$\{([A-Z_]+)\}(/.*)?$`)
)

// maxPermissionEntries bounds each list of a manifest's permissions.
const maxPermissionEntries = 256

// UnmarshalJSON parses both forms and checks every entry (a clear error names the bad one).
func (p *Permissions) UnmarshalJSON(b []byte) error {
	var raw struct {
		Paths   []json.RawMessage `json:"paths"`
		Env     []string          `json:"env"`
		EnvOnly bool              `json:"env_only"`
		Network json.RawMessage   `json:"network"`
		Exec    bool              `json:"exec"`
		Notes   []string          `json:"notes"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("permissions: %w (keys: paths, env, env_only, network, exec, notes)", err)
	}
	if len(raw.Paths) > maxPermissionEntries || len(raw.Env) > maxPermissionEntries || len(raw.Notes) > maxPermissionEntries {
		return fmt.Errorf("permissions: more than %d entries in a list", maxPermissionEntries)
	}
	out := Permissions{Exec: raw.Exec, Notes: raw.Notes, EnvOnly: raw.EnvOnly}
	for i, r := range raw.Paths {
		var text string
		if json.Unmarshal(r, &text) == nil { // the older form: a sentence
			out.Notes = append(out.Notes, text)
			continue
		}
		var pp PathPermission
		d := json.NewDecoder(bytes.NewReader(r))
		d.DisallowUnknownFields()
		if err := d.Decode(&pp); err != nil {
			return fmt.Errorf("permissions: paths[%d]: %w (an object with path and access)", i, err)
		}
		if err := pp.check(); err != nil {
			return fmt.Errorf("permissions: paths[%d]: %w", i, err)
		}
		out.Paths = append(out.Paths, pp)
	}
	for i, e := range raw.Env {
		if !envNameRE.MatchString(e) {
			return fmt.Errorf("permissions: env[%d] %q is not a variable name", i, e)
		}
	}
	out.Env = raw.Env
	switch n := bytes.TrimSpace(raw.Network); {
	case len(n) == 0 || string(n) == "null":
	case string(n) == "true" || string(n) == "false":
		out.Network = string(n) == "true"
	default:
		var texts []string
		if err := json.Unmarshal(n, &texts); err != nil {
			return errors.New("permissions: network must be true or false")
		}
		out.Network = len(texts) > 0
		out.Notes = append(out.Notes, texts...)
	}
	*p = out
	return nil
}

// check validates one path entry.
func (pp PathPermission) check() error {
	switch pp.Access {
	case AccessRead, AccessWrite, AccessExec:
	default:
		return fmt.Errorf("access %q must be %q, %q or %q", pp.Access, AccessRead, AccessWrite, AccessExec)
	}
	p := pp.Path
	switch {
	case strings.HasPrefix(p, "~/") || p == "~":
	case strings.HasPrefix(p, "$"):
		m := varRE.FindStringSubmatch(p)
		if m == nil {
			return fmt.Errorf("path %q: write a variable as ${NAME}, followed by nothing or /…", p)
		}
		if !slices.Contains([]string{VarDataDir, VarConfigDir, VarPluginDir, VarHome, VarMusicDir}, m[1]) {
			return fmt.Errorf("path %q: unknown variable %s (%s, %s, %s, %s or %s)", p, m[1], VarDataDir, VarConfigDir, VarPluginDir, VarHome, VarMusicDir)
		}
	case filepath.IsAbs(p):
	default:
		return fmt.Errorf("path %q must start with /, ~/ or ${VARIABLE}", p)
	}
	if slices.Contains(strings.Split(p, "/"), "..") {
		return fmt.Errorf("path %q must not climb with ..", p)
	}
	if p == "/" || p == "~" || p == "${"+VarHome+"}" {
		return fmt.Errorf("path %q is everything: name the directories the plugin needs", p)
	}
	return nil
}

// Expand returns p with every path's variable replaced through vars (a variable it does not
// know, "", is an error) and the result cleaned.
func (p Permissions) Expand(vars func(string) string) (Permissions, error) {
	out := p
	out.Paths = make([]PathPermission, 0, len(p.Paths))
	for _, pp := range p.Paths {
		path := pp.Path
		if path == "~" || strings.HasPrefix(path, "~/") {
			path = "${" + VarHome + "}" + path[1:]
		}
		if m := varRE.FindStringSubmatch(path); m != nil {
			v := vars(m[1])
			if !filepath.IsAbs(v) {
				return Permissions{}, fmt.Errorf("permissions: %s: %s is not known here (%q)", pp.Path, m[1], v)
			}
			path = v + m[2]
		}
		out.Paths = append(out.Paths, PathPermission{Path: filepath.Clean(path), Access: pp.Access})
	}
	return out, nil
}
