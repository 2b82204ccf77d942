package archtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

const mod = "github.com/hologramagent/hologram/"

// pkg is what `go list -deps -json` says of one package.
type pkg struct {
	ImportPath string
	Name       string
	Standard   bool
	DepOnly    bool
	Deps       []string // every package it links, transitively
	Imports    []string
}

// listed is the packages of the module and what they link, for one set of build tags.
type listed map[string]*pkg

var (
	listMu sync.Mutex
	lists  = map[string]listed{}
)

// goTool finds the go command on PATH (as `make test` runs it), else in GOROOT (empty under
// -trimpath); never at a fixed path.
func goTool(t *testing.T) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if r := runtime.GOROOT(); r != "" {
		return filepath.Join(r, "bin", "go")
	}
	t.Fatal("no go command on PATH and no GOROOT")
	return ""
}

// list runs `go list -deps -json` over the whole module with tags, once per set of tags.
func list(t *testing.T, tags string) listed {
	t.Helper()
	listMu.Lock()
	defer listMu.Unlock()
	if l, ok := lists[tags]; ok {
		return l
	}
	cmd := exec.Command(goTool(t), "list", "-deps", "-e", "-tags="+tags, "-json=ImportPath,Name,Standard,DepOnly,Deps,Imports", mod+"...")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	l := listed{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		l[p.ImportPath] = &p
	}
	if len(l) < 200 {
		t.Fatalf("go list listed %d packages: too few to be the module and its dependencies", len(l))
	}
	lists[tags] = l
	return l
}

// under reports whether path is prefix itself or a package below it ("fyne.io/" matches any
// package of that host).
func under(path, prefix string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(path, prefix)
	}
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

func underAny(path string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return under(path, p) })
}

// rule is one line of ARCHITECTURE.md §2: the packages of roots (module paths below mod; the
// main packages only when mains is set), built with tags, link nothing forbidden; when ours or
// others is set, every package of the module (ours) or outside it and the standard library
// (others) they link is under one of those; require lists packages they must link (the rule
// reads real output); direct checks only the packages they import themselves.
type rule struct {
	name    string
	roots   []string
	tags    string
	mains   bool
	direct  bool
	forbid  []string
	ours    []string // nil: no check
	others  []string // nil: no check; empty non-nil: none allowed
	require []string
}

func TestDependencyRules(t *testing.T) {
	const fts, nokernel = "sqlite_fts5", "sqlite_fts5,nokernel"
	none := []string{}
	heavy := []string{"github.com/mattn/go-sqlite3", "github.com/yanyiwu/gojieba", "github.com/yalue/onnxruntime_go"}
	rules := []rule{
		{name: "the kernel never reaches up to the GUI or the commands",
			roots: []string{"kernel"}, tags: fts, forbid: []string{mod + "gui", mod + "cmd", "fyne.io/"},
			require: []string{mod + "memory/sqlite", mod + "plugins/host"}},
		{name: "memory never imports the kernel, the GUI or the commands",
			roots: []string{"memory"}, tags: fts, forbid: []string{mod + "kernel", mod + "gui", mod + "cmd", mod + "plugins", "fyne.io/"},
			require: []string{"github.com/mattn/go-sqlite3"}},
		{name: "plugins never import the kernel, memory, the GUI or the commands",
			roots: []string{"plugins"}, tags: fts, forbid: []string{mod + "kernel", mod + "memory", mod + "gui", mod + "cmd", "fyne.io/"},
			require: []string{mod + "plugins/protocol"}},
		{name: "plugins/protocol: the standard library only",
			roots: []string{"plugins/protocol"}, ours: []string{mod + "plugins/protocol"}, others: none},
		{name: "plugins/sdk: the standard library and golang.org/x/sys",
			roots: []string{"plugins/sdk"}, ours: []string{mod + "plugins/sdk", mod + "plugins/protocol", mod + "plugins/shm"},
			others: []string{"golang.org/x/sys"}, require: []string{mod + "plugins/protocol"}},
		{name: "plugins/shm: the standard library and golang.org/x/sys",
			roots: []string{"plugins/shm"}, ours: []string{mod + "plugins/shm"}, others: []string{"golang.org/x/sys"},
			require: []string{"golang.org/x/sys/unix"}},
		{name: "built-in plugin binaries link no kernel, memory or test code",
			roots: []string{"plugins/builtin"}, tags: fts, mains: true,
			forbid: []string{mod + "kernel", mod + "memory", "testing", mod + "plugins/builtin/internal/plugintest",
				mod + "plugins/builtin/internal/clock/clocktest", mod + "plugins/builtin/internal/sandbox/sandboxtest"},
			require: []string{mod + "plugins/sdk"}},
		{name: "starmap: the standard library and golang.org/x/image",
			roots: []string{"starmap"}, ours: []string{mod + "starmap"}, others: []string{"golang.org/x/image", "golang.org/x/text"}},
		{name: "the GUI imports only kernel/client and starmap of ours",
			roots: []string{"gui"}, tags: fts, ours: []string{mod + "gui", mod + "kernel/client", mod + "starmap"},
			require: []string{"fyne.io/fyne/v2", mod + "kernel/client"}},
		{name: "memory/graph: memory and the standard library only, no cgo",
			roots: []string{"memory/graph"}, tags: fts, ours: []string{mod + "memory"}, others: none, forbid: []string{"runtime/cgo"}},
		{name: "memory/backup: memory and the standard library only",
			roots: []string{"memory/backup"}, tags: fts, ours: []string{mod + "memory"}, others: none},
		{name: "waiter links no SQLite, jieba, ONNX or Fyne, and of the kernel only kernel/client",
			roots: []string{"cmd/waiter"}, tags: fts, mains: true, forbid: append([]string{"fyne.io/", mod + "memory"}, heavy...),
			ours: []string{mod + "cmd/waiter", mod + "kernel/client", mod + "plugins/protocol"}, require: []string{mod + "kernel/client"}},
		{name: "the desktop client (-tags nokernel) links no SQLite, jieba or ONNX, and of the kernel only client and config",
			roots: []string{"cmd/hologram"}, tags: nokernel, mains: true, forbid: append([]string{mod + "memory"}, heavy...),
			ours:    []string{mod + "cmd/hologram", mod + "gui", mod + "kernel/client", mod + "kernel/config", mod + "starmap"},
			require: []string{"fyne.io/fyne/v2", mod + "gui"}},
		{name: "the desktop app embeds the kernel",
			roots: []string{"cmd/hologram"}, tags: fts, mains: true, require: []string{mod + "kernel", "github.com/mattn/go-sqlite3"}},
		// (homed links starmap: the web UI's star map is laid out by it, kernel/api starmap.go)
		{name: "homed links no Fyne, GL, X11, GUI, testing or test helpers",
			roots: []string{"cmd/homed"}, tags: fts, mains: true,
			forbid: []string{"fyne.io/", "github.com/go-gl/", "github.com/jezek/xgb", "github.com/BurntSushi/xgb", mod + "gui",
				"testing", mod + "memory/memtest", mod + "kernel/kerneltest", mod + "kernel/llm/llmtest"},
			require: []string{"github.com/mattn/go-sqlite3", mod + "kernel"}},
	}
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			for _, v := range check(t, r) {
				t.Error(v)
			}
		})
	}
}

// check returns what breaks rule r.
func check(t *testing.T, r rule) []string {
	t.Helper()
	l := list(t, r.tags)
	var roots []*pkg
	for path, p := range l {
		if p.DepOnly || !strings.HasPrefix(path, mod) || !underAny(path, prefixed(r.roots)) || r.mains && p.Name != "main" {
			continue
		}
		roots = append(roots, p)
	}
	if len(roots) == 0 {
		return []string{fmt.Sprintf("no package under %v", r.roots)}
	}
	var bad []string
	linked := map[string]bool{}
	for _, root := range roots {
		deps := root.Deps
		if r.direct {
			deps = root.Imports
		}
		for _, d := range deps {
			linked[d] = true
			dp := l[d]
			switch {
			case underAny(d, r.forbid):
				bad = append(bad, fmt.Sprintf("%s links %s", root.ImportPath, d))
			case dp != nil && dp.Standard:
			case strings.HasPrefix(d, mod):
				if r.ours != nil && !underAny(d, r.ours) {
					bad = append(bad, fmt.Sprintf("%s links %s (ours allowed: %v)", root.ImportPath, d, r.ours))
				}
			default:
				if r.others != nil && !underAny(d, r.others) {
					bad = append(bad, fmt.Sprintf("%s links %s (outside the standard library, allowed: %v)", root.ImportPath, d, r.others))
				}
			}
		}
	}
	for _, want := range r.require {
		if !linked[want] {
			bad = append(bad, fmt.Sprintf("%v does not link %s: the listing is not what the rule expects", r.roots, want))
		}
	}
	return bad
}

// prefixed turns module-relative roots into import paths.
func prefixed(roots []string) []string {
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = mod + r
	}
	return out
}

// TestRulesCatchALeak is the table's positive control: rules applied to packages that break
// them report it (waiter's to homed, which links SQLite; plugins/protocol's to plugins/sdk,
// which links golang.org/x/sys; the GUI's to the desktop app, which embeds the kernel).
func TestRulesCatchALeak(t *testing.T) {
	for _, tc := range []struct {
		r    rule
		want string
	}{
		{rule{roots: []string{"cmd/homed"}, tags: "sqlite_fts5", mains: true, forbid: []string{"github.com/mattn/go-sqlite3"}}, "links github.com/mattn/go-sqlite3"},
		{rule{roots: []string{"plugins/sdk"}, others: []string{}}, "links golang.org/x/sys"},
		{rule{roots: []string{"cmd/hologram"}, tags: "sqlite_fts5", ours: []string{mod + "gui", mod + "kernel/client", mod + "starmap"}}, "links " + mod + "kernel"},
		{rule{roots: []string{"starmap"}, require: []string{"fyne.io/fyne/v2"}}, "does not link fyne.io/fyne/v2"},
	} {
		bad := check(t, tc.r)
		if !slices.ContainsFunc(bad, func(b string) bool { return strings.Contains(b, tc.want) }) {
			t.Errorf("rule %+v: want a violation containing %q, got %q", tc.r, tc.want, bad)
		}
	}
	if under("github.com/hologramagent/hologram/kernelx", mod+"kernel") || !under(mod+"kernel/client", mod+"kernel") || !under("fyne.io/fyne/v2", "fyne.io/") {
		t.Error("under() matches the wrong packages")
	}
}
