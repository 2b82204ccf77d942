package main

import (
	"strings"
	"testing"
)

func TestTokenUsageAndErrors(t *testing.T) {
	f, env := kernel(t, false)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"unknown subcommand", []string{"token", "frob"}, 2, `unknown token subcommand "frob"`},
		{"add without a name", []string{"token", "add"}, 2, "usage: waiter token add NAME [--owner]"},
		{"add two names", []string{"token", "add", "a", "b"}, 2, "usage: waiter token add NAME"},
		{"owner on list", []string{"token", "list", "--owner"}, 2, "--owner goes with token add"},
		{"remove without a name", []string{"token", "remove"}, 2, "usage: waiter token remove NAME"},
		{"list with a name", []string{"token", "list", "x"}, 2, "usage: waiter token list"},
		{"the kernel's error", []string{"token", "add", "app", "--owner"}, 1, "HTTP 404"}, // the fake kernel keeps no tokens
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := waiter(t, env, nil, tt.args...)
			if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.wantErr) {
				t.Fatalf("got %+v, want code %d and %q", r, tt.wantCode, tt.wantErr)
			}
		})
	}
	reqs := f.Requests()
	if last := reqs[len(reqs)-1]; last.Method != "POST" || last.Path != "/api/v1/tokens" {
		t.Fatalf("last request %s %s", last.Method, last.Path)
	}
	if r := waiter(t, env, nil, "token"); r.code != 0 || len(strings.TrimSpace(r.stdout)) != 43 {
		t.Fatalf("the offline token: %+v", r)
	}
	if r := waiter(t, env, nil, "help"); !strings.Contains(r.stdout, "token add NAME [--owner]") {
		t.Fatal("help does not list token add")
	}
}
