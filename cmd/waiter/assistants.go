package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// assistant runs `waiter assistant add|list|rm|start`: the owner's chat presets.
func (a *app) assistant(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("assistant needs a subcommand: add, list, rm or start")
	}
	sub, args := args[0], args[1:]
	fs := newFlags("assistant " + sub)
	asJSON := fs.Bool("json", false, "print JSON")
	var in client.Assistant
	var tools fileList
	var instructionsFile, title string
	switch sub {
	case "add":
		fs.StringVar(&in.ID, "id", "", "the preset's id (default: made from the name)")
		fs.StringVar(&in.Instructions, "instructions", "", "the chats' system prompt")
		fs.StringVar(&instructionsFile, "instructions-file", "", "read the instructions from `FILE`")
		fs.StringVar(&in.Model, "model", "", "the chats' model (default: the default provider's)")
		fs.Var(&tools, "tool", "a tool or plugin its chats may call (repeatable; none: every tool)")
	case "start":
		fs.StringVar(&title, "title", "", "the chat's title (default: the preset's name)")
	}
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	as, ok := svc.(client.AssistantService)
	if !ok {
		return fmt.Errorf("this kernel client cannot manage assistants")
	}
	switch sub {
	case "list", "ls":
		if len(pos) != 0 {
			return usagef("usage: waiter assistant list [--json]")
		}
		list, err := as.Assistants(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			if list == nil {
				list = []client.Assistant{}
			}
			return a.writeJSON(list)
		}
		if len(list) == 0 {
			fmt.Fprintln(a.stdout, "no assistants yet: waiter assistant add NAME --instructions TEXT [--model M] [--tool T]...")
			return nil
		}
		rows := [][]string{{"ID", "NAME", "MODEL", "TOOLS", "INSTRUCTIONS"}}
		for _, p := range list {
			model, tl := p.Model, strings.Join(p.Tools, ",")
			if model == "" {
				model = "(default)"
			}
			if tl == "" {
				tl = "(all)"
			}
			rows = append(rows, []string{p.ID, p.Name, model, tl, clipLine(p.Instructions, 40)})
		}
		return a.table(rows)
	case "add":
		if len(pos) == 0 {
			return usagef("usage: waiter assistant add NAME... [--id ID] [--instructions TEXT | --instructions-file F] [--model M] [--tool T]...")
		}
		in.Name = strings.Join(pos, " ")
		if instructionsFile != "" {
			if in.Instructions != "" {
				return usagef("--instructions and --instructions-file exclude each other")
			}
			b, err := os.ReadFile(instructionsFile)
			if err != nil {
				return fmt.Errorf("read instructions: %w", err)
			}
			in.Instructions = string(b)
		}
		in.Tools = tools
		p, err := as.SaveAssistant(ctx, in)
		if err != nil {
			return fmt.Errorf("save assistant: %w", err)
		}
		if *asJSON {
			return a.writeJSON(p)
		}
		fmt.Fprintf(a.stdout, "assistant %s (%s) saved; start a chat with: waiter assistant start %s\n", p.ID, p.Name, p.ID)
		return nil
	case "remove", "rm":
		if len(pos) != 1 {
			return usagef("usage: waiter assistant rm ID")
		}
		if err := as.RemoveAssistant(ctx, pos[0]); err != nil {
			return fmt.Errorf("remove assistant %s: %w", pos[0], err)
		}
		fmt.Fprintf(a.stdout, "assistant %s removed; the chats started from it are kept as they are\n", pos[0])
		return nil
	case "start":
		if len(pos) != 1 {
			return usagef("usage: waiter assistant start ID [--title T] [--json]")
		}
		s, err := as.StartAssistant(ctx, pos[0], title)
		if err != nil {
			return fmt.Errorf("start assistant %s: %w", pos[0], err)
		}
		if *asJSON {
			return a.writeJSON(s)
		}
		fmt.Fprintf(a.stderr, "chat %q started from assistant %s; talk in it with: waiter chat --session %s\n", s.Title, pos[0], s.ID)
		fmt.Fprintln(a.stdout, s.ID)
		return nil
	}
	return usagef("unknown assistant subcommand %q", sub)
}

// clipLine is the first line of s, at most n runes.
func clipLine(s string, n int) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	} else if cut {
		return s + "…"
	}
	return s
}
