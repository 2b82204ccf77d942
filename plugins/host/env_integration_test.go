//go:build integration

package host

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDeclaredEnvironment: a native plugin whose manifest says env_only inherits of the
// kernel's environment only the variables it declares (and what its spec sets: the kernel's
// own variables); one without it inherits everything. ${XDG_MUSIC_DIR} in its paths is the
// owner's music folder.
func TestDeclaredEnvironment(t *testing.T) {
	music := t.TempDir()
	t.Setenv("HOLOGRAM_ENVTEST_DECLARED", "1")
	t.Setenv("HOLOGRAM_ENVTEST_SECRET", "sk-not-for-plugins")
	t.Setenv("XDG_MUSIC_DIR", music)
	e := newEnv(t, nil)
	for _, tc := range []struct {
		name     string
		envOnly  bool
		has, not []string
	}{
		{"only-declared", true, []string{"HOLOGRAM_ENVTEST_DECLARED", helperEnv, "GORACE", "HOLOGRAM_PERMISSIONS"}, []string{"HOLOGRAM_ENVTEST_SECRET", "HOME", "PATH"}},
		{"inherits", false, []string{"HOLOGRAM_ENVTEST_DECLARED", "HOLOGRAM_ENVTEST_SECRET", "HOME", helperEnv}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			argv := helperCommand(t)
			script := fmt.Sprintf("#!/bin/sh\nexec '%s' '%s'\n", argv[0], argv[1])
			m, _ := json.Marshal(Manifest{Name: tc.name, Version: "1.0.0", Entry: "run.sh",
				Permissions: Permissions{Paths: []PathPermission{{Path: "${XDG_MUSIC_DIR}", Access: "read"}},
					Env: []string{"HOLOGRAM_ENVTEST_DECLARED", "XDG_MUSIC_DIR"}, EnvOnly: tc.envOnly}})
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "plugin.json"), m, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			st := e.add(t, Spec{Name: tc.name, Dir: dir, Env: helperEnvVars("normal,env")})
			if st.State != StateRunning || len(st.Permissions.Paths) != 1 || st.Permissions.Paths[0] != (PathPermission{Path: music, Access: "read"}) {
				t.Fatalf("status %+v", st)
			}
			got, err := e.call(t, tc.name+".env", `{}`)
			if err != nil {
				t.Fatal(err)
			}
			names := strings.Fields(got)
			for _, n := range tc.has {
				if !slices.Contains(names, n) {
					t.Errorf("the plugin lacks %s: it has %v", n, names)
				}
			}
			for _, n := range tc.not {
				if slices.Contains(names, n) {
					t.Errorf("the plugin inherited %s: it has %v", n, names)
				}
			}
		})
	}
}
