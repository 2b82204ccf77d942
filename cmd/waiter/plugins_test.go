package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

func TestPluginCommands(t *testing.T) {
	f, env := kernel(t, false)

	r := waiter(t, env, nil, "plugin", "add", "everything", "--command", `node "/opt/my peers/index.js" stdio`, "--env", "A=1")
	if r.code != 0 || r.stdout != "plugin everything added: running\n" {
		t.Fatalf("add: %+v", r)
	}
	reqs := f.Requests()
	var sent client.PluginConfig
	if err := json.Unmarshal([]byte(reqs[len(reqs)-1].Body), &sent); err != nil {
		t.Fatal(err)
	}
	if want := []string{"node", "/opt/my peers/index.js", "stdio"}; !reflect.DeepEqual(sent.Command, want) || !reflect.DeepEqual(sent.Env, []string{"A=1"}) {
		t.Fatalf("sent %+v", sent)
	}

	r = waiter(t, env, nil, "plugin", "add", "native", "--dir", "rel/dir", "--disabled")
	if r.code != 0 || r.stdout != "plugin native added: disabled\n" {
		t.Fatalf("add dir: %+v", r)
	}
	if err := json.Unmarshal([]byte(f.Requests()[len(f.Requests())-1].Body), &sent); err != nil || !strings.HasPrefix(sent.Dir, "/") || !strings.HasSuffix(sent.Dir, "/rel/dir") {
		t.Fatalf("dir not made absolute: %+v %v", sent, err)
	}

	r = waiter(t, env, nil, "plugin", "list")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") ||
		!strings.Contains(lines[1], "everything") || !strings.Contains(lines[1], "running") || !strings.Contains(lines[1], "everything_echo") ||
		!strings.Contains(lines[2], "native") || !strings.Contains(lines[2], "disabled") {
		t.Fatalf("list:\n%s", r.stdout)
	}

	f.SetPluginPermissions("native", client.PluginPermissions{Network: true, Exec: true, Env: []string{"HOME", "N_URL"}, EnvOnly: true,
		Paths: []client.PluginPath{{Path: "/data/native", Access: "write"}, {Path: "/usr", Access: "exec"}}, Notes: []string{"the roots of native.toml"}})
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"native"}, 0, "plugin native: native, disabled, 0 restarts\ndir:     " + sent.Dir + "\ntools:   -\npermissions:\n" +
			"  network:  yes\n  programs: yes\n  write:    /data/native\n  exec:     /usr\n  env:      HOME N_URL (only these of the kernel's environment)\n  also:     the roots of native.toml\n"},
		{[]string{"everything"}, 0, "command: node /opt/my peers/index.js stdio\ntools:   everything_echo\npermissions: not declared (an MCP server runs with the kernel's rights)\n"},
		{[]string{"nope"}, 1, ""},
		{nil, 2, ""},
	} {
		r := waiter(t, env, nil, append([]string{"plugin", "show"}, tc.args...)...)
		if r.code != tc.code || !strings.Contains(r.stdout, tc.want) {
			t.Errorf("plugin show %v: %+v", tc.args, r)
		}
	}
	r = waiter(t, env, nil, "plugin", "show", "native", "--json")
	var shown client.Plugin
	decodeStrict(t, r.stdout, &shown)
	if !shown.Permissions.Network || len(shown.Permissions.Paths) != 2 || shown.Permissions.Paths[1].Access != "exec" {
		t.Fatalf("plugin show --json: %+v", shown)
	}

	r = waiter(t, env, nil, "plugin", "list", "--json")
	var ps []client.Plugin
	decodeStrict(t, r.stdout, &ps)
	if len(ps) != 2 || ps[0].Name != "everything" || ps[0].PID == 0 || ps[1].Kind != "native" {
		t.Fatalf("list --json: %+v", ps)
	}

	r = waiter(t, env, nil, "tools", "--json")
	var ts []client.Tool
	decodeStrict(t, r.stdout, &ts)
	if len(ts) != 2 || ts[1].Name != "everything_echo" || ts[1].Source != "everything" {
		t.Fatalf("tools: %+v", ts)
	}

	for _, step := range []struct{ args, want string }{
		{"restart everything", "plugin everything: running\n"},
		{"disable everything", "plugin everything: disabled\n"},
		{"enable everything", "plugin everything: running\n"},
		{"rm native", "plugin native removed\n"},
	} {
		r = waiter(t, env, nil, append([]string{"plugin"}, strings.Fields(step.args)...)...)
		if r.code != 0 || r.stdout != step.want {
			t.Fatalf("%s: %+v", step.args, r)
		}
	}
	if last := f.Requests()[len(f.Requests())-1]; last.Method != "POST" || last.Path != "/api/v1/plugins/native/remove" {
		t.Fatalf("remove request %+v", last)
	}

	f.AddPluginLogs("everything", "starting", "listening on stdio", "ready")
	r = waiter(t, env, nil, "plugin", "logs", "everything", "-n", "2")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 2 || !strings.Contains(r.stdout, "listening on stdio") || strings.Contains(r.stdout, "starting") {
		t.Fatalf("logs: %+v", r)
	}
	if last := f.Requests()[len(f.Requests())-1]; last.Path != "/api/v1/plugins/everything/logs?n=2" {
		t.Fatalf("logs request %+v", last)
	}
}

func TestPluginUsageAndErrors(t *testing.T) {
	_, env := kernel(t, false)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no subcommand", []string{"plugin"}, 2, "plugin needs a subcommand"},
		{"unknown subcommand", []string{"plugin", "frob"}, 2, `unknown plugin subcommand "frob"`},
		{"add without source", []string{"plugin", "add", "x"}, 2, "exactly one of --command and --dir"},
		{"add with both", []string{"plugin", "add", "x", "--command", "a", "--dir", "/d"}, 2, "exactly one of --command and --dir"},
		{"add bad quoting", []string{"plugin", "add", "x", "--command", `node 'x`}, 2, "unterminated quote"},
		{"add no name", []string{"plugin", "add", "--command", "node"}, 2, "usage: waiter plugin add NAME"},
		{"restart no name", []string{"plugin", "restart"}, 2, "usage: waiter plugin restart NAME"},
		{"unknown plugin", []string{"plugin", "restart", "ghost"}, 1, `no such plugin: "ghost" (HTTP 404)`},
		{"logs unknown plugin", []string{"plugin", "logs", "ghost"}, 1, "HTTP 404"},
		{"negative n", []string{"plugin", "logs", "x", "-n", "-1"}, 2, "-n must be >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := waiter(t, env, nil, tt.args...)
			if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.wantErr) {
				t.Fatalf("got %+v, want code %d and %q", r, tt.wantCode, tt.wantErr)
			}
		})
	}
	r := waiter(t, env, nil, "help")
	if !strings.Contains(r.stdout, `plugin add NAME --command "CMD ARGS..."`) {
		t.Fatalf("usage lacks the plugin commands:\n%s", r.stdout)
	}
}
