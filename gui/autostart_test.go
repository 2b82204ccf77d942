package gui

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// uiEnv is a getenv over a map.
func uiEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestAutostartPath(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{"xdg", map[string]string{"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/a"}, "/x/cfg/autostart/hologram.desktop", false},
		{"home", map[string]string{"HOME": "/home/a"}, "/home/a/.config/autostart/hologram.desktop", false},
		{"relative xdg is ignored", map[string]string{"XDG_CONFIG_HOME": "cfg", "HOME": "/home/a"}, "/home/a/.config/autostart/hologram.desktop", false},
		{"nothing", map[string]string{}, "", true},
		{"relative home", map[string]string{"HOME": "home"}, "", true},
	} {
		got, err := autostartPath(uiEnv(tc.env))
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%s: autostartPath = %q, %v; want %q (error %v)", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

// desktopEntry parses a desktop entry's [Desktop Entry] group into its keys.
func desktopEntry(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string]string{}
	group := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			group = line
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s: malformed line %q", path, line)
			}
			if group != "[Desktop Entry]" {
				t.Fatalf("%s: key %q outside [Desktop Entry]", path, k)
			}
			if _, dup := keys[k]; dup {
				t.Fatalf("%s: key %q twice", path, k)
			}
			keys[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// unquoteExec undoes desktopExecArg for one argument: the string escapes of the desktop entry,
// then the Exec quoting, then %%.
func unquoteExec(t *testing.T, v string) string {
	t.Helper()
	var s strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
			switch v[i] {
			case 's':
				s.WriteByte(' ')
			case 'n':
				s.WriteByte('\n')
			case 't':
				s.WriteByte('\t')
			case 'r':
				s.WriteByte('\r')
			default:
				s.WriteByte(v[i])
			}
			continue
		}
		s.WriteByte(v[i])
	}
	arg := s.String()
	if strings.HasPrefix(arg, `"`) {
		if !strings.HasSuffix(arg, `"`) || len(arg) < 2 {
			t.Fatalf("unbalanced quotes in %q", arg)
		}
		var b strings.Builder
		in := arg[1 : len(arg)-1]
		for i := 0; i < len(in); i++ {
			if in[i] == '\\' && i+1 < len(in) && strings.ContainsRune("\"`$\\", rune(in[i+1])) {
				i++
			} else if strings.ContainsRune("\"`$\\", rune(in[i])) {
				t.Fatalf("unescaped %q inside quotes in %q", in[i], arg)
			}
			b.WriteByte(in[i])
		}
		arg = b.String()
	} else if strings.ContainsAny(arg, " \t\n\"'\\><~|&;$*?#()`") {
		t.Fatalf("reserved character outside quotes in %q", arg)
	}
	if strings.Contains(strings.ReplaceAll(arg, "%%", ""), "%") {
		t.Fatalf("a lone %% (field code) in %q", arg)
	}
	return strings.ReplaceAll(arg, "%%", "%")
}

func TestAutostartEntry(t *testing.T) {
	validate, _ := exec.LookPath("desktop-file-validate")
	for _, exe := range []string{
		"/usr/bin/hologram",
		"/opt/Hologram Agent/bin/hologram",
		`/home/a/we"ird/$HOME/100%/back\slash/hologram`,
		"/home/张三/应用/hologram",
	} {
		t.Run(exe, func(t *testing.T) {
			dir := t.TempDir()
			getenv := uiEnv(map[string]string{"XDG_CONFIG_HOME": dir})
			if on, err := autostartEnabled(getenv); err != nil || on {
				t.Fatalf("enabled before = %v, %v", on, err)
			}
			if err := setAutostart(getenv, exe, true); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "autostart", "hologram.desktop")
			keys := desktopEntry(t, path)
			for k, want := range map[string]string{"Type": "Application", "Name": "HologramAgent",
				"X-GNOME-Autostart-enabled": "true", "Terminal": "false"} {
				if keys[k] != want {
					t.Errorf("%s = %q, want %q", k, keys[k], want)
				}
			}
			if got := unquoteExec(t, keys["Exec"]); got != exe {
				t.Errorf("Exec=%s runs %q, want %q", keys["Exec"], got, exe)
			}
			if validate != "" {
				if out, err := exec.Command(validate, path).CombinedOutput(); err != nil || len(out) > 0 {
					t.Errorf("desktop-file-validate: %v\n%s", err, out)
				}
			}
			if on, err := autostartEnabled(getenv); err != nil || !on {
				t.Errorf("enabled after = %v, %v", on, err)
			}
			// Writing again replaces the entry; no temporary files stay behind.
			if err := setAutostart(getenv, exe, true); err != nil {
				t.Fatal(err)
			}
			if ents, _ := os.ReadDir(filepath.Join(dir, "autostart")); len(ents) != 1 {
				t.Errorf("autostart dir holds %d files", len(ents))
			}
			if err := setAutostart(getenv, exe, false); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("entry still there after turning off: %v", err)
			}
			if err := setAutostart(getenv, exe, false); err != nil {
				t.Errorf("turning off twice: %v", err)
			}
		})
	}
}

func TestAutostartErrors(t *testing.T) {
	dir := t.TempDir()
	getenv := uiEnv(map[string]string{"XDG_CONFIG_HOME": dir})
	if err := setAutostart(getenv, "hologram", true); err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Errorf("relative executable: %v", err)
	}
	// autostart exists as a file: nothing can be written under it.
	if err := os.WriteFile(filepath.Join(dir, "autostart"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := setAutostart(getenv, "/usr/bin/hologram", true); err == nil {
		t.Error("write under a file succeeded")
	}
	if _, err := autostartEnabled(getenv); err == nil {
		t.Error("stat under a file gave no error")
	}
}
