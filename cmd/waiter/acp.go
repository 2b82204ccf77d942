package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"text/tabwriter"

	"github.com/hologramagent/hologram/cmd/waiter/internal/acp"
	"github.com/hologramagent/hologram/kernel/client"
)

const acpUsage = `usage: waiter acp [--socket PATH | --remote URL --token-file F [--fingerprint SHA256] [--insecure]]
       waiter acp permissions [list] [--json]
       waiter acp permissions revoke PROJECT [KIND]

waiter acp is the agent an editor starts (Agent Client Protocol v1 over stdin/stdout): it
bridges the editor to the running kernel. See docs/channels.md for Zed, Neovim and JetBrains.
"Always" answers to approvals are kept per project; permissions lists and revokes them.
`

// acp runs `waiter acp`: the ACP agent over stdio, or its permissions subcommand.
func (a *app) acp(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "permissions" {
		return a.acpPermissions(args[1:])
	}
	fs := newFlags("acp")
	socket := fs.String("socket", "", "kernel unix socket")
	remote := fs.String("remote", "", "remote kernel URL")
	tokenFile := fs.String("token-file", "", "file holding the bearer token")
	fingerprint := fs.String("fingerprint", "", "pinned SHA-256 of the server certificate")
	insecure := fs.Bool("insecure", false, "allow plain HTTP off loopback")
	pos, err := parse(fs, args, false)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(a.stdout, acpUsage)
			return nil
		}
		return err
	}
	if len(pos) > 0 {
		return usagef("acp: unexpected argument %q (subcommand: permissions)", pos[0])
	}
	if *socket != "" || *remote != "" || *tokenFile != "" || *fingerprint != "" || *insecure {
		opts, err := a.options(*socket, *remote, *tokenFile, *fingerprint, *insecure)
		if err != nil {
			return err
		}
		a.opts = opts
	}
	a.opts.Client = "waiter-acp"
	svc, err := a.service()
	if err != nil {
		return err
	}
	if _, err := svc.Status(ctx); err != nil {
		if a.opts.URL != "" {
			return fmt.Errorf("acp: the kernel at %s does not answer: %w (check the URL, the token and the fingerprint)", a.opts.URL, err)
		}
		return fmt.Errorf("acp: no kernel answers on %s: %w\n"+
			"start one with `homed` (or the desktop app, `hologram`), or point waiter at it with --socket PATH or --remote URL", a.opts.Socket, err)
	}
	// An editor stops its agent with SIGTERM (or closes stdin): either way the session's MCP
	// servers are removed before waiter exits.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	log := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ag := acp.New(svc, acp.OpenPermissions(permissionsPath(a.getenv)), acp.Options{Remote: a.opts.URL != "", Version: buildVersion(), Log: log})
	if err := ag.Serve(ctx, a.stdin, a.stdout); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// permissionsPath is where the "always" answers live: $XDG_CONFIG_HOME/hologram/acp-permissions.json.
func permissionsPath(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "hologram", "acp-permissions.json")
}

// acpPermissions lists or revokes the kept answers (no kernel needed).
func (a *app) acpPermissions(args []string) error {
	perms := acp.OpenPermissions(permissionsPath(a.getenv))
	sub := "list"
	if len(args) > 0 && (args[0] == "list" || args[0] == "revoke") {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "revoke":
		if len(args) < 1 || len(args) > 2 {
			return usagef("acp permissions revoke PROJECT [KIND]")
		}
		project, kind := filepath.Clean(args[0]), ""
		if len(args) == 2 {
			kind = args[1]
		}
		n, err := perms.Revoke(project, kind)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("acp permissions: no rule for %s%s (waiter acp permissions lists them)", project, map[bool]string{true: " " + kind}[kind != ""])
		}
		fmt.Fprintf(a.stdout, "revoked %d rule(s) of %s\n", n, project)
		return nil
	}
	fs := newFlags("acp permissions")
	asJSON := fs.Bool("json", false, "JSON output")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("acp permissions: unexpected argument %q", pos[0])
	}
	rules, err := perms.List()
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rules)
	}
	if len(rules) == 0 {
		fmt.Fprintf(a.stdout, "no kept answers (%s)\n", perms.Path())
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROJECT\tKIND\tDECISION")
	for _, r := range rules {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Project, r.Kind, r.Decision)
	}
	return tw.Flush()
}

var _ acp.Kernel = client.Service(nil)
