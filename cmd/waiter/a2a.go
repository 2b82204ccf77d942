package main

import (
	"context"
	"fmt"

	"github.com/hologramagent/hologram/kernel/client"
)

// a2a runs `waiter a2a peer add|list|remove`: the other agents allowed to talk to this one.
func (a *app) a2a(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "peer" {
		return usagef("a2a needs a subcommand: peer add NAME, peer list or peer remove NAME")
	}
	args = args[1:]
	if len(args) == 0 {
		return usagef("a2a peer needs a subcommand: add, list or remove")
	}
	sub, args := args[0], args[1:]
	fs := newFlags("a2a peer " + sub)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	peers, ok := svc.(client.A2AService)
	if !ok {
		return fmt.Errorf("this kernel client cannot manage A2A peers")
	}
	switch sub {
	case "list", "ls":
		if len(pos) != 0 {
			return usagef("usage: waiter a2a peer list [--json]")
		}
		ps, err := peers.A2APeers(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			if ps == nil {
				ps = []client.A2APeer{}
			}
			return a.writeJSON(ps)
		}
		rows := [][]string{{"NAME", "SESSION", "SCOPE", "CREATED"}}
		for _, p := range ps {
			rows = append(rows, []string{p.Name, p.Session, p.Scope, p.Created.Local().Format("2006-01-02 15:04")})
		}
		return a.table(rows)
	case "add":
		if len(pos) != 1 {
			return usagef("usage: waiter a2a peer add NAME [--json]")
		}
		p, err := peers.AddA2APeer(ctx, pos[0])
		if err != nil {
			return err
		}
		if *asJSON {
			return a.writeJSON(p)
		}
		fmt.Fprintf(a.stderr, "A2A peer %s added: it talks in session %s, scope %s. Give it this token (shown once, stored hashed):\n", p.Name, p.Session, p.Scope)
		fmt.Fprintln(a.stdout, p.Token)
		return nil
	case "remove", "rm":
		if len(pos) != 1 {
			return usagef("usage: waiter a2a peer remove NAME")
		}
		if err := peers.RemoveA2APeer(ctx, pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "A2A peer %s removed: its token no longer works\n", pos[0])
		return nil
	}
	return usagef("unknown a2a peer subcommand %q", sub)
}
