package main

import (
	"context"
	"fmt"

	"github.com/hologramagent/hologram/kernel/client"
)

// token runs `waiter token add|list|remove`: the tokens of the OpenAI-compatible apps allowed on
// /v1 (plain `waiter token`, offline, prints a random token: run.go).
func (a *app) token(ctx context.Context, args []string) error {
	sub, args := args[0], args[1:]
	fs := newFlags("token " + sub)
	asJSON := fs.Bool("json", false, "print JSON")
	owner := fs.Bool("owner", false, "requests without \"user\" run in the owner's scope")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if *owner && sub != "add" {
		return usagef("--owner goes with token add")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	tokens, ok := svc.(client.TokenService)
	if !ok {
		return fmt.Errorf("this kernel client cannot manage /v1 client tokens")
	}
	switch sub {
	case "list", "ls":
		if len(pos) != 0 {
			return usagef("usage: waiter token list [--json]")
		}
		ts, err := tokens.APITokens(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			if ts == nil {
				ts = []client.APIToken{}
			}
			return a.writeJSON(ts)
		}
		rows := [][]string{{"NAME", "SCOPE", "CREATED"}}
		for _, t := range ts {
			rows = append(rows, []string{t.Name, t.Scope, t.Created.Local().Format("2006-01-02 15:04")})
		}
		return a.table(rows)
	case "add":
		if len(pos) != 1 {
			return usagef("usage: waiter token add NAME [--owner] [--json]")
		}
		t, err := tokens.AddAPIToken(ctx, pos[0], *owner)
		if err != nil {
			return err
		}
		if *asJSON {
			return a.writeJSON(t)
		}
		who := "its requests without \"user\" run in scope " + t.Scope + " (never the owner's memory or owner-only tools)"
		if t.Owner {
			who = "its requests without \"user\" run in the owner's scope (the owner's memory and tools)"
		}
		fmt.Fprintf(a.stderr, "token %s added for /v1 (its requests with \"user\" X run in scope group:user:X); %s. Give the app this token (shown once, stored hashed):\n", t.Name, who)
		fmt.Fprintln(a.stdout, t.Token)
		return nil
	case "remove", "rm":
		if len(pos) != 1 {
			return usagef("usage: waiter token remove NAME")
		}
		if err := tokens.RemoveAPIToken(ctx, pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "token %s removed: it no longer works\n", pos[0])
		return nil
	}
	return usagef("unknown token subcommand %q (add, list or remove)", sub)
}
