package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/plugins/host"
	"github.com/hologramagent/hologram/plugins/protocol"
)

// Plugins added through the API are stored as settings "plugin/<name>" holding a
// client.PluginConfig as JSON; plugins of the config file ([[plugins]]) are not stored and cannot
// be removed through the API.
const pluginPrefix = "plugin/"

var pluginNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// pluginHost is what the kernel needs of the plugin supervisor (*host.Host implements it).
type pluginHost interface {
	Add(ctx context.Context, s host.Spec) (host.Status, error)
	Remove(ctx context.Context, name string) (host.Status, error)
	Enable(ctx context.Context, name string) (host.Status, error)
	Disable(ctx context.Context, name string) (host.Status, error)
	Restart(ctx context.Context, name string) (host.Status, error)
	List() []host.Status
	Get(name string) (host.Status, error)
	Logs(name string, n int) ([]host.LogLine, error)
	Close(ctx context.Context) error
	// SetPaused tells the native plugins that the kernel paused or resumed.
	SetPaused(paused bool)
	// SendChannel delivers a reply on a native plugin's channel.
	SendChannel(ctx context.Context, plugin string, m protocol.ChannelSendParams) (protocol.ChannelSendResult, error)
}

// plugins is the kernel's side of the plugin host: the supervisor, the tool registry it attaches
// tools to, and which plugins come from the config file.
type plugins struct {
	k      *Kernel
	host   pluginHost
	config map[string]config.PluginConfig // by name; fixed after New

	mu        sync.Mutex // serialises AddPlugin and remove (held across host calls)
	regMu     sync.Mutex // serialises AddTool's name choice (the host calls AddTool, maybe under mu)
	cancel    context.CancelFunc
	starter   atomic.Pointer[host.Starter] // the background adds, built-ins first, in parallel
	bg        sync.WaitGroup               // the pause forwarder and channel turns
	closeOnce sync.Once
	closeErr  error

	grants    grants     // which plugin serves which turn now (plugins_native.go)
	approvals *approvals // the plugins' requests for the owner's approval (approval.go)

	builtinMu sync.Mutex
	builtin   map[string]bool // the built-in plugins added (builtin.go)

	chanMu sync.Mutex      // guards base against close
	base   context.Context // channel turns run under it; cancelled by close
}

// newPlugins builds the plugin side of k; the host is started by [plugins.start].
func newPlugins(k *Kernel, cfg []config.PluginConfig, newHost func(host.Registry, host.Publisher, host.Services) pluginHost) *plugins {
	p := &plugins{k: k, config: map[string]config.PluginConfig{}, approvals: newApprovals(k, k.cfg.Agent), builtin: map[string]bool{}}
	for _, c := range cfg {
		p.config[c.Name] = c
	}
	p.host = newHost(pluginRegistry{k: k, p: p}, pluginEvents{k}, nativeServices{k: k, p: p})
	return p
}

// start adds the configured and the stored plugins to the host in the background: the API serves
// at once and plugins come up as they handshake. Stopped by [plugins.close].
func (p *plugins) start(ctx context.Context) error {
	specs := make([]host.Spec, 0, len(p.config))
	names := make([]string, 0, len(p.config))
	for n := range p.config {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := p.config[n]
		specs = append(specs, toSpec(client.PluginConfig{Name: c.Name, Command: c.Command, Dir: c.Dir, Env: c.Env, Disabled: c.Disabled, Visibility: c.Visibility}))
	}
	raw, err := p.k.store.ListSettings(ctx, pluginPrefix)
	if err != nil {
		return fmt.Errorf("loading plugins: %w", err)
	}
	keys := make([]string, 0, len(raw))
	for key := range raw {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		var c client.PluginConfig
		if err := json.Unmarshal([]byte(raw[key]), &c); err != nil {
			p.k.log.Warn("stored plugin unreadable", "key", key, "err", err)
			continue
		}
		if _, dup := p.config[c.Name]; dup {
			p.k.log.Warn("stored plugin shadowed by the config file", "plugin", c.Name)
			continue
		}
		specs = append(specs, toSpec(c))
	}
	shadowed := map[string]bool{}
	for _, s := range specs {
		shadowed[s.Name] = true
	}
	builtin, err := p.builtinSpecs(ctx, shadowed)
	if err != nil {
		return err
	}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.chanMu.Lock()
	p.cancel, p.base = cancel, bctx
	p.chanMu.Unlock()
	p.forwardPause(bctx)
	p.starter.Store(host.Start(bctx, p.host.Add, [][]host.Spec{builtin, specs}, func(s host.Spec, err error) {
		p.k.log.Warn("plugin not added", "plugin", s.Name, "err", err)
	}))
	return nil
}

// startWait is how long a turn waits for plugins still on their first start.
const startWait = 3 * time.Second

// waitStarted waits (at most startWait) for the plugins still on their first start and returns
// those still starting then: the turn runs without their tools and says so.
func (p *plugins) waitStarted(ctx context.Context) []string {
	if st := p.starter.Load(); st != nil {
		return st.WaitStarted(ctx, startWait)
	}
	return nil
}

// close stops adding plugins and runs the host's stop ladder for each of them, once.
func (p *plugins) close(ctx context.Context) error {
	p.closeOnce.Do(func() {
		p.chanMu.Lock()
		if p.cancel != nil {
			p.cancel()
		}
		p.chanMu.Unlock()
		if st := p.starter.Load(); st != nil {
			st.Wait()
		}
		p.bg.Wait()
		p.closeErr = p.host.Close(ctx)
	})
	return p.closeErr
}

// toSpec turns a plugin's configuration into the host's spec.
func toSpec(c client.PluginConfig) host.Spec {
	s := host.Spec{Name: c.Name, Kind: host.KindMCP, Command: c.Command, Dir: c.Dir, Env: c.Env, Disabled: c.Disabled, Visibility: c.Visibility}
	if c.Dir != "" {
		s.Kind = host.KindNative
	}
	return s
}

// validatePlugin checks a plugin configuration from the API.
func validatePlugin(c client.PluginConfig) error {
	if !pluginNameRe.MatchString(c.Name) {
		return invalid("invalid plugin name %q (letters, digits and . _ -, starting with a letter or digit, at most 64)", c.Name)
	}
	switch {
	case len(c.Command) == 0 && c.Dir == "":
		return invalid("plugin %s: give a command (an MCP stdio server) or a dir (a native plugin)", c.Name)
	case len(c.Command) > 0 && c.Dir != "":
		return invalid("plugin %s: give a command or a dir, not both", c.Name)
	case len(c.Command) > 0 && strings.TrimSpace(c.Command[0]) == "":
		return invalid("plugin %s: the command's program is empty", c.Name)
	case c.Dir != "" && !filepath.IsAbs(c.Dir):
		return invalid("plugin %s: dir %q must be an absolute path", c.Name, c.Dir)
	case c.Visibility != "" && (c.Dir != "" || c.Visibility != host.VisibilityOwner && c.Visibility != host.VisibilityAny):
		return invalid("plugin %s: visibility %q: an MCP server's tools are %q (the default) or %q; a native plugin declares its own in plugin.json", c.Name, c.Visibility, host.VisibilityOwner, host.VisibilityAny)
	}
	for _, e := range c.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return invalid("plugin %s: env %q must be KEY=VALUE", c.Name, e)
		}
	}
	return nil
}

// hostErr maps the host's sentinels onto the client's.
func hostErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, host.ErrNotFound):
		return fmt.Errorf("%w: %w", client.ErrNotFound, err)
	case errors.Is(err, host.ErrExists), errors.Is(err, host.ErrInvalid):
		return fmt.Errorf("%w: %w", client.ErrInvalid, err)
	}
	return err
}

func toClientPlugin(s host.Status) client.Plugin {
	tools := s.Tools
	if tools == nil {
		tools = []string{}
	}
	return client.Plugin{
		Name: s.Name, Kind: string(s.Kind), State: s.State, PID: s.PID, Restarts: s.Restarts, LastError: s.LastError,
		Tools: tools, Command: s.Command, Dir: s.Dir,
		Permissions: client.PluginPermissionsOf(s.Permissions.Paths, s.Permissions.Env, s.Permissions.EnvOnly, s.Permissions.Network, s.Permissions.Exec, s.Permissions.Notes),
	}
}

// Plugins implements client.Service.
func (k pluginRole) Plugins(ctx context.Context) ([]client.Plugin, error) {
	st := k.plugins.host.List()
	out := make([]client.Plugin, 0, len(st))
	for _, s := range st {
		cp := toClientPlugin(s)
		cp.Builtin = k.plugins.isBuiltin(s.Name)
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// AddPlugin implements client.Service: the plugin is stored, then started unless disabled.
func (k pluginRole) AddPlugin(ctx context.Context, c client.PluginConfig) (client.Plugin, error) {
	if err := validatePlugin(c); err != nil {
		return client.Plugin{}, err
	}
	p := k.plugins
	if _, ok := p.config[c.Name]; ok {
		return client.Plugin{}, invalid("plugin %s is configured in the config file %s", c.Name, k.cfg.ConfigFile)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.host.Get(c.Name); err == nil {
		return client.Plugin{}, invalid("plugin %s already exists", c.Name)
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return client.Plugin{}, err
	}
	if c.Session != "" { // a session's own plugin (an editor's MCP server): not remembered, its tools offered there only
		k.agent.ScopeSource(c.Name, c.Session)
	} else if err := k.store.SetSetting(ctx, pluginPrefix+c.Name, string(raw)); err != nil {
		return client.Plugin{}, mapErr(err)
	}
	st, err := p.host.Add(ctx, toSpec(c))
	if err != nil {
		k.agent.ScopeSource(c.Name, "")
		if derr := k.store.DeleteSetting(context.WithoutCancel(ctx), pluginPrefix+c.Name); derr != nil && !errors.Is(derr, memory.ErrNotFound) {
			k.log.Warn("plugin setting not removed", "plugin", c.Name, "err", derr)
		}
		if e := hostErr(err); e != err {
			return client.Plugin{}, e
		}
		return client.Plugin{}, fmt.Errorf("%w: add plugin %s: %w", client.ErrInvalid, c.Name, err)
	}
	return toClientPlugin(st), nil
}

// PluginAction implements client.Service. Enabling or disabling a stored plugin is remembered;
// a plugin of the config file is enabled or disabled until the kernel restarts.
func (k pluginRole) PluginAction(ctx context.Context, name, action string) (client.Plugin, error) {
	p := k.plugins
	var (
		st  host.Status
		err error
	)
	switch action {
	case client.PluginRestart:
		st, err = p.host.Restart(ctx, name)
	case client.PluginEnable, client.PluginDisable:
		if action == client.PluginEnable {
			st, err = p.host.Enable(ctx, name)
		} else {
			st, err = p.host.Disable(ctx, name)
		}
		if err == nil {
			if p.isBuiltin(name) {
				k.rememberBuiltin(ctx, name, action == client.PluginDisable)
			} else {
				k.rememberDisabled(ctx, name, action == client.PluginDisable)
			}
		}
	case client.PluginRemove:
		if p.isBuiltin(name) {
			return client.Plugin{}, invalid("plugin %s is built in: disable it instead (waiter plugin disable %s)", name, name)
		}
		if _, ok := p.config[name]; ok {
			return client.Plugin{}, invalid("plugin %s is configured in the config file %s: remove it there", name, k.cfg.ConfigFile)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		st, err = p.host.Remove(ctx, name)
		if err == nil {
			k.agent.ScopeSource(name, "")
			if derr := k.store.DeleteSetting(ctx, pluginPrefix+name); derr != nil && !errors.Is(derr, memory.ErrNotFound) {
				return toClientPlugin(st), mapErr(derr)
			}
		}
	default:
		return client.Plugin{}, invalid("unknown plugin action %q (restart, enable, disable, remove)", action)
	}
	if err != nil {
		return client.Plugin{}, hostErr(err)
	}
	cp := toClientPlugin(st)
	cp.Builtin = p.isBuiltin(name)
	return cp, nil
}

// rememberDisabled records a stored plugin's disabled flag so it survives a restart.
func (k *Kernel) rememberDisabled(ctx context.Context, name string, disabled bool) {
	raw, err := k.store.GetSetting(ctx, pluginPrefix+name)
	if err != nil {
		return // a plugin of the config file, or removed meanwhile
	}
	var c client.PluginConfig
	if json.Unmarshal([]byte(raw), &c) != nil || c.Disabled == disabled {
		return
	}
	c.Disabled = disabled
	if b, err := json.Marshal(c); err == nil {
		if err := k.store.SetSetting(ctx, pluginPrefix+name, string(b)); err != nil {
			k.log.Warn("plugin state not saved", "plugin", name, "err", err)
		}
	}
}

// PluginLogs implements client.Service.
func (k pluginRole) PluginLogs(ctx context.Context, name string, n int) ([]client.LogLine, error) {
	lines, err := k.plugins.host.Logs(name, n)
	if err != nil {
		return nil, hostErr(err)
	}
	out := make([]client.LogLine, len(lines))
	for i, l := range lines {
		out[i] = client.LogLine{Time: l.Time, Line: l.Line}
	}
	return out, nil
}

// pluginRegistry attaches plugin tools to the agent (host.Registry).
type pluginRegistry struct {
	k *Kernel
	p *plugins
}

var toolNameBad = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// toolName makes a name the LLM APIs accept (^[A-Za-z0-9_-]{1,64}$).
func toolName(s string) string {
	s = toolNameBad.ReplaceAllString(s, "_")
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// AddTool registers a plugin's tool under its own name, or "<plugin>__<tool>" when another
// source already has that name.
func (r pluginRegistry) AddTool(plugin string, t host.ToolInfo, call host.CallFunc) (string, error) {
	if call == nil {
		return "", errors.New("add tool: nil call")
	}
	r.p.regMu.Lock()
	defer r.p.regMu.Unlock()
	name := toolName(t.Name)
	if name == "" {
		return "", fmt.Errorf("plugin %s: tool with an empty name", plugin)
	}
	for _, info := range r.k.agent.Tools() {
		if info.Spec.Name == name && info.Source != plugin {
			name = toolName(plugin + "__" + t.Name)
			break
		}
	}
	params := t.InputSchema
	if len(params) == 0 || !json.Valid(params) {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	pt := pluginTool{spec: llm.Tool{Name: name, Description: t.Description, Parameters: params}, readOnly: t.ReadOnly, call: call,
		plugin: plugin, grants: &r.p.grants, vis: agent.Visibility(t.Visibility)}
	if err := r.k.agent.AddTool(pt, plugin); err != nil {
		// A schema the agent cannot read still lets the model call the tool; the plugin checks.
		pt.spec.Parameters = json.RawMessage(`{"type":"object"}`)
		if err2 := r.k.agent.AddTool(pt, plugin); err2 != nil {
			return "", err
		}
	}
	return name, nil
}

// SetTools replaces the plugin's tools in one step (host.ToolSetter): names as AddTool gives
// them, the swap atomic in the agent.
func (r pluginRegistry) SetTools(plugin string, infos []host.ToolInfo, calls []host.CallFunc) ([]string, error) {
	r.p.regMu.Lock()
	defer r.p.regMu.Unlock()
	taken := map[string]bool{}
	for _, info := range r.k.agent.Tools() {
		if info.Source != plugin {
			taken[info.Spec.Name] = true
		}
	}
	names := make([]string, 0, len(infos))
	tools := make([]agent.Tool, 0, len(infos))
	for i, t := range infos {
		if calls[i] == nil {
			return nil, errors.New("set tools: nil call")
		}
		name := toolName(t.Name)
		if name == "" {
			return nil, fmt.Errorf("plugin %s: tool with an empty name", plugin)
		}
		if taken[name] {
			name = toolName(plugin + "__" + t.Name)
		}
		taken[name] = true
		params := t.InputSchema
		if len(params) == 0 || !json.Valid(params) || !agent.ValidSchema(params) {
			params = json.RawMessage(`{"type":"object"}`) // the plugin checks what the agent cannot read
		}
		names = append(names, name)
		tools = append(tools, pluginTool{spec: llm.Tool{Name: name, Description: t.Description, Parameters: params}, readOnly: t.ReadOnly,
			call: calls[i], plugin: plugin, grants: &r.p.grants, vis: agent.Visibility(t.Visibility)})
	}
	if err := r.k.agent.ReplaceTools(plugin, tools); err != nil {
		return nil, err
	}
	return names, nil
}

// RemoveTools detaches every tool of the plugin.
func (r pluginRegistry) RemoveTools(plugin string) int { return r.k.agent.RemoveTools(plugin) }

// pluginTool is a plugin's tool as the agent sees it.
type pluginTool struct {
	spec     llm.Tool
	readOnly bool
	call     host.CallFunc
	plugin   string
	grants   *grants // nil in tests of the tool alone
	vis      agent.Visibility
}

func (t pluginTool) Spec() llm.Tool               { return t.spec }
func (t pluginTool) ParallelSafe() bool           { return t.readOnly }
func (t pluginTool) Visibility() agent.Visibility { return t.vis } // the host's: owner unless declared

// Run calls the plugin; while it runs, the plugin may use the turn's memory scope.
func (t pluginTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	if t.grants != nil {
		if tr, ok := agent.TurnFrom(ctx); ok {
			dl, _ := ctx.Deadline()
			defer t.grants.grantUntil(tr.TurnID, t.plugin, dl)()
		}
	}
	// The result's images go with it to a vision model (and are stored with it).
	ctx = host.WithImageSink(ctx, func(mime string, data []byte) {
		agent.AddResultImages(ctx, llm.Image{MIME: mime, Data: data, Name: "image from " + t.spec.Name})
	})
	return t.call(ctx, args)
}

// pluginEvents publishes the host's lifecycle events on the kernel bus (host.Publisher).
type pluginEvents struct{ k *Kernel }

// Publish logs the event (crashes and trips at warn) and publishes it as the kernel.
func (e pluginEvents) Publish(event string, payload map[string]any) {
	attrs := make([]any, 0, 2*len(payload)+2)
	attrs = append(attrs, "event", event)
	keys := make([]string, 0, len(payload))
	for k := range payload {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		attrs = append(attrs, k, payload[k])
	}
	switch event {
	case "plugin_crashed", "plugin_tripped":
		e.k.log.Warn("plugin "+strings.TrimPrefix(event, "plugin_"), attrs...)
	default:
		e.k.log.Info("plugin "+strings.TrimPrefix(event, "plugin_"), attrs...)
	}
	e.k.publish(event, payload)
}

var (
	_ host.Registry   = pluginRegistry{}
	_ host.ToolSetter = pluginRegistry{}
	_ host.Publisher  = pluginEvents{}
	_ agent.Tool      = pluginTool{}
)
