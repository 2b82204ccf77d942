package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// approver returns the kernel's approvals (every kernel this waiter talks to has them).
func (a *app) approver() (client.ApprovalService, error) {
	svc, err := a.service()
	if err != nil {
		return nil, err
	}
	return svc, nil
}

// approvals runs `waiter approvals [--json]`: the plugins' pending requests for approval.
func (a *app) approvals(ctx context.Context, args []string) error {
	fs := newFlags("approvals")
	asJSON := fs.Bool("json", false, "print JSON")
	if pos, err := parse(fs, args, true); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("approvals takes no arguments")
	}
	ap, err := a.approver()
	if err != nil {
		return err
	}
	list, err := ap.Approvals(ctx)
	if err != nil {
		return err
	}
	if list == nil {
		list = []client.Approval{}
	}
	if *asJSON {
		return a.writeJSON(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(a.stderr, "no pending approvals")
		return nil
	}
	rows := [][]string{{"ID", "PLUGIN", "WHAT", "WHERE", "EXPIRES"}}
	for _, p := range list {
		what := p.Title
		if p.Detail != "" {
			what += ": " + p.Detail
		}
		rows = append(rows, []string{p.ID, p.Plugin, oneLine(strings.ReplaceAll(what, "\n", " "), 80), approvalWhere(p), p.Expires.Local().Format(time.TimeOnly)})
	}
	return a.table(rows)
}

// approvalWhere says which conversation asked: the session, and the channel and partner of a
// channel's turn.
func approvalWhere(p client.Approval) string {
	switch {
	case p.Session == "":
		return "-"
	case p.Channel != "" && p.Partner != "":
		return p.Session + " (" + p.Channel + " " + p.Partner + ")"
	}
	return p.Session
}

// approve runs `waiter approve ID [--deny]`.
func (a *app) approve(ctx context.Context, args []string) error {
	fs := newFlags("approve")
	deny := fs.Bool("deny", false, "deny instead of approving")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 || strings.TrimSpace(pos[0]) == "" {
		return usagef("usage: waiter approve ID [--deny] (waiter approvals lists the ids)")
	}
	ap, err := a.approver()
	if err != nil {
		return err
	}
	out, err := ap.AnswerApproval(ctx, pos[0], !*deny)
	if err != nil {
		return err
	}
	if *asJSON {
		return a.writeJSON(out)
	}
	fmt.Fprintf(a.stdout, "approval %s (%s: %s): %s\n", out.ID, out.Plugin, out.Title, out.State)
	return nil
}

// approvalLine is how a chat shows an approval event of its turn.
func approvalLine(ap *client.Approval) string {
	if ap.State != client.ApprovalPending {
		return "approval " + ap.ID + ": " + ap.State
	}
	what := ap.Title
	if ap.Detail != "" {
		what += ": " + ap.Detail
	}
	return fmt.Sprintf("? %s asks your approval: %s\n  answer with `waiter approve %s` or `waiter approve %s --deny` (until %s)",
		ap.Plugin, oneLine(strings.ReplaceAll(what, "\n", " "), 200), ap.ID, ap.ID, ap.Expires.Local().Format(time.TimeOnly))
}
