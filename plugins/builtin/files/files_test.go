package main

import (
	"context"
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugconf"
	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
	"github.com/hologramagent/hologram/plugins/sdk/sdktest"
)

func TestManifest(t *testing.T) {
	f := &files{roots: []*root{{path: "/x"}}}
	plugintest.CheckManifest(t, f.plugin())
}

func TestLoadConfig(t *testing.T) {
	home := t.TempDir()
	data, conf := filepath.Join(home, "data"), filepath.Join(home, "conf")
	write := func(t *testing.T, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(conf, "plugins"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(conf, "plugins", "files.toml"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e := plugintest.Env(map[string]string{"HOME": home, plugconf.EnvDataDir: data, plugconf.EnvConfigDir: conf})

	t.Run("default root is created 0700", func(t *testing.T) {
		c, err := loadConfig(e)
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(data, "files")
		if len(c.Roots) != 1 || c.Roots[0] != want || c.MaxReadBytes != defaultMaxRead || c.MaxWriteBytes != defaultMaxWrite {
			t.Fatalf("config %+v", c)
		}
		fi, err := os.Stat(want)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("default root: %v %v", fi, err)
		}
	})
	t.Run("XDG without the kernel's variables", func(t *testing.T) {
		c, err := loadConfig(plugintest.Env(map[string]string{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "xdg")}))
		if err != nil || c.Roots[0] != filepath.Join(home, "xdg", "hologram", "files") {
			t.Fatalf("config %+v %v", c, err)
		}
	})

	for _, tt := range []struct{ name, body, want string }{
		{"unknown key", `rots = ["/tmp"]`, `unknown key "rots"`},
		{"bad toml", `roots = [`, "files.toml"},
		{"max read too large", `max_read_bytes = 999999999`, "max_read_bytes must be from 1 to"},
		{"negative max write", `max_write_bytes = -1`, "max_write_bytes must be from 1 to"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			write(t, tt.body)
			_, err := loadConfig(e)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	if err := os.Remove(filepath.Join(conf, "plugins", "files.toml")); err != nil {
		t.Fatal(err)
	}
	if _, err := loadConfig(plugintest.Env(map[string]string{})); err == nil || !strings.Contains(err.Error(), "HOLOGRAM_DATA_DIR") {
		t.Fatalf("no HOME: %v", err)
	}
}

func TestRootsRefused(t *testing.T) {
	home := t.TempDir()
	docs := filepath.Join(home, "docs")
	if err := os.Mkdir(docs, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(home, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "homelink")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ root, want string }{
		{"/", "whole file system"},
		{home, "is your home directory"},
		{"~", "is your home directory"},
		{link, "is your home directory"},
		{filepath.Dir(home), "holds your home directory"},
		{"relative/dir", "must be an absolute path"},
		{filepath.Join(home, "missing"), "no such file"},
		{file, "not a directory"},
	} {
		t.Run(tt.root, func(t *testing.T) {
			_, err := newFiles(Config{Roots: []string{tt.root}, home: home, MaxReadBytes: 1, MaxWriteBytes: 1})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("root %s: err %v, want %q", tt.root, err, tt.want)
			}
		})
	}
	f, err := newFiles(Config{Roots: []string{"~/docs"}, home: home, MaxReadBytes: 1, MaxWriteBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.roots[0].path != docs {
		t.Fatalf("~/docs resolved to %s", f.roots[0].path)
	}
}

// setup returns a plugin over a fresh root (plus outside, a directory beside it) served in
// memory.
func setup(t *testing.T, maxRead int64) (*sdktest.Kernel, string, string) {
	t.Helper()
	base := t.TempDir()
	rootDir, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{rootDir, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	f, err := newFiles(Config{Roots: []string{rootDir}, home: filepath.Join(base, "home"), MaxReadBytes: maxRead, MaxWriteBytes: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return sdktest.Start(t, f.plugin(), sdktest.Options{Plugin: "files"}), rootDir, outside
}

// call runs a tool and returns its text or its error's text.
func call(t *testing.T, k *sdktest.Kernel, tool, args string) (string, error) {
	t.Helper()
	return k.ToolText(context.Background(), tool, args, "")
}

func TestReadWriteListSearch(t *testing.T) {
	k, root, _ := setup(t, 1<<20)
	steps := []struct {
		tool, args string
		want       []string // substrings of the result
		wantErr    string
	}{
		{"files_write", plugintest.Args("path", "notes/todo.md", "content", "# Todo\nbuy milk\n买牛奶\n"), []string{"wrote 26 bytes to " + filepath.Join(root, "notes", "todo.md")}, ""},
		{"files_write", plugintest.Args("path", "notes/todo.md", "content", "call mum\n", "mode", "append"), []string{"appended 9 bytes"}, ""},
		{"files_write", plugintest.Args("path", "notes/todo.md", "content", "x", "mode", "create"), nil, "exists (mode create)"},
		{"files_read", plugintest.Args("path", "notes/todo.md"), []string{"# Todo\nbuy milk\n买牛奶\ncall mum\n"}, ""},
		{"files_read", plugintest.Args("path", filepath.Join(root, "notes", "todo.md"), "offset", 7, "length", 8), []string{"buy milk", "[bytes 7 to 15 of 35"}, ""},
		{"files_write", plugintest.Args("path", "bin.dat", "content", base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 255}), "encoding", "base64"), []string{"wrote 4 bytes"}, ""},
		{"files_read", plugintest.Args("path", "bin.dat"), nil, "not UTF-8 text"},
		{"files_read", plugintest.Args("path", "bin.dat", "encoding", "base64"), []string{"AAEC/w=="}, ""},
		{"files_list", plugintest.Args(), []string{root + ":", "f           4", "bin.dat", "d           -", "notes/"}, ""},
		{"files_list", plugintest.Args("recursive", true), []string{filepath.Join("notes", "todo.md")}, ""},
		{"files_list", plugintest.Args("path", "notes/todo.md"), []string{"f          35"}, ""},
		{"files_search", plugintest.Args("query", "TODO"), []string{filepath.Join(root, "notes", "todo.md") + " (name)", "todo.md:1: # Todo"}, ""},
		{"files_search", plugintest.Args("query", "牛奶"), []string{"todo.md:3: 买牛奶"}, ""},
		{"files_search", plugintest.Args("query", "milk", "content", false), []string{`no file name or line contains "milk"`}, ""},
		{"files_search", plugintest.Args("query", "zzz"), []string{"no file name or line"}, ""},
		{"files_read", plugintest.Args("path", "notes"), nil, "is a directory: use files_list"},
		{"files_read", plugintest.Args("path", "missing.txt"), nil, "no such file or directory"},
		{"files_read", plugintest.Args("path", "notes/todo.md", "offset", 99), nil, "past the end"},
		{"files_read", plugintest.Args("path", "x", "encoding", "utf16"), nil, `encoding must be "text" or "base64"`},
		{"files_read", plugintest.Args("path", ""), nil, "path is required"},
		{"files_read", `{"path":"x","bogus":1}`, nil, `unknown field "bogus"`},
		{"files_write", plugintest.Args("path", "x", "content", "y", "mode", "truncate"), nil, `mode must be "write", "create" or "append"`},
		{"files_write", plugintest.Args("path", ".", "content", "y"), nil, "is the root directory"},
		{"files_write", plugintest.Args("path", "big", "content", strings.Repeat("a", 1<<16+1)), nil, "more than the 65536 one write takes"},
		{"files_search", plugintest.Args("query", " "), nil, "query is required"},
		{"files_search", plugintest.Args("query", "a", "max_results", 501), nil, "max_results must be from 1 to 500"},
		{"files_search", plugintest.Args("query", "a", "path", "notes/todo.md"), nil, "is not a directory"},
	}
	for i, s := range steps {
		got, err := call(t, k, s.tool, s.args)
		if s.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), s.wantErr) {
				t.Fatalf("step %d %s %s: %q, %v; want error %q", i, s.tool, s.args, got, err, s.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d %s %s: %v", i, s.tool, s.args, err)
		}
		for _, w := range s.want {
			if !strings.Contains(got, w) {
				t.Fatalf("step %d %s %s: %q lacks %q", i, s.tool, s.args, got, w)
			}
		}
	}
	raw, err := os.ReadFile(filepath.Join(root, "notes", "todo.md"))
	if err != nil || string(raw) != "# Todo\nbuy milk\n买牛奶\ncall mum\n" {
		t.Fatalf("file on disk %q %v", raw, err)
	}
	if fi, err := os.Stat(filepath.Join(root, "notes")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("created folder %v %v", fi, err)
	}
}

func TestRefusals(t *testing.T) {
	k, root, outside := setup(t, 1024)
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("the secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(secret, filepath.Join(root, "escape")))      // absolute, outside
	must(os.Symlink("../outside", filepath.Join(root, "updir"))) // relative, outside
	must(os.WriteFile(filepath.Join(root, "inside.txt"), []byte("in"), 0o600))
	must(os.Symlink("inside.txt", filepath.Join(root, "good")))                     // relative, inside: allowed
	must(os.Symlink(filepath.Join(root, "inside.txt"), filepath.Join(root, "abs"))) // absolute: os.Root refuses
	must(syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600))
	l, err := net.Listen("unix", filepath.Join(root, "sock"))
	must(err)
	defer l.Close()
	must(os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("x", 2000)), 0o600))

	for _, tt := range []struct{ name, tool, args, want string }{
		{"traversal", "files_read", plugintest.Args("path", "../outside/secret.txt"), `climbs out of the root`},
		{"traversal hidden in the middle", "files_read", plugintest.Args("path", "a/../../outside/secret.txt"), `climbs out of the root`},
		{"absolute outside", "files_read", plugintest.Args("path", secret), "is outside the roots"},
		{"absolute with dots", "files_read", plugintest.Args("path", root+"/../outside/secret.txt"), "is outside the roots"},
		{"symlink escape", "files_read", plugintest.Args("path", "escape"), "a symbolic link leads out of the root"},
		{"symlink escape via a folder", "files_read", plugintest.Args("path", "updir/secret.txt"), "a symbolic link leads out of the root"},
		{"absolute symlink inside", "files_read", plugintest.Args("path", "abs"), "a symbolic link leads out of the root"},
		{"write through an escaping link", "files_write", plugintest.Args("path", "escape", "content", "pwned"), "a symbolic link leads out of the root"},
		{"write below an escaping folder", "files_write", plugintest.Args("path", "updir/new.txt", "content", "pwned"), "a symbolic link leads out of the root"},
		{"list an escaping folder", "files_list", plugintest.Args("path", "updir"), "a symbolic link leads out of the root"},
		{"named pipe", "files_read", plugintest.Args("path", "fifo"), "is a named pipe, not a regular file"},
		{"write to a pipe", "files_write", plugintest.Args("path", "fifo", "content", "x"), "is a named pipe, not a regular file"},
		{"socket", "files_read", plugintest.Args("path", "sock"), "is a socket, not a regular file"},
		{"oversize", "files_read", plugintest.Args("path", "big.txt"), "has 2000 bytes, more than the 1024 one read returns"},
		{"oversize length", "files_read", plugintest.Args("path", "big.txt", "length", 1025), "more than the 1024 bytes one read returns"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := call(t, k, tt.tool, tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("%q, %v; want error %q", got, err, tt.want)
			}
			if strings.Contains(got, "the secret") {
				t.Fatal("the secret leaked")
			}
		})
	}
	if raw, _ := os.ReadFile(secret); string(raw) != "the secret" {
		t.Fatalf("the file outside was changed: %q", raw)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Fatal("a file was created outside the root")
	}
	// A range of an oversize file, and a link that stays inside, are fine.
	if got, err := call(t, k, "files_read", plugintest.Args("path", "big.txt", "offset", 1990)); err != nil || got != strings.Repeat("x", 10)+"\n[bytes 1990 to 2000 of 2000 in "+filepath.Join(root, "big.txt")+"]" {
		t.Fatalf("range: %q %v", got, err)
	}
	if got, err := call(t, k, "files_read", plugintest.Args("path", "good")); err != nil || got != "in" {
		t.Fatalf("inner link: %q %v", got, err)
	}
	// The listing shows what the special files are, and search skips them without blocking.
	got, err := call(t, k, "files_list", plugintest.Args())
	if err != nil || !strings.Contains(got, "fifo (a named pipe)") || !strings.Contains(got, "sock (a socket)") {
		t.Fatalf("list: %q %v", got, err)
	}
	if got, err := call(t, k, "files_search", plugintest.Args("query", "secret")); err != nil || strings.Contains(got, "the secret") {
		t.Fatalf("search: %q %v", got, err)
	}
}

// TestDeviceFiles uses /dev as a root: its files are devices, refused for reading and writing.
func TestDeviceFiles(t *testing.T) {
	f, err := newFiles(Config{Roots: []string{"/dev"}, home: t.TempDir(), MaxReadBytes: 1 << 20, MaxWriteBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k := sdktest.Start(t, f.plugin(), sdktest.Options{Plugin: "files"})
	for _, tt := range []struct{ tool, args, want string }{
		{"files_read", plugintest.Args("path", "zero"), "/dev/zero is a character device, not a regular file"},
		{"files_read", plugintest.Args("path", "/dev/null"), "/dev/null is a character device, not a regular file"},
		{"files_write", plugintest.Args("path", "null", "content", "x"), "/dev/null is a character device, not a regular file"},
	} {
		if got, err := call(t, k, tt.tool, tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Fatalf("%s %s: %q %v, want %q", tt.tool, tt.args, got, err, tt.want)
		}
	}
}

func TestReadOnly(t *testing.T) {
	f, err := newFiles(Config{Roots: []string{t.TempDir()}, home: t.TempDir(), MaxReadBytes: 1, MaxWriteBytes: 1, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k := sdktest.Start(t, f.plugin(), sdktest.Options{Plugin: "files"})
	for _, tool := range k.Tools {
		if tool.Name == "files_write" {
			t.Fatal("files_write offered although read_only")
		}
	}
	if len(k.Tools) != 3 {
		t.Fatalf("tools %+v", k.Tools)
	}
}
