package main

import (
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

func TestApprovalCommands(t *testing.T) {
	f, env := kernel(t, false)
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := waiter(t, env, nil, "approvals")
	if r.code != 0 || r.stdout != "" || r.stderr != "no pending approvals\n" {
		t.Fatalf("empty: %+v", r)
	}
	f.AddApproval(client.Approval{ID: "ap1", Plugin: "shell", Title: "Run a command", Detail: "$ git status\nin /srv/code",
		Session: "main", Created: created, Expires: created.Add(2 * time.Minute)})
	f.AddApproval(client.Approval{ID: "ap2", Plugin: "shell", Title: "Run a command", Detail: "$ touch x",
		Session: "chan:qq:group_1", Channel: "qq", Partner: "group_1", Created: created.Add(time.Second), Expires: created.Add(3 * time.Minute)})

	r = waiter(t, env, nil, "approvals")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], "ap1") ||
		!strings.Contains(lines[1], "Run a command: $ git status in /srv/code") || !strings.Contains(lines[2], "chan:qq:group_1 (qq group_1)") {
		t.Fatalf("list:\n%s%s", r.stdout, r.stderr)
	}
	r = waiter(t, env, nil, "approvals", "--json")
	var list []client.Approval
	decodeStrict(t, r.stdout, &list)
	if len(list) != 2 || list[0].ID != "ap1" || list[1].Partner != "group_1" {
		t.Fatalf("--json: %+v", list)
	}

	r = waiter(t, env, nil, "approve", "ap1")
	if r.code != 0 || r.stdout != "approval ap1 (shell: Run a command): approved\n" {
		t.Fatalf("approve: %+v", r)
	}
	r = waiter(t, env, nil, "approve", "--deny", "ap2")
	if r.code != 0 || r.stdout != "approval ap2 (shell: Run a command): denied\n" {
		t.Fatalf("deny: %+v", r)
	}
	if a, _ := f.Approval("ap2"); a.State != client.ApprovalDenied {
		t.Fatalf("the fake holds %+v", a)
	}
	for _, tt := range []struct {
		args     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"approve", "ap1"}, 1, `no pending approval "ap1" (answered, expired or never asked) (HTTP 404)`},
		{[]string{"approve"}, 2, "usage: waiter approve ID [--deny]"},
		{[]string{"approve", "a", "b"}, 2, "usage: waiter approve ID [--deny]"},
		{[]string{"approvals", "x"}, 2, "approvals takes no arguments"},
		{[]string{"approve", "ap1", "--frob"}, 2, "frob"},
	} {
		r := waiter(t, env, nil, tt.args...)
		if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.wantErr) {
			t.Errorf("%q: %+v, want %d and %q", tt.args, r, tt.wantCode, tt.wantErr)
		}
	}
}

func TestPluginListMarksBuiltins(t *testing.T) {
	f, env := kernel(t, false)
	f.AddBuiltinPlugin("files", "running")
	f.AddBuiltinPlugin("shell", "disabled")
	r := waiter(t, env, nil, "plugin", "list")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.Contains(lines[1], "files") || !strings.Contains(lines[1], "native (builtin)") ||
		!strings.Contains(lines[2], "shell") || !strings.Contains(lines[2], "native (builtin)") || !strings.Contains(lines[2], "disabled") {
		t.Fatalf("list:\n%s", r.stdout)
	}
}

func TestChatShowsApprovals(t *testing.T) {
	var out, side strings.Builder
	p := newPrinter(&out, &side, func(string) string { return "" }, true)
	exp := time.Date(2026, 1, 2, 3, 6, 5, 0, time.Local)
	p.event(client.ChatEvent{Type: client.EventApproval, Approval: &client.Approval{ID: "ap7", Plugin: "shell", Title: "Run a command",
		Detail: "$ ls\nin /x", Expires: exp, State: client.ApprovalPending}})
	p.event(client.ChatEvent{Type: client.EventApproval, Approval: &client.Approval{ID: "ap7", State: client.ApprovalApproved}})
	want := "? shell asks your approval: Run a command: $ ls in /x\n  answer with `waiter approve ap7` or `waiter approve ap7 --deny` (until 03:06:05)\napproval ap7: approved\n"
	if side.String() != want || out.String() != "" {
		t.Fatalf("side %q, out %q", side.String(), out.String())
	}
}
