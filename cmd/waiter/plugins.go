package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// plugin runs `waiter plugin list|add|restart|enable|disable|remove|logs|config`.
func (a *app) plugin(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("plugin needs a subcommand: list, show, add, restart, enable, disable, remove, logs or config")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "list", "ls":
		return a.pluginList(ctx, args)
	case "show":
		return a.pluginShow(ctx, args)
	case "add":
		return a.pluginAdd(ctx, args)
	case "logs":
		return a.pluginLogs(ctx, args)
	case "config":
		return a.pluginConfig(ctx, args)
	case client.PluginRestart, client.PluginEnable, client.PluginDisable, client.PluginRemove, "rm":
		if sub == "rm" {
			sub = client.PluginRemove
		}
		fs := newFlags("plugin " + sub)
		asJSON := fs.Bool("json", false, "print JSON")
		pos, err := parse(fs, args, true)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return usagef("usage: waiter plugin %s NAME", sub)
		}
		svc, err := a.service()
		if err != nil {
			return err
		}
		p, err := svc.PluginAction(ctx, pos[0], sub)
		if err != nil {
			return err
		}
		if *asJSON {
			return a.writeJSON(p)
		}
		if sub == client.PluginRemove {
			fmt.Fprintf(a.stdout, "plugin %s removed\n", p.Name)
			return nil
		}
		fmt.Fprintf(a.stdout, "plugin %s: %s\n", p.Name, p.State)
		return nil
	}
	return usagef("unknown plugin subcommand %q", sub)
}

func (a *app) pluginList(ctx context.Context, args []string) error {
	return runListing(ctx, a, args, listing[client.Plugin]{
		name:   "plugin list",
		fetch:  client.Service.Plugins,
		header: []string{"NAME", "KIND", "STATE", "PID", "RESTARTS", "TOOLS", "LAST ERROR"},
		row: func(p client.Plugin) []string {
			pid := "-"
			if p.PID > 0 {
				pid = strconv.Itoa(p.PID)
			}
			kind := p.Kind
			if p.Builtin {
				kind += " (builtin)"
			}
			return []string{p.Name, kind, p.State, pid, strconv.Itoa(p.Restarts), orDash(strings.Join(p.Tools, ",")), oneLine(p.LastError, 60)}
		},
	})
}

// pluginShow prints one plugin: its state and what its manifest says it needs (the paths
// expanded, as a built-in plugin confines itself to them).
func (a *app) pluginShow(ctx context.Context, args []string) error {
	fs := newFlags("plugin show")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: waiter plugin show NAME [--json]")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	ps, err := svc.Plugins(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ps, func(p client.Plugin) bool { return p.Name == pos[0] })
	if i < 0 {
		return fmt.Errorf("%w: no plugin %q (waiter plugin list shows them)", client.ErrNotFound, pos[0])
	}
	p := ps[i]
	if *asJSON {
		return a.writeJSON(p)
	}
	w := a.stdout
	kind := p.Kind
	if p.Builtin {
		kind += " (builtin)"
	}
	fmt.Fprintf(w, "plugin %s: %s, %s", p.Name, kind, p.State)
	if p.PID > 0 {
		fmt.Fprintf(w, ", pid %d", p.PID)
	}
	fmt.Fprintf(w, ", %d restarts\n", p.Restarts)
	if p.Dir != "" {
		fmt.Fprintf(w, "dir:     %s\n", p.Dir)
	}
	if len(p.Command) > 0 {
		fmt.Fprintf(w, "command: %s\n", strings.Join(p.Command, " "))
	}
	fmt.Fprintf(w, "tools:   %s\n", orDash(strings.Join(p.Tools, ", ")))
	if p.LastError != "" {
		fmt.Fprintf(w, "error:   %s\n", p.LastError)
	}
	if p.Kind != "native" {
		fmt.Fprintln(w, "permissions: not declared (an MCP server runs with the kernel's rights)")
		return nil
	}
	perm := p.Permissions
	yesNo := map[bool]string{true: "yes", false: "no"}
	fmt.Fprintf(w, "permissions:\n  network:  %s\n  programs: %s\n", yesNo[perm.Network], yesNo[perm.Exec])
	for _, pp := range perm.Paths {
		fmt.Fprintf(w, "  %-8s  %s\n", pp.Access+":", pp.Path)
	}
	if len(perm.Env) > 0 {
		only := ""
		if perm.EnvOnly {
			only = " (only these of the kernel's environment)"
		}
		fmt.Fprintf(w, "  env:      %s%s\n", strings.Join(perm.Env, " "), only)
	}
	for _, n := range perm.Notes {
		fmt.Fprintf(w, "  also:     %s\n", n)
	}
	return nil
}

// stringsFlag is a repeatable string flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

func (a *app) pluginAdd(ctx context.Context, args []string) error {
	fs := newFlags("plugin add")
	command := fs.String("command", "", `the MCP stdio server's command line, quoted as in a shell, e.g. "npx -y @modelcontextprotocol/server-everything"`)
	dir := fs.String("dir", "", "a native plugin's directory (plugin.json)")
	disabled := fs.Bool("disabled", false, "add it without starting it")
	visibility := fs.String("visibility", "", `who may call an MCP server's tools: "owner" (the default: your own sessions only) or "any" (groups, /v1 end users and public sessions too)`)
	asJSON := fs.Bool("json", false, "print JSON")
	var env stringsFlag
	fs.Var(&env, "env", "extra environment KEY=VALUE (repeatable)")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef(`usage: waiter plugin add NAME --command "CMD ARGS..." | --dir PATH`)
	}
	if (*command == "") == (*dir == "") {
		return usagef("plugin add needs exactly one of --command and --dir")
	}
	if v := *visibility; v != "" && v != "owner" && v != "any" {
		return usagef(`--visibility must be "owner" or "any", got %q`, v)
	}
	if *visibility != "" && *dir != "" {
		return usagef("--visibility is for MCP servers (--command); a native plugin declares its tools' visibility in plugin.json")
	}
	cfg := client.PluginConfig{Name: pos[0], Env: env, Disabled: *disabled, Visibility: *visibility}
	if *command != "" {
		argv, err := client.SplitCommand(*command)
		if err != nil {
			return usagef("--command: %v", err)
		}
		if len(argv) == 0 {
			return usagef("--command is empty")
		}
		cfg.Command = argv
	} else {
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return fmt.Errorf("--dir: %w", err)
		}
		cfg.Dir = abs
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	p, err := svc.AddPlugin(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		return a.writeJSON(p)
	}
	fmt.Fprintf(a.stdout, "plugin %s added: %s\n", p.Name, p.State)
	return nil
}

func (a *app) pluginLogs(ctx context.Context, args []string) error {
	fs := newFlags("plugin logs")
	n := fs.Int("n", 0, "the last N lines (default: all kept)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: waiter plugin logs NAME [-n N]")
	}
	if *n < 0 {
		return usagef("-n must be >= 0")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	lines, err := svc.PluginLogs(ctx, pos[0], *n)
	if err != nil {
		return err
	}
	if lines == nil {
		lines = []client.LogLine{}
	}
	if *asJSON {
		return a.writeJSON(lines)
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.Time.Local().Format(time.DateTime))
		b.WriteString("  ")
		b.WriteString(l.Line)
		b.WriteByte('\n')
	}
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}
