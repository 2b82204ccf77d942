// Package config loads the kernel's configuration from defaults, an optional
// TOML file, HOLOGRAM_* environment variables and command-line flags, in
// increasing order of precedence, and validates the result.
//
// Paths follow the XDG base directory specification (see [Default]). The
// package imports only the standard library and github.com/BurntSushi/toml,
// so clients such as waiter may use it without linking the kernel. The API
// is internal to the project and may change between releases.
package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Config is the kernel's configuration. Field tags give the TOML keys.
type Config struct {
	// DataDir holds everything the kernel stores.
	DataDir string `toml:"data_dir"`
	// Socket is the local API unix socket.
	Socket string `toml:"socket"`
	// Listen is the optional remote API address (host:port); empty disables it.
	Listen string `toml:"listen"`
	// TokenFile holds the bearer token for the remote API.
	TokenFile string `toml:"token_file"`
	// TLSCert and TLSKey are the remote API's certificate and key; when both
	// are empty the kernel generates a self-signed pair.
	TLSCert string `toml:"tls_cert"`
	TLSKey  string `toml:"tls_key"`
	// KeyFile holds the master keys that seal secrets at rest.
	KeyFile string `toml:"key_file"`
	// ConfigFile is the TOML file that was (or would have been) read.
	ConfigFile string `toml:"-"`
	// LogLevel is one of debug, info, warn, error.
	LogLevel string `toml:"log_level"`
	// Insecure allows plain HTTP off loopback.
	Insecure bool `toml:"insecure"`
	// ResetSecrets lets the kernel start without the key file that sealed the stored secrets:
	// those secrets (provider API keys) are dropped and a new key is made. Flag only.
	ResetSecrets bool `toml:"-"`
	// Version records --version; the caller prints the version and exits.
	Version bool `toml:"-"`

	Agent  AgentConfig  `toml:"agent"`
	API    APIConfig    `toml:"api"`
	Memory MemoryConfig `toml:"memory"`
	// Plugins are the plugins the kernel starts ([[plugins]] tables); the API cannot remove them.
	Plugins []PluginConfig `toml:"plugins"`
	// Builtin configures the plugins that ship with HologramAgent ([builtin]).
	Builtin BuiltinConfig `toml:"builtin"`
	// Embedding locates dense models and ONNX Runtime ([embedding], embedding.go).
	Embedding EmbeddingConfig `toml:"embedding"`
	// A2A serves the agent to other agents and lists those it may call ([a2a], a2a.go).
	A2A A2AConfig `toml:"a2a"`
}

// BuiltinConfig is the [builtin] table. The kernel finds the built-in plugins in Dir, or, when
// Dir is empty, in /usr/lib/hologram/plugins, next to its executable (<exe dir>/plugins,
// <exe dir>/../lib/hologram/plugins) or in the bin/plugins folder of a source checkout holding
// the executable. It starts those of [BuiltinPlugins] marked Default unless disabled; the
// others are listed and start once enabled, here or by the owner (waiter plugin enable NAME).
type BuiltinConfig struct {
	// Dir is the directory holding one directory per built-in plugin (HOLOGRAM_PLUGINS_DIR); it
	// is then the only place looked at.
	Dir string `toml:"dir"`
	// Disable lists built-in plugins not to start; Enable those to start that do not by default
	// (shell, qq).
	Disable []string `toml:"disable"`
	Enable  []string `toml:"enable"`
	// Env is extra environment per built-in plugin, KEY=VALUE, e.g. {qq = ["QQ_WS=ws://…"]}.
	Env map[string][]string `toml:"env"`
}

// BuiltinPlugin is a plugin that ships with HologramAgent.
type BuiltinPlugin struct {
	Name string
	// Default plugins start unless disabled; the others need the owner's configuration first
	// (shell an allow-list, qq a bridge address) and start once enabled.
	Default bool
	// Detect, when set, makes the plugin start by default when it reports true for the
	// kernel's environment: music when it has a player to control ([MusicBackend]).
	Detect func(getenv func(string) string) bool
}

// BuiltinPlugins are the built-in plugins the kernel knows, in start order.
var BuiltinPlugins = []BuiltinPlugin{
	{Name: "files", Default: true}, {Name: "notes", Default: true}, {Name: "calendar", Default: true},
	{Name: "rss", Default: true}, {Name: "web", Default: true}, {Name: "code", Default: true}, {Name: "shell"}, {Name: "qq"},
	{Name: "a2a"}, // starts when [[a2a.peers]] lists an agent to call
	{Name: "music", Detect: MusicBackend},
}

// builtinNames returns the names of [BuiltinPlugins], comma-separated.
func builtinNames() string {
	names := make([]string, len(BuiltinPlugins))
	for i, b := range BuiltinPlugins {
		names[i] = b.Name
	}
	return strings.Join(names, ", ")
}

// isBuiltin reports whether name is one of [BuiltinPlugins].
func isBuiltin(name string) bool {
	for _, b := range BuiltinPlugins {
		if b.Name == name {
			return true
		}
	}
	return false
}

// PluginConfig is one [[plugins]] table: exactly one of Command (an MCP stdio server's argv) and
// Dir (a native plugin directory holding plugin.json).
type PluginConfig struct {
	// Name names the plugin (letters, digits and . _ -, at most 64).
	Name string `toml:"name"`
	// Command is the MCP server's command line, e.g. ["npx", "-y", "@modelcontextprotocol/server-everything"].
	Command []string `toml:"command"`
	// Dir is a native plugin's directory; ~/ and relative paths are made absolute.
	Dir string `toml:"dir"`
	// Env is extra environment for the plugin, KEY=VALUE.
	Env []string `toml:"env"`
	// Disabled keeps the plugin listed but not running.
	Disabled bool `toml:"disabled"`
	// Visibility is who may call an MCP server's tools: "owner" (the default) or "any".
	Visibility string `toml:"visibility"`
}

// MemoryConfig shapes the memory (ARCHITECTURE.md §4).
type MemoryConfig struct {
	// WindowTokens is the token budget of a session's L1 context window (default 8000).
	WindowTokens int `toml:"window_tokens"`
	// Recent is how many recent events are pinned in the window at most (default 12); fewer
	// when events are long (budget / mean tokens per event).
	Recent int `toml:"recent"`
	// JiebaDir and WordNetDir locate the Chinese dictionaries and the English lexicon; empty
	// searches the usual places (HOLOGRAM_JIEBA_DIR / HOLOGRAM_WORDNET_DIR, /usr/lib/hologram…).
	JiebaDir   string `toml:"jieba_dir"`
	WordNetDir string `toml:"wordnet_dir"`
	// DistillAccesses and DistillIdle select the cold events L3 distillation reads: at most
	// this many recalls (default 2) and untouched for this long (default 72h).
	DistillAccesses int      `toml:"distill_accesses"`
	DistillIdle     Duration `toml:"distill_idle"`
	// GCInterval is how often the memory GC (cooling, distillation, scene decay) runs in the
	// background (default 1h; 0 runs it only on demand: waiter memory gc).
	GCInterval Duration `toml:"gc_interval"`
	// BackupKeep is how many daily copies of the database (VACUUM INTO, DATA/backups, 0600)
	// are kept (default 7; 0 or less: no daily backups).
	BackupKeep int `toml:"backup_keep"`
	// Extractor chooses distillation's extractor: "auto" (the LLM when a provider is set,
	// falling back to the rules), "llm" or "rules" (LLM-free). Default "auto".
	Extractor string `toml:"extractor"`
	// Recall overrides recall's retrieval parameters by name (`[memory.recall]`, e.g.
	// `date_boost = 1.5`); memory/cold's Params documents each name and its default, and
	// kernel.New fails on an unknown one.
	Recall map[string]float64 `toml:"recall"`
}

// Memory defaults.
const (
	DefaultWindowTokens    = 8000
	DefaultRecent          = 12
	DefaultDistillAccesses = 2
	DefaultDistillIdle     = 72 * time.Hour
	DefaultGCInterval      = time.Hour
	DefaultBackupKeep      = 7
)

// AgentConfig limits the agent's turn loop.
type AgentConfig struct {
	// MaxRounds is the maximum number of LLM rounds per turn (default 25).
	MaxRounds int `toml:"max_rounds"`
	// MaxWall is the maximum wall time of a turn (default 10m).
	MaxWall Duration `toml:"max_wall"`
	// ToolTimeout bounds one tool call (default 60s).
	ToolTimeout Duration `toml:"tool_timeout"`
	// TokenBudget bounds the tokens one turn may use; 0 is unlimited.
	TokenBudget int `toml:"token_budget"`
	// HistoryLimit is the number of recent events kept per session (default 200).
	HistoryLimit int `toml:"history_limit"`
	// ApprovalTimeout is how long a plugin's request for the owner's approval waits for an
	// answer before it counts as denied (0: DefaultApprovalTimeout, 2m). A request made by a
	// tool call also ends with that call's tool_timeout.
	ApprovalTimeout Duration `toml:"approval_timeout"`
	// MaxResultBytes bounds a tool result as the model sees it (0: 64 KiB): a longer one is
	// stored whole as a block, the model gets its head and tail and pages it with result_read.
	MaxResultBytes int `toml:"max_result_bytes"`
	// MaxTools bounds the tools one LLM request offers (0: 64; at most 127, tool_search being
	// the 128th): the most relevant to the turn are sent, tool_search finds the others.
	MaxTools int `toml:"max_tools"`
}

// APIConfig configures the HTTP API.
type APIConfig struct {
	// MaxBodyBytes limits request bodies (default 4 MiB).
	MaxBodyBytes int64 `toml:"max_body_bytes"`
	// MaxUploadBytes limits a file streamed ahead of a chat message (POST /api/v1/uploads: a
	// video); 0 means 1 GiB.
	MaxUploadBytes int64 `toml:"max_upload_bytes"`
	// AllowedOrigins lists browser origins (scheme://host[:port]) whose
	// requests are accepted; by default every request with an Origin is refused.
	AllowedOrigins []string `toml:"allowed_origins"`
}

// Duration is a time.Duration written in TOML as text such as "90s" or "10m".
type Duration struct {
	time.Duration
}

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil {
		return fmt.Errorf("invalid duration %q (want e.g. \"90s\" or \"10m\")", text)
	}
	d.Duration = v
	return nil
}

// MarshalText formats the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(d.Duration.String()), nil
}

// Defaults for the limits.
const (
	DefaultMaxRounds    = 25
	DefaultMaxWall      = 10 * time.Minute
	DefaultToolTimeout  = 60 * time.Second
	DefaultHistoryLimit = 200
	// DefaultApprovalTimeout applies when agent.approval_timeout is 0.
	DefaultApprovalTimeout = 2 * time.Minute
	// MaxApprovalTimeout bounds agent.approval_timeout.
	MaxApprovalTimeout  = time.Hour
	DefaultMaxBodyBytes = 4 << 20
	DefaultLogLevel     = "info"
)

// xdgDir returns $<xdgVar>/hologram when that variable is an absolute path
// (the XDG spec says to ignore relative ones), else $HOME/<fallback>/hologram.
func xdgDir(env func(string) string, xdgVar, fallback string) string {
	if v := env(xdgVar); filepath.IsAbs(v) {
		return filepath.Join(v, "hologram")
	}
	return filepath.Join(env("HOME"), fallback, "hologram")
}

// DefaultSocket returns the default local API socket:
// $XDG_RUNTIME_DIR/hologram/homed.sock, or /tmp/hologram-<uid>/homed.sock
// when XDG_RUNTIME_DIR is unset.
func DefaultSocket(env func(string) string) string {
	if v := env("XDG_RUNTIME_DIR"); filepath.IsAbs(v) {
		return filepath.Join(v, "hologram", "homed.sock")
	}
	return filepath.Join("/tmp", "hologram-"+strconv.Itoa(os.Getuid()), "homed.sock")
}

// Default returns the default configuration for the environment env (use
// os.Getenv in production). Data lives in $XDG_DATA_HOME/hologram (fallback
// $HOME/.local/share/hologram); the key, token and config files live in
// $XDG_CONFIG_HOME/hologram (fallback $HOME/.config/hologram).
func Default(env func(string) string) Config {
	confDir := xdgDir(env, "XDG_CONFIG_HOME", ".config")
	return Config{
		DataDir:    xdgDir(env, "XDG_DATA_HOME", filepath.Join(".local", "share")),
		Socket:     DefaultSocket(env),
		TokenFile:  filepath.Join(confDir, "token"),
		KeyFile:    filepath.Join(confDir, "key"),
		ConfigFile: filepath.Join(confDir, "config.toml"),
		LogLevel:   DefaultLogLevel,
		Agent: AgentConfig{
			MaxRounds:    DefaultMaxRounds,
			MaxWall:      Duration{DefaultMaxWall},
			ToolTimeout:  Duration{DefaultToolTimeout},
			HistoryLimit: DefaultHistoryLimit,
		},
		API: APIConfig{MaxBodyBytes: DefaultMaxBodyBytes},
		Memory: MemoryConfig{WindowTokens: DefaultWindowTokens, Recent: DefaultRecent, DistillAccesses: DefaultDistillAccesses,
			DistillIdle: Duration{DefaultDistillIdle}, GCInterval: Duration{DefaultGCInterval}, Extractor: "auto", BackupKeep: DefaultBackupKeep},
	}
}

// AddFlags defines the configuration flags on fs, bound to c's fields and
// showing c's current values as defaults.
func AddFlags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.DataDir, "data", c.DataDir, "data `directory`")
	fs.StringVar(&c.Socket, "socket", c.Socket, "local API unix socket `path`")
	fs.StringVar(&c.Listen, "listen", c.Listen, "serve the remote API on `host:port` (token and TLS required off loopback)")
	fs.StringVar(&c.TokenFile, "token-file", c.TokenFile, "remote API bearer token `file`")
	fs.StringVar(&c.TLSCert, "tls-cert", c.TLSCert, "TLS certificate `file` for the remote API (with --tls-key)")
	fs.StringVar(&c.TLSKey, "tls-key", c.TLSKey, "TLS key `file` for the remote API (with --tls-cert)")
	fs.StringVar(&c.KeyFile, "key-file", c.KeyFile, "master key `file` sealing secrets at rest")
	fs.BoolVar(&c.Insecure, "insecure", c.Insecure, "allow plain HTTP off loopback")
	fs.BoolVar(&c.ResetSecrets, "reset-secrets", c.ResetSecrets, "start without the lost key file: drop the secrets it sealed (provider API keys) and make a new key")
	fs.StringVar(&c.ConfigFile, "config", c.ConfigFile, "TOML config `file`")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log `level`: debug, info, warn or error")
	fs.BoolVar(&c.Version, "version", c.Version, "print the version and exit")
}

// flagFields copies one flag's field from src to dst, by flag name.
var flagFields = map[string]func(dst, src *Config){
	"data":          func(d, s *Config) { d.DataDir = s.DataDir },
	"socket":        func(d, s *Config) { d.Socket = s.Socket },
	"listen":        func(d, s *Config) { d.Listen = s.Listen },
	"token-file":    func(d, s *Config) { d.TokenFile = s.TokenFile },
	"tls-cert":      func(d, s *Config) { d.TLSCert = s.TLSCert },
	"tls-key":       func(d, s *Config) { d.TLSKey = s.TLSKey },
	"key-file":      func(d, s *Config) { d.KeyFile = s.KeyFile },
	"insecure":      func(d, s *Config) { d.Insecure = s.Insecure },
	"reset-secrets": func(d, s *Config) { d.ResetSecrets = s.ResetSecrets },
	"config":        func(d, s *Config) { d.ConfigFile = s.ConfigFile },
	"log-level":     func(d, s *Config) { d.LogLevel = s.LogLevel },
	"version":       func(d, s *Config) { d.Version = s.Version },
}

// envFields maps environment variables to the fields they set.
var envFields = []struct {
	name string
	set  func(c *Config, v string)
}{
	{"HOLOGRAM_DATA", func(c *Config, v string) { c.DataDir = v }},
	{"HOLOGRAM_SOCKET", func(c *Config, v string) { c.Socket = v }},
	{"HOLOGRAM_LISTEN", func(c *Config, v string) { c.Listen = v }},
	{"HOLOGRAM_CONFIG", func(c *Config, v string) { c.ConfigFile = v }},
	{"HOLOGRAM_LOG_LEVEL", func(c *Config, v string) { c.LogLevel = v }},
	{"HOLOGRAM_TOKEN_FILE", func(c *Config, v string) { c.TokenFile = v }},
	{"HOLOGRAM_PLUGINS_DIR", func(c *Config, v string) { c.Builtin.Dir = v }},
}

// Load builds the configuration for the program name from args (without the
// program name) and env (use os.Getenv in production). Precedence is flags,
// then environment, then the config file, then [Default]. It returns the
// configuration, the arguments left after the flags (e.g. a subcommand), and
// an error.
//
// The config file is optional at its default path; one named by --config or
// HOLOGRAM_CONFIG must exist. Unknown TOML keys are errors. Relative paths
// are made absolute and ~/ is expanded with $HOME before [Config.Validate]
// runs. -h/--help returns an error wrapping [flag.ErrHelp] with the usage
// text; with --version the config file and validation are skipped.
func Load(name string, args []string, env func(string) string) (Config, []string, error) {
	def := Default(env)

	// Flags are parsed first (they can name the config file) into their own
	// copy and applied last, so only flags actually given take precedence.
	var out bytes.Buffer
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(&out)
	fromFlags := def
	AddFlags(fs, &fromFlags)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s [flags] [command [args]]\n\nFlags:\n", name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, nil, fmt.Errorf("%w\n%s", flag.ErrHelp, out.String())
		}
		return Config{}, nil, fmt.Errorf("%s: %w\n%s", name, err, out.String())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	cfg := def
	applyEnv := func(c *Config) {
		for _, e := range envFields {
			if v := env(e.name); v != "" {
				e.set(c, v)
			}
		}
	}
	applyFlags := func(c *Config) {
		for n := range set {
			flagFields[n](c, &fromFlags)
		}
	}

	if !fromFlags.Version {
		// Find the config file: flag, then env, then the default path.
		path, explicit := def.ConfigFile, false
		if v := env("HOLOGRAM_CONFIG"); v != "" {
			path, explicit = v, true
		}
		if set["config"] {
			path, explicit = fromFlags.ConfigFile, true
		}
		path = absPath(path, env)
		if err := decodeFile(&cfg, path, explicit); err != nil {
			return Config{}, nil, err
		}
		cfg.ConfigFile = path
	}
	applyEnv(&cfg)
	applyFlags(&cfg)
	if cfg.Version {
		return cfg, fs.Args(), nil
	}

	cfg.LogLevel = strings.ToLower(strings.TrimSpace(cfg.LogLevel))
	for i := range cfg.Plugins {
		cfg.Plugins[i].Dir = absPath(cfg.Plugins[i].Dir, env)
	}
	for i := range cfg.A2A.Peers {
		cfg.A2A.Peers[i].TokenFile = absPath(cfg.A2A.Peers[i].TokenFile, env)
	}
	for _, p := range []*string{&cfg.DataDir, &cfg.Socket, &cfg.TokenFile, &cfg.TLSCert, &cfg.TLSKey, &cfg.KeyFile, &cfg.ConfigFile, &cfg.Builtin.Dir,
		&cfg.Embedding.ONNXRuntime, &cfg.Embedding.ModelsDir} {
		*p = absPath(*p, env)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, nil, err
	}
	return cfg, fs.Args(), nil
}

// decodeFile reads the TOML file at path over c. A missing file is an error
// only when explicit.
func decodeFile(c *Config, path string, explicit bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !explicit {
			return nil
		}
		return fmt.Errorf("config file: %w", err)
	}
	md, err := toml.Decode(string(data), c)
	if err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = strconv.Quote(k.String())
		}
		return fmt.Errorf("config file %s: unknown key %s", path, strings.Join(keys, ", "))
	}
	return nil
}

// absPath expands a leading ~/ with $HOME and makes a relative path absolute
// against the working directory. Empty stays empty.
func absPath(p string, env func(string) string) string {
	if p == "" {
		return ""
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home := env("HOME"); home != "" {
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

var pluginNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug,
	"info":  slog.LevelInfo,
	"warn":  slog.LevelWarn,
	"error": slog.LevelError,
}

// SlogLevel returns the slog level for c.LogLevel (info when unknown).
func (c *Config) SlogLevel() slog.Level {
	if l, ok := logLevels[strings.ToLower(c.LogLevel)]; ok {
		return l
	}
	return slog.LevelInfo
}
