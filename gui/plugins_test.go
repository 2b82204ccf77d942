package gui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client"
)

func TestSplitCommandLine(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"npx -y @modelcontextprotocol/server-everything", []string{"npx", "-y", "@modelcontextprotocol/server-everything"}, ""},
		{"  node\tserver.js  ", []string{"node", "server.js"}, ""},
		{`python3 -c 'print("hi there")'`, []string{"python3", "-c", `print("hi there")`}, ""},
		{`run "a \"quoted\" \$word" x\ y ''`, []string{"run", `a "quoted" $word`, "x y", ""}, ""},
		{`"/opt/my tools/srv" --dir=/tmp`, []string{"/opt/my tools/srv", "--dir=/tmp"}, ""},
		{`"keep \n as is"`, []string{`keep \n as is`}, ""},
		{"a \\\nb", []string{"a", "b"}, ""},
		{"服务 --名字 张三", []string{"服务", "--名字", "张三"}, ""},
		{`echo 'open`, nil, "quote that is not closed (' at character 6)"},
		{`echo "open`, nil, `quote that is not closed (" at character 6)`},
		{`echo trailing\`, nil, "lone backslash"},
		{"   ", nil, "is empty"},
	} {
		got, err := splitCommandLine(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("splitCommandLine(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("splitCommandLine(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestPluginsAddValidation(t *testing.T) {
	for _, tc := range []struct {
		name, pname, cmd, dir, want string
	}{
		{"no name", "", "node s.js", "", "Enter a name for the plugin."},
		{"bad name", "-x", "node s.js", "", "starts with a letter or digit"},
		{"name with a space", "my plugin", "node s.js", "", "starts with a letter or digit"},
		{"neither", "p", " ", "", "Enter the command line of an MCP server or the directory"},
		{"both", "p", "node s.js", "/opt/p", "not both"},
		{"relative dir", "p", "", "plugins/p", "must be an absolute path"},
		{"open quote", "p", `node "s.js`, "", "quote that is not closed"},
		{"taken", "echo", "node other.js", "", "A plugin named echo already exists."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, c := uiKernel(t)
			if _, err := c.AddPlugin(context.Background(), client.PluginConfig{Name: "echo", Command: []string{"echo-server"}}); err != nil {
				t.Fatal(err)
			}
			vm := NewPluginsVM(c)
			if err := vm.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
			_ = vm.AddName.Set(tc.pname)
			_ = vm.AddCommand.Set(tc.cmd)
			_ = vm.AddDir.Set(tc.dir)
			n := len(f.Requests())
			if _, err := vm.Add(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if s := uiGet[string](t, vm.Status); !strings.Contains(s, tc.want) || !uiGet[bool](t, vm.Failed) {
				t.Errorf("status %q (failed %v)", s, uiGet[bool](t, vm.Failed))
			}
			if extra := uiRequests(f)[n:]; len(extra) != 0 {
				t.Errorf("requests sent for an invalid form: %q", extra)
			}
			if v := uiGet[string](t, vm.AddName); v != tc.pname {
				t.Errorf("form cleared after a refusal: name %q", v)
			}
		})
	}
}

func TestPluginsVM(t *testing.T) {
	ctx := context.Background()
	f, c := uiKernel(t)
	vm := NewPluginsVM(c)
	if err := vm.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := uiGet[[]client.Plugin](t, vm.Plugins); len(got) != 0 {
		t.Fatalf("plugins at start: %+v", got)
	}

	// Add an MCP server by command line and a native plugin by directory.
	_ = vm.AddName.Set("everything")
	_ = vm.AddCommand.Set(`npx -y '@modelcontextprotocol/server-everything'`)
	p, err := vm.Add(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"npx", "-y", "@modelcontextprotocol/server-everything"}
	if p.Kind != "mcp" || !slices.Equal(p.Command, want) {
		t.Errorf("added %+v", p)
	}
	if s := uiGet[string](t, vm.Status); s != "Added everything (running)." {
		t.Errorf("status = %q", s)
	}
	for _, b := range []string{uiGet[string](t, vm.AddName), uiGet[string](t, vm.AddCommand)} {
		if b != "" {
			t.Errorf("form not cleared: %q", b)
		}
	}
	_ = vm.AddName.Set("notes")
	_ = vm.AddDir.Set("/usr/lib/hologram/plugins/notes/")
	if p, err := vm.Add(ctx); err != nil || p.Kind != "native" || p.Dir != "/usr/lib/hologram/plugins/notes" {
		t.Fatalf("add dir: %+v, %v", p, err)
	}
	if got := uiGet[[]client.Plugin](t, vm.Plugins); len(got) != 2 || got[0].Name != "everything" || got[1].Name != "notes" {
		t.Fatalf("list = %+v", got)
	}

	// Actions, each followed by the kernel's new state.
	for _, tc := range []struct {
		action, status, state string
		restarts, tools       int
	}{
		{client.PluginDisable, "Disabled notes.", "disabled", 0, 0},
		{client.PluginEnable, "Enabled notes.", "running", 0, 1},
		{client.PluginRestart, "Restarted notes.", "running", 1, 1},
	} {
		if err := vm.Act(ctx, "notes", tc.action); err != nil {
			t.Fatalf("%s: %v", tc.action, err)
		}
		p, ok := vm.Plugin("notes")
		if !ok || p.State != tc.state || p.Restarts != tc.restarts || len(p.Tools) != tc.tools {
			t.Errorf("after %s: %+v", tc.action, p)
		}
		if s := uiGet[string](t, vm.Status); s != tc.status || uiGet[bool](t, vm.Failed) {
			t.Errorf("after %s: status %q", tc.action, s)
		}
	}

	// Logs: the last 200 lines, in order.
	var lines []string
	for i := range 250 {
		lines = append(lines, fmt.Sprintf("line %03d", i))
	}
	f.AddPluginLogs("notes", lines...)
	logs, err := vm.Logs(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != pluginLogLines || logs[0].Line != "line 050" || logs[199].Line != "line 249" {
		t.Errorf("logs: %d lines, first %+v", len(logs), logs[0])
	}
	text := formatLogLines(logs[:2])
	want0 := logs[0].Time.Local().Format("2006-01-02 15:04:05") + "  line 050\n"
	if !strings.HasPrefix(text, want0) || !strings.HasSuffix(text, "  line 051") {
		t.Errorf("formatted logs = %q", text)
	}

	// Remove, then act on what is gone: the kernel's error is shown.
	if err := vm.Act(ctx, "notes", client.PluginRemove); err != nil {
		t.Fatal(err)
	}
	if _, ok := vm.Plugin("notes"); ok {
		t.Error("notes still listed after remove")
	}
	err = vm.Act(ctx, "notes", client.PluginRestart)
	if !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("restart of a removed plugin: %v", err)
	}
	if s := uiGet[string](t, vm.Status); !strings.HasPrefix(s, "Could not restart notes: ") || !uiGet[bool](t, vm.Failed) {
		t.Errorf("status = %q", s)
	}
	if _, err := vm.Logs(ctx, "notes"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("logs of a removed plugin: %v", err)
	}
	if err := vm.Act(ctx, "everything", "explode"); err == nil {
		t.Error("unknown action accepted")
	}
}

func TestPluginText(t *testing.T) {
	for _, tc := range []struct {
		p    client.Plugin
		want string
	}{
		{client.Plugin{Command: []string{"npx", "-y", "pkg"}}, "npx -y pkg"},
		{client.Plugin{Command: []string{"/opt/my tools/srv", "", "it's"}}, `"/opt/my tools/srv" "" "it's"`},
		{client.Plugin{Dir: "/usr/lib/hologram/plugins/notes"}, "/usr/lib/hologram/plugins/notes"},
	} {
		if got := pluginWhere(tc.p); got != tc.want {
			t.Errorf("pluginWhere(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
	for state, want := range map[string]string{"running": "running", "backoff": "waiting to restart",
		"tripped": "stopped after repeated failures", "failed": "failed: never answered", "weird": "weird"} {
		if got := pluginStateText(state); got != want {
			t.Errorf("pluginStateText(%q) = %q, want %q", state, got, want)
		}
	}
}

// pluginsWindow shows the plugins view over svc in a test window once its first refresh is done.
func pluginsWindow(t *testing.T, svc client.Service) (*PluginsVM, fyne.Window) {
	t.Helper()
	test.NewTempApp(t)
	vm := NewPluginsVM(svc)
	w := test.NewTempWindow(t, nil)
	view := NewPluginsView(vm, w)
	vm.Wait()
	w.SetContent(view)
	w.Resize(fyne.NewSize(800, 700))
	return vm, w
}

func TestPluginsView(t *testing.T) {
	f, c := uiKernel(t)
	ctx := context.Background()
	if _, err := c.AddPlugin(ctx, client.PluginConfig{Name: "everything", Command: []string{"npx", "-y", "@modelcontextprotocol/server-everything"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddPlugin(ctx, client.PluginConfig{Name: "notes", Dir: "/usr/lib/hologram/plugins/notes", Disabled: true}); err != nil {
		t.Fatal(err)
	}
	f.AddPluginLogs("everything", "starting server", "listening on stdio")
	vm, w := pluginsWindow(t, c)
	test.AssertRendersToMarkup(t, "plugins.xml", w.Canvas())

	// Enable the disabled one: its card now offers Disable twice (one per running plugin).
	test.Tap(uiButton(t, w, "Enable"))
	vm.Wait()
	if p, _ := vm.Plugin("notes"); p.State != "running" {
		t.Errorf("notes after Enable: %+v", p)
	}
	if n := len(uiButtons(w, "Disable")); n != 2 {
		t.Errorf("%d Disable buttons, want 2", n)
	}

	// Logs open in a dialog.
	test.Tap(uiButtons(w, "Logs")[0])
	vm.Wait()
	if !uiHasText(w, "starting server") || !uiHasText(w, "listening on stdio") {
		t.Errorf("log lines not shown: %q", uiTexts(w))
	}
	test.Tap(uiButton(t, w, "Close"))

	// Remove asks first; Cancel keeps the plugin, Remove in the dialog removes it.
	test.Tap(uiButtons(w, "Remove")[0])
	if !uiHasText(w, "Remove everything? It is stopped and forgotten") {
		t.Fatalf("no confirmation: %q", uiTexts(w))
	}
	test.Tap(uiButton(t, w, "Cancel"))
	vm.Wait()
	if _, ok := vm.Plugin("everything"); !ok {
		t.Fatal("removed without confirmation")
	}
	test.Tap(uiButtons(w, "Remove")[0])
	test.Tap(uiButton(t, w, "Remove")) // the dialog's, topmost
	vm.Wait()
	if _, ok := vm.Plugin("everything"); ok {
		t.Error("everything still listed after a confirmed remove")
	}
	if !uiHasText(w, "Removed everything.") {
		t.Errorf("no status: %q", uiTexts(w))
	}

	// Add through the form, typed.
	test.Type(uiEntry(t, w, "everything"), "fs")
	test.Type(uiEntry(t, w, "npx -y @modelcontextprotocol/server-everything"), "npx -y @modelcontextprotocol/server-filesystem /tmp")
	test.Tap(uiButton(t, w, "Add plugin"))
	vm.Wait()
	p, ok := vm.Plugin("fs")
	if !ok || !slices.Equal(p.Command, []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"}) {
		t.Errorf("fs = %+v (%v)", p, ok)
	}
}

func TestPluginsViewEmpty(t *testing.T) {
	_, c := uiKernel(t)
	_, w := pluginsWindow(t, c)
	if !uiHasText(w, "No plugins yet.") {
		t.Errorf("labels %q", uiTexts(w))
	}
}
