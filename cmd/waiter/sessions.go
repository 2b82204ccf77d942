package main

import (
	"context"
	"fmt"
	"strings"
)

// sessionRename runs `waiter session rename ID TITLE` (the title may be several words).
func (a *app) sessionRename(ctx context.Context, args []string) error {
	fs := newFlags("session rename")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) < 2 || pos[0] == "" {
		return usagef("usage: waiter session rename ID TITLE")
	}
	title := strings.Join(pos[1:], " ")
	svc, err := a.service()
	if err != nil {
		return err
	}
	s, err := svc.RenameSession(ctx, pos[0], title)
	if err != nil {
		return fmt.Errorf("rename session %s: %w", pos[0], err)
	}
	fmt.Fprintf(a.stdout, "session %s renamed to %q\n", s.ID, s.Title)
	return nil
}

// sessionDelete runs `waiter session delete ID [--forget]`: the chat leaves the session list;
// what it taught the memory stays unless --forget.
func (a *app) sessionDelete(ctx context.Context, args []string) error {
	fs := newFlags("session delete")
	forget := fs.Bool("forget", false, "forget the session's events too (and every fact only they backed)")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] == "" {
		return usagef("usage: waiter session delete ID [--forget]")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	d, err := svc.DeleteSession(ctx, pos[0], *forget)
	if err != nil {
		return fmt.Errorf("delete session %s: %w", pos[0], err)
	}
	if d.Forgotten {
		fmt.Fprintf(a.stdout, "session %s deleted; forgot %s, %s and %s\n", d.Session,
			plural(d.Forget.Events, "event"), plural(d.Forget.Triples, "fact"), plural(d.Forget.Entities, "entity"))
		return nil
	}
	fmt.Fprintf(a.stdout, "session %s deleted; its memory (%s) is kept (--forget forgets it)\n", d.Session, plural(d.Events, "event"))
	return nil
}
