package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestPermissions(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Permissions
		err      string
	}{
		{"machine-readable", `{"paths":[{"path":"${HOLOGRAM_DATA_DIR}/notes","access":"write"},{"path":"~/.config/x","access":"read"},{"path":"/usr","access":"exec"}],"env":["HOME","HOLOGRAM_X"],"network":true,"exec":true,"notes":["more"]}`,
			Permissions{Paths: []PathPermission{{"${HOLOGRAM_DATA_DIR}/notes", "write"}, {Path: "~/.config/x", Access: "read"}, {Path: "/usr", Access: "exec"}}, Env: []string{"HOME", "HOLOGRAM_X"}, Network: true, Exec: true, Notes: []string{"more"}}, ""},
		{"the older descriptive form", `{"paths":["the roots of files.toml"],"network":["the feeds' hosts"],"exec":false}`,
			Permissions{Network: true, Notes: []string{"the roots of files.toml", "the feeds' hosts"}}, ""},
		{"only the declared environment", `{"paths":[{"path":"${XDG_MUSIC_DIR}","access":"read"}],"env":["MPD_HOST"],"env_only":true,"network":true}`,
			Permissions{Paths: []PathPermission{{"${XDG_MUSIC_DIR}", "read"}}, Env: []string{"MPD_HOST"}, EnvOnly: true, Network: true}, ""},
		{"an empty network list", `{"network":[]}`, Permissions{}, ""},
		{"network false", `{"network":false}`, Permissions{}, ""},
		{"unknown key", `{"disk":true}`, Permissions{}, `unknown field "disk"`},
		{"network not a boolean", `{"network":"yes"}`, Permissions{}, "network must be true or false"},
		{"bad access", `{"paths":[{"path":"/x","access":"all"}]}`, Permissions{}, `paths[0]: access "all" must be`},
		{"no access", `{"paths":[{"path":"/x"}]}`, Permissions{}, `access ""`},
		{"unknown path key", `{"paths":[{"path":"/x","access":"read","mode":1}]}`, Permissions{}, `paths[0]: json: unknown field "mode"`},
		{"relative path", `{"paths":[{"path":"data/x","access":"read"}]}`, Permissions{}, `must start with /, ~/ or ${VARIABLE}`},
		{"unknown variable", `{"paths":[{"path":"${XDG_DATA_HOME}/x","access":"read"}]}`, Permissions{}, "unknown variable XDG_DATA_HOME"},
		{"bare $VAR", `{"paths":[{"path":"$HOME/x","access":"read"}]}`, Permissions{}, "write a variable as ${NAME}"},
		{"climbing", `{"paths":[{"path":"${PLUGIN_DIR}/../x","access":"write"}]}`, Permissions{}, "must not climb"},
		{"everything", `{"paths":[{"path":"/","access":"read"}]}`, Permissions{}, "is everything"},
		{"the whole home", `{"paths":[{"path":"~","access":"write"}]}`, Permissions{}, "is everything"},
		{"bad env name", `{"env":["A B"]}`, Permissions{}, `env[0] "A B" is not a variable name`},
		{"too many", `{"env":[` + strings.Repeat(`"A",`, maxPermissionEntries) + `"A"]}`, Permissions{}, "more than 256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got Permissions
			err := json.Unmarshal([]byte(tc.in), &got)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %+v, %v\nwant %+v", got, err, tc.want)
			}
			// What the host passes on parses back the same.
			b, _ := json.Marshal(got)
			var again Permissions
			if err := json.Unmarshal(b, &again); err != nil || fmt.Sprint(again) != fmt.Sprint(got) {
				t.Fatalf("round trip %s: %+v, %v", b, again, err)
			}
		})
	}
}

func TestPermissionsExpand(t *testing.T) {
	vars := map[string]string{VarDataDir: "/var/lib/hologram", VarHome: "/home/ann", VarPluginDir: "/opt/p", VarConfigDir: ""}
	in := Permissions{Network: true, Paths: []PathPermission{{"${HOLOGRAM_DATA_DIR}/notes/", "write"}, {Path: "~/.cache/x", Access: "read"},
		{"${PLUGIN_DIR}", "read"}, {Path: "/usr/bin", Access: "exec"}}}
	got, err := in.Expand(func(k string) string { return vars[k] })
	want := []PathPermission{{Path: "/var/lib/hologram/notes", Access: "write"}, {Path: "/home/ann/.cache/x", Access: "read"}, {Path: "/opt/p", Access: "read"}, {Path: "/usr/bin", Access: "exec"}}
	if err != nil || fmt.Sprint(got.Paths) != fmt.Sprint(want) || !got.Network {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := (Permissions{Paths: []PathPermission{{"${HOLOGRAM_CONFIG_DIR}/x", "read"}}}).Expand(func(k string) string { return vars[k] }); err == nil ||
		!strings.Contains(err.Error(), "HOLOGRAM_CONFIG_DIR is not known here") {
		t.Fatalf("an unknown variable: %v", err)
	}
}
