package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestPackageVersion(t *testing.T) {
	at := time.Date(2026, 11, 30, 15, 50, 12, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		g       gitInfo
		want    string
		wantErr string
	}{
		{"no tag", gitInfo{Commit: "3cdb383", Time: at}, "0.0.0~git20261130155012.3cdb383", ""},
		{"no tag, dirty", gitInfo{Commit: "3cdb383", Time: at, Dirty: true}, "0.0.0~git20261130155012.3cdb383.dirty", ""},
		{"no tag, local time", gitInfo{Commit: "3cdb383", Time: at.In(time.FixedZone("CST", 8*3600))}, "0.0.0~git20261130155012.3cdb383", ""},
		{"at a tag", gitInfo{Describe: "v1.2.3-0-g3cdb383"}, "1.2.3", ""},
		{"after a tag", gitInfo{Describe: "v1.2.3-4-g3cdb383"}, "1.2.3+4.g3cdb383", ""},
		{"pre-release", gitInfo{Describe: "v1.3.0-rc.1-0-g3cdb383"}, "1.3.0~rc.1", ""},
		{"after a pre-release, dirty", gitInfo{Describe: "v1.3.0-rc1-2-gabcdef0", Dirty: true}, "1.3.0~rc1+2.gabcdef0.dirty", ""},
		{"not semver", gitInfo{Describe: "v1.2-0-g3cdb383"}, "", `tag "v1.2": want vMAJOR.MINOR.PATCH`},
		{"pre-release with a hyphen", gitInfo{Describe: "v1.2.3-rc-1-0-g3cdb383"}, "", `tag "v1.2.3-rc-1"`},
		{"not describe output", gitInfo{Describe: "v1.2.3"}, "", `want TAG-N-gHASH`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := packageVersion(tc.g)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("packageVersion = %q, %v; want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("packageVersion = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestCheckVersionRejects(t *testing.T) {
	for _, v := range []string{"", "v1.2.3", "1.2-3", "1:2.3", "1.2 3", "~1", "1.2_3"} {
		if err := checkVersion(v); err == nil {
			t.Errorf("checkVersion(%q) = nil, want an error", v)
		}
	}
	for _, v := range []string{"0.0.0~~prev", "1.2.3", "1.2.3+4.gabc", "0.0.0~git20261130155012.3cdb383.dirty"} {
		if err := checkVersion(v); err != nil {
			t.Errorf("checkVersion(%q) = %v", v, err)
		}
	}
}

// TestVersionsSortForDpkgAndRPM checks with the real tools that the versions packageVersion
// makes sort as releases do, and that the upgrade test's older version sorts first.
func TestVersionsSortForDpkgAndRPM(t *testing.T) {
	for _, tool := range []string{"dpkg", "rpm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("HOLOGRAM_CI") == "1" {
				t.Fatalf("%s is missing (apt-get install %s)", tool, tool)
			}
			t.Skipf("%s is missing (apt-get install %s)", tool, tool)
		}
	}
	ascending := []string{
		"0.0.0~~prev",
		"0.0.0~git20261130155012.3cdb383",
		"0.0.0~git20261130155012.3cdb383.dirty",
		"0.0.0~git20261201090000.0aaaaaa",
		"1.3.0~rc.1",
		"1.3.0~rc.1+2.gabcdef0",
		"1.3.0",
		"1.3.0+4.g3cdb383",
		"1.3.0+12.g0000000",
		"1.3.1",
	}
	for i := 0; i+1 < len(ascending); i++ {
		a, b := ascending[i], ascending[i+1]
		if out, err := exec.Command("dpkg", "--compare-versions", a, "lt", b).CombinedOutput(); err != nil {
			t.Errorf("dpkg: %s is not older than %s (%v %s)", a, b, err, out)
		}
		out, err := exec.Command("rpm", "--eval", `%{lua: print(rpm.vercmp("`+a+`", "`+b+`"))}`).Output()
		if err != nil || strings.TrimSpace(string(out)) != "-1" {
			t.Errorf("rpm: %s is not older than %s (%q %v)", a, b, out, err)
		}
	}
}
