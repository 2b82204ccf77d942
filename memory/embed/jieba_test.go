package embed

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testLogger logs to the test's output.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// withResolvePlaces points the fixed places of ResolveJiebaDir (system dir, working
// directory) at test directories for the duration of t. Tests using it must not be parallel.
func withResolvePlaces(t *testing.T, system, wd string) {
	t.Helper()
	oldSystem, oldGetwd := systemJiebaDir, getwd
	systemJiebaDir = system
	getwd = func() (string, error) { return wd, nil }
	t.Cleanup(func() { systemJiebaDir, getwd = oldSystem, oldGetwd })
}

// makeDictDir creates dir with the dictionary files named (all five if none).
func makeDictDir(t *testing.T, dir string, files ...string) string {
	t.Helper()
	if len(files) == 0 {
		files = JiebaDictFiles[:]
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x 1 n\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolveJiebaDir(t *testing.T) {
	const ourGoMod = "module github.com/hologramagent/hologram\n\ngo 1.26\n"
	modcacheDict := func(modcache string) string {
		return filepath.Join(modcache, "github.com/yanyiwu/gojieba@"+GojiebaVersion, "deps/cppjieba/dict")
	}
	// Each setup builds places under root and returns the arguments; want is relative to root.
	type args struct {
		configured string
		env        map[string]string
		exe        string
	}
	tests := []struct {
		name    string
		setup   func(t *testing.T, root string) args
		want    string
		wantErr []string // substrings of the error; the error must wrap ErrJiebaDictNotFound
	}{
		{name: "configured wins over env", want: "conf",
			setup: func(t *testing.T, root string) args {
				makeDictDir(t, root+"/conf")
				makeDictDir(t, root+"/env")
				return args{configured: root + "/conf", env: map[string]string{JiebaDirEnv: root + "/env"}}
			}},
		{name: "configured without a file is an error, no fallback",
			wantErr: []string{"configured", "/conf: missing idf.utf8", JiebaDirEnv, "make jieba-dict"},
			setup: func(t *testing.T, root string) args {
				makeDictDir(t, root+"/conf", "jieba.dict.utf8", "hmm_model.utf8", "user.dict.utf8", "stop_words.utf8")
				makeDictDir(t, root+"/env")
				makeDictDir(t, root+"/system")
				return args{configured: root + "/conf", env: map[string]string{JiebaDirEnv: root + "/env"}}
			}},
		{name: "env wins over system", want: "env",
			setup: func(t *testing.T, root string) args {
				makeDictDir(t, root+"/env")
				makeDictDir(t, root+"/system")
				return args{env: map[string]string{JiebaDirEnv: root + "/env"}}
			}},
		{name: "env that does not exist is an error",
			wantErr: []string{"$" + JiebaDirEnv + " " + "ROOT/nope: does not exist"},
			setup: func(t *testing.T, root string) args {
				makeDictDir(t, root+"/system")
				return args{env: map[string]string{JiebaDirEnv: root + "/nope"}}
			}},
		{name: "system wins over the executable's dir", want: "system",
			setup: func(t *testing.T, root string) args {
				makeDictDir(t, root+"/system")
				makeDictDir(t, root+"/bin/jieba")
				return args{exe: root + "/bin/homed"}
			}},
		{name: "next to the executable", want: "bin/jieba",
			setup: func(t *testing.T, root string) args {
				makeDictDir(t, root+"/bin/jieba")
				makeDictDir(t, root+"/lib/hologram/jieba")
				return args{exe: root + "/bin/homed"}
			}},
		{name: "executable's ../lib/hologram/jieba", want: "lib/hologram/jieba",
			setup: func(t *testing.T, root string) args {
				makeDictDir(t, root+"/lib/hologram/jieba")
				makeDictDir(t, root+"/modcache/"+modcacheDict(""))
				return args{exe: root + "/bin/homed", env: map[string]string{"GOMODCACHE": root + "/modcache"}}
			}},
		{name: "checkout build/jieba found upward from the executable", want: "src/build/jieba",
			setup: func(t *testing.T, root string) args {
				writeFile(t, root+"/src/go.mod", ourGoMod)
				makeDictDir(t, root+"/src/build/jieba")
				makeDictDir(t, root+"/modcache/"+modcacheDict(""))
				return args{exe: root + "/src/bin/homed", env: map[string]string{"GOMODCACHE": root + "/modcache"}}
			}},
		{name: "checkout build/jieba found upward from the working directory", want: "wd/build/jieba",
			setup: func(t *testing.T, root string) args {
				writeFile(t, root+"/wd/go.mod", ourGoMod)
				makeDictDir(t, root+"/wd/build/jieba")
				return args{exe: root + "/tmp/embed.test"}
			}},
		{name: "another module's build/jieba does not count", want: "modcache/" + modcacheDict(""),
			setup: func(t *testing.T, root string) args {
				writeFile(t, root+"/other/go.mod", "module example.com/other\n")
				makeDictDir(t, root+"/other/build/jieba")
				makeDictDir(t, root+"/modcache/"+modcacheDict(""))
				return args{exe: root + "/other/bin/x", env: map[string]string{"GOMODCACHE": root + "/modcache"}}
			}},
		{name: "GOMODCACHE wins over GOPATH", want: "modcache/" + modcacheDict(""),
			setup: func(t *testing.T, root string) args {
				makeDictDir(t, root+"/modcache/"+modcacheDict(""))
				makeDictDir(t, root+"/gopath/pkg/mod/"+modcacheDict(""))
				return args{env: map[string]string{"GOMODCACHE": root + "/modcache", "GOPATH": root + "/gopath"}}
			}},
		{name: "first GOPATH entry", want: "gp1/pkg/mod/" + modcacheDict(""),
			setup: func(t *testing.T, root string) args {
				makeDictDir(t, root+"/gp1/pkg/mod/"+modcacheDict(""))
				return args{env: map[string]string{"GOPATH": root + "/gp1" + string(filepath.ListSeparator) + root + "/gp2", "HOME": root + "/home"}}
			}},
		{name: "HOME/go/pkg/mod", want: "home/go/pkg/mod/" + modcacheDict(""),
			setup: func(t *testing.T, root string) args {
				makeDictDir(t, root+"/home/go/pkg/mod/"+modcacheDict(""))
				return args{env: map[string]string{"HOME": root + "/home"}}
			}},
		{name: "nothing found lists every place",
			wantErr: []string{
				"system ROOT/system: does not exist",
				"next to the executable ROOT/bin/jieba: missing jieba.dict.utf8, hmm_model.utf8, user.dict.utf8, idf.utf8, stop_words.utf8",
				"next to the executable ROOT/lib/hologram/jieba: does not exist",
				"checkout (make jieba-dict) ROOT/wd/build/jieba: does not exist",
				"Go module cache ROOT/home/go/pkg/mod/github.com/yanyiwu/gojieba@v1.4.6/deps/cppjieba/dict: does not exist",
				"set " + JiebaDirEnv, "make jieba-dict",
			},
			setup: func(t *testing.T, root string) args {
				writeFile(t, root+"/wd/go.mod", ourGoMod)
				if err := os.MkdirAll(root+"/bin/jieba", 0o755); err != nil {
					t.Fatal(err)
				}
				return args{exe: root + "/bin/homed", env: map[string]string{"HOME": root + "/home"}}
			}},
		{name: "no places at all",
			wantErr: []string{"$GOMODCACHE, $GOPATH and $HOME unset"},
			setup:   func(t *testing.T, root string) args { return args{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			withResolvePlaces(t, root+"/system", root+"/wd")
			a := tt.setup(t, root)
			got, err := ResolveJiebaDir(a.configured, func(k string) string { return a.env[k] }, a.exe)
			assertResolved(t, "ResolveJiebaDir", root, got, err, ErrJiebaDictNotFound, tt.wantErr, tt.want)
		})
	}
}

func TestResolveJiebaDirNilGetenv(t *testing.T) {
	root := t.TempDir()
	withResolvePlaces(t, makeDictDir(t, root+"/system"), root)
	if got, err := ResolveJiebaDir("", nil, ""); err != nil || got != root+"/system" {
		t.Fatalf("ResolveJiebaDir = %q, %v", got, err)
	}
}

// TestGojiebaVersionMatchesGoMod keeps the module cache path of ResolveJiebaDir and the
// Makefile's jieba-dict target in step with go.mod.
func TestGojiebaVersionMatchesGoMod(t *testing.T) {
	for _, file := range []string{"../../go.mod", "../../Makefile"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(`github\.com/yanyiwu/gojieba[ @]` + regexp.QuoteMeta(GojiebaVersion) + `\b`)
		if file == "../../Makefile" {
			re = regexp.MustCompile(`(?m)^JIEBA_VERSION\s*:?=\s*` + regexp.QuoteMeta(GojiebaVersion) + `$`)
		}
		if !re.Match(data) {
			t.Errorf("%s does not pin gojieba %s (matching %s)", file, GojiebaVersion, re)
		}
	}
}

// assertResolved checks what a resolver (ResolveJiebaDir, ResolveORTLibrary) returned for one
// case: with wantErr, an error wrapping notFound that mentions each of wantErr (root written as
// ROOT); otherwise root/want.
func assertResolved(t *testing.T, what, root, got string, err, notFound error, wantErr []string, want string) {
	t.Helper()
	if wantErr != nil {
		if !errors.Is(err, notFound) {
			t.Fatalf("%s = %q, %v; want %v", what, got, err, notFound)
		}
		msg := strings.ReplaceAll(err.Error(), root, "ROOT")
		for _, w := range wantErr {
			if !strings.Contains(msg, w) {
				t.Errorf("error lacks %q:\n%s", w, msg)
			}
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if w := filepath.Join(root, want); got != w {
		t.Errorf("%s = %q, want %q", what, got, w)
	}
}
