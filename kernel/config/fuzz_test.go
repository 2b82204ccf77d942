package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadTOML feeds Load an arbitrary config file: it never panics, and a file it accepts
// gives a configuration that passes its own validation on a second load of the same file.
func FuzzLoadTOML(f *testing.F) {
	for _, s := range []string{
		"log_level = \"debug\"\n[agent]\nmax_rounds = 8\n[api]\nmax_body_bytes = 1048576\n",
		"[[plugins]]\nname = \"fs\"\ncommand = [\"npx\", \"server\"]\nenv = [\"A=B\"]\n",
		"[builtin]\ndisabled = [\"shell\"]\n[builtin.files]\nroots = [\"~/notes\"]\n",
		"[memory]\nwindow_tokens = -1\n",
		"data_dir = 3\n",
		"[[plugins]]\n[[plugins]]\nname = \"\"\n",
		"a = \"\\uD800\"\n",
		"x = [[[[[[[[[[1]]]]]]]]]]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		env := func(k string) string {
			switch k {
			case "HOME":
				return dir
			case "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR":
				return filepath.Join(dir, k)
			}
			return ""
		}
		if _, _, err := Load("homed", []string{"--config", path}, env); err != nil {
			return
		}
		if _, _, err := Load("homed", []string{"--config", path}, env); err != nil {
			t.Fatalf("accepted once, refused the second time: %v", err)
		}
	})
}
