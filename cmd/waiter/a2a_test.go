package main

import (
	"strings"
	"testing"
)

func TestA2AUsageAndErrors(t *testing.T) {
	f, env := kernel(t, false)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no subcommand", []string{"a2a"}, 2, "a2a needs a subcommand: peer add NAME"},
		{"peer without subcommand", []string{"a2a", "peer"}, 2, "a2a peer needs a subcommand"},
		{"unknown peer subcommand", []string{"a2a", "peer", "frob"}, 2, `unknown a2a peer subcommand "frob"`},
		{"add without a name", []string{"a2a", "peer", "add"}, 2, "usage: waiter a2a peer add NAME"},
		{"add two names", []string{"a2a", "peer", "add", "a", "b"}, 2, "usage: waiter a2a peer add NAME"},
		{"remove without a name", []string{"a2a", "peer", "remove"}, 2, "usage: waiter a2a peer remove NAME"},
		{"list with a name", []string{"a2a", "peer", "list", "x"}, 2, "usage: waiter a2a peer list"},
		{"the kernel's error", []string{"a2a", "peer", "list"}, 1, "HTTP 404"}, // the fake kernel serves no A2A
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
	if last := reqs[len(reqs)-1]; last.Method != "GET" || last.Path != "/api/v1/a2a/peers" {
		t.Fatalf("last request %s %s", last.Method, last.Path)
	}
	if r := waiter(t, env, nil, "help"); !strings.Contains(r.stdout, "a2a peer add NAME") {
		t.Fatal("help does not list a2a peer add")
	}
}
