package gui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"time"

	"fyne.io/fyne/v2/data/binding"

	"github.com/hologramagent/hologram/kernel/client"
)

// pluginLogLines is how many of a plugin's last stderr lines the logs view shows.
const pluginLogLines = 200

// pluginNameRe is the kernel's rule for plugin names.
var pluginNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// PluginsVM is the plugins view's state: the kernel's plugins, the add form and the outcome of
// the last action. Its methods block on the kernel; the view runs them off the UI goroutine. It
// is safe for concurrent use.
type PluginsVM struct {
	vmTasks
	svc client.Service

	// Plugins is the list as the kernel last reported it, by name.
	Plugins binding.Item[[]client.Plugin]
	// Status is the outcome of the last action; Failed says whether it is an error.
	Status binding.String
	Failed binding.Bool
	// Busy is true while an action runs.
	Busy binding.Bool
	// AddName, AddCommand and AddDir are the add form: a name and either an MCP server's
	// command line (shell-like quoting) or a native plugin's directory on the kernel's machine.
	AddName, AddCommand, AddDir binding.String
	// Local says the kernel runs on this machine (its folders can be picked); set before the
	// view is built.
	Local bool
}

// NewPluginsVM returns the plugins view's view-model over svc.
func NewPluginsVM(svc client.Service) *PluginsVM {
	return &PluginsVM{
		svc: svc, Plugins: newSliceBinding[client.Plugin](), Status: binding.NewString(),
		Failed: binding.NewBool(), Busy: binding.NewBool(),
		AddName: binding.NewString(), AddCommand: binding.NewString(), AddDir: binding.NewString(),
	}
}

func (vm *PluginsVM) report(msg string, failed bool) {
	_ = vm.Failed.Set(failed)
	_ = vm.Status.Set(msg)
}

// Refresh reads the plugin list from the kernel.
func (vm *PluginsVM) Refresh(ctx context.Context) error {
	list, err := vm.svc.Plugins(ctx)
	if err != nil {
		vm.report(Tf("Could not list the plugins: %v", err), true)
		return fmt.Errorf("list plugins: %w", err)
	}
	if old, _ := vm.Plugins.Get(); old != nil && reflect.DeepEqual(old, list) {
		return nil // unchanged: the cards are not rebuilt (a poll every few seconds must not flicker)
	}
	_ = vm.Plugins.Set(list)
	return nil
}

// pluginsViewPoll is how often the plugins view reads the list again while it is shown: the
// kernel changes it behind the view's back (`waiter plugin remove`, a crash and its restart).
const pluginsViewPoll = 2 * time.Second

// Watch refreshes the list every [pluginsViewPoll] while shown reports true, until ctx ends.
// after is time.After in production.
func (vm *PluginsVM) Watch(ctx context.Context, shown func() bool, after func(time.Duration) <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-after(pluginsViewPoll):
		}
		if shown() {
			_ = vm.Refresh(ctx) // a failure shows in the view's status
		}
	}
}

// Plugin returns the listed plugin called name.
func (vm *PluginsVM) Plugin(name string) (client.Plugin, bool) {
	list, _ := vm.Plugins.Get()
	for _, p := range list {
		if p.Name == name {
			return p, true
		}
	}
	return client.Plugin{}, false
}

// Act runs a plugin action (client.PluginRestart, PluginEnable, PluginDisable, PluginRemove)
// and refreshes the list.
func (vm *PluginsVM) Act(ctx context.Context, name, action string) error {
	var done string
	switch action {
	case client.PluginRestart:
		done = Tf("Restarted %s.", name)
	case client.PluginEnable:
		done = Tf("Enabled %s.", name)
	case client.PluginDisable:
		done = Tf("Disabled %s.", name)
	case client.PluginRemove:
		done = Tf("Removed %s.", name)
	default:
		return fmt.Errorf("plugin %s: unknown action %q", name, action)
	}
	_ = vm.Busy.Set(true)
	defer vm.Busy.Set(false)
	if _, err := vm.svc.PluginAction(ctx, name, action); err != nil {
		vm.report(Tf("Could not %s %s: %v", pluginActionText(action), name, err), true)
		return fmt.Errorf("plugin %s %s: %w", action, name, err)
	}
	if err := vm.Refresh(ctx); err != nil {
		return err
	}
	vm.report(done, false)
	return nil
}

// pluginActionText is an action as a verb in the current language.
func pluginActionText(action string) string {
	switch action {
	case client.PluginRestart:
		return T("restart")
	case client.PluginEnable:
		return T("enable")
	case client.PluginDisable:
		return T("disable")
	case client.PluginRemove:
		return T("remove")
	}
	return action
}

// pluginStateText is a plugin state in the current language.
func pluginStateText(state string) string {
	switch state {
	case "starting":
		return T("starting")
	case "running":
		return T("running")
	case "backoff":
		return T("waiting to restart")
	case "tripped":
		return T("stopped after repeated failures")
	case "failed":
		return T("failed: never answered")
	case "stopped":
		return T("stopped")
	case "disabled":
		return T("disabled")
	}
	return state
}

// pluginKindText is a plugin kind in the current language.
func pluginKindText(kind string) string {
	switch kind {
	case "mcp":
		return T("MCP server")
	case "native":
		return T("native plugin")
	}
	return kind
}

// Logs returns the last lines the plugin wrote to stderr (at most pluginLogLines).
func (vm *PluginsVM) Logs(ctx context.Context, name string) ([]client.LogLine, error) {
	lines, err := vm.svc.PluginLogs(ctx, name, pluginLogLines)
	if err != nil {
		vm.report(Tf("Could not read the logs of %s: %v", name, err), true)
		return nil, fmt.Errorf("plugin logs %s: %w", name, err)
	}
	return lines, nil
}

// formatLogLines renders log lines one per line, each with its local time.
func formatLogLines(lines []client.LogLine) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.Time.Local().Format("2006-01-02 15:04:05"))
		b.WriteString("  ")
		b.WriteString(l.Line)
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// addConfig checks the add form and returns the plugin to add; its errors are the messages to
// show, in the current language.
func (vm *PluginsVM) addConfig() (client.PluginConfig, error) {
	name, _ := vm.AddName.Get()
	cmdline, _ := vm.AddCommand.Get()
	dir, _ := vm.AddDir.Get()
	name, cmdline, dir = strings.TrimSpace(name), strings.TrimSpace(cmdline), strings.TrimSpace(dir)
	switch {
	case name == "":
		return client.PluginConfig{}, errors.New(T("Enter a name for the plugin."))
	case !pluginNameRe.MatchString(name):
		return client.PluginConfig{}, errors.New(T("A plugin name starts with a letter or digit and uses letters, digits, '.', '_' and '-' only (at most 64)."))
	case cmdline == "" && dir == "":
		return client.PluginConfig{}, errors.New(T("Enter the command line of an MCP server or the directory of a native plugin."))
	case cmdline != "" && dir != "":
		return client.PluginConfig{}, errors.New(T("Enter a command line or a directory, not both."))
	}
	if _, ok := vm.Plugin(name); ok {
		return client.PluginConfig{}, errors.New(Tf("A plugin named %s already exists.", name))
	}
	if dir != "" {
		if !filepath.IsAbs(dir) {
			return client.PluginConfig{}, errors.New(T("The plugin directory must be an absolute path on the kernel's machine."))
		}
		return client.PluginConfig{Name: name, Dir: filepath.Clean(dir)}, nil
	}
	argv, err := splitCommandLine(cmdline)
	if err != nil {
		return client.PluginConfig{}, err
	}
	return client.PluginConfig{Name: name, Command: argv}, nil
}

// Add checks the add form, adds the plugin (the kernel starts it), clears the form and
// refreshes the list.
func (vm *PluginsVM) Add(ctx context.Context) (client.Plugin, error) {
	cfg, err := vm.addConfig()
	if err != nil {
		vm.report(err.Error(), true)
		return client.Plugin{}, err
	}
	_ = vm.Busy.Set(true)
	defer vm.Busy.Set(false)
	p, err := vm.svc.AddPlugin(ctx, cfg)
	if err != nil {
		vm.report(Tf("Could not add %s: %v", cfg.Name, err), true)
		return client.Plugin{}, fmt.Errorf("add plugin %s: %w", cfg.Name, err)
	}
	_ = vm.AddName.Set("")
	_ = vm.AddCommand.Set("")
	_ = vm.AddDir.Set("")
	if err := vm.Refresh(ctx); err != nil {
		return p, err
	}
	vm.report(Tf("Added %s (%s).", p.Name, pluginStateText(p.State)), false)
	return p, nil
}

// splitCommandLine splits a command line like waiter's --command (client.SplitCommand); its
// errors are messages to show.
func splitCommandLine(s string) ([]string, error) {
	words, err := client.SplitCommand(s)
	var qe *client.QuoteError
	switch {
	case errors.As(err, &qe):
		return nil, errors.New(Tf("The command line has a quote that is not closed (%s at character %d).", string(qe.Quote), qe.Pos+1))
	case errors.Is(err, client.ErrTrailingBackslash):
		return nil, errors.New(T("The command line ends with a lone backslash."))
	case err != nil:
		return nil, err
	case len(words) == 0:
		return nil, errors.New(T("The command line is empty."))
	}
	return words, nil
}
