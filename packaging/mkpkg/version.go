package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// gitInfo is what the packages take from the repository's history.
type gitInfo struct {
	// Describe is `git describe --tags --long --match 'v[0-9]*'` (vX.Y.Z-N-gSHA), empty
	// when no such tag is reachable.
	Describe string
	// Commit is HEAD's abbreviated hash and Time its committer time.
	Commit string
	Time   time.Time
	// Dirty reports tracked files changed since HEAD.
	Dirty bool
	// Committer is HEAD's committer, "Name <mail>".
	Committer string
}

// readGit reads gitInfo from the repository at root.
func readGit(ctx context.Context, root string) (gitInfo, error) {
	var g gitInfo
	out, err := runCmd(ctx, root, nil, "git", "log", "-1", "--format=%h%x00%ct%x00%cn <%ce>", "--abbrev=7", "HEAD")
	if err != nil {
		return g, fmt.Errorf("reading HEAD (a git checkout is needed, or give -version): %w", err)
	}
	parts := strings.Split(strings.TrimSpace(string(out)), "\x00")
	if len(parts) != 3 {
		return g, fmt.Errorf("git log printed %q", out)
	}
	sec, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return g, fmt.Errorf("commit time %q: %w", parts[1], err)
	}
	g.Commit, g.Time, g.Committer = parts[0], time.Unix(sec, 0).UTC(), parts[2]
	// No matching tag is not an error: the fallback version applies.
	if d, err := runCmd(ctx, root, nil, "git", "describe", "--tags", "--long", "--abbrev=7", "--match", "v[0-9]*", "HEAD"); err == nil {
		g.Describe = strings.TrimSpace(string(d))
	}
	st, err := runCmd(ctx, root, nil, "git", "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return g, fmt.Errorf("git status: %w", err)
	}
	g.Dirty = len(strings.TrimSpace(string(st))) > 0
	return g, nil
}

var (
	describeRE = regexp.MustCompile(`^(.+)-([0-9]+)-g([0-9a-f]+)$`)
	tagRE      = regexp.MustCompile(`^v([0-9]+\.[0-9]+\.[0-9]+)(?:-([0-9A-Za-z.]+))?$`)
	versionRE  = regexp.MustCompile(`^[0-9][0-9A-Za-z.+~]*$`)
)

// packageVersion is the deb and rpm version of the tree g describes:
//
//	v1.2.3 at HEAD           1.2.3
//	v1.2.3, 4 commits later  1.2.3+4.gabc1234
//	v1.3.0-rc.1 at HEAD      1.3.0~rc.1 (before 1.3.0 for dpkg and rpm alike)
//	no v-tag                 0.0.0~git20261130155012.abc1234 (HEAD's UTC committer time)
//
// A tree with uncommitted changes adds ".dirty". Both formats accept the result: digits first,
// then letters, digits and . + ~ (no '-', which separates the release in both).
func packageVersion(g gitInfo) (string, error) {
	var v string
	if g.Describe == "" {
		v = "0.0.0~git" + g.Time.UTC().Format("20060102150405") + "." + g.Commit
	} else {
		m := describeRE.FindStringSubmatch(g.Describe)
		if m == nil {
			return "", fmt.Errorf("git describe printed %q, want TAG-N-gHASH", g.Describe)
		}
		t := tagRE.FindStringSubmatch(m[1])
		if t == nil {
			return "", fmt.Errorf("tag %q: want vMAJOR.MINOR.PATCH or vMAJOR.MINOR.PATCH-PRERELEASE (letters, digits, dots)", m[1])
		}
		v = t[1]
		if t[2] != "" {
			v += "~" + t[2]
		}
		if m[2] != "0" {
			v += "+" + m[2] + ".g" + m[3]
		}
	}
	if g.Dirty {
		v += ".dirty"
	}
	return v, checkVersion(v)
}

// checkVersion reports a version that .deb or .rpm would refuse.
func checkVersion(v string) error {
	if !versionRE.MatchString(v) {
		return fmt.Errorf("version %q: .deb and .rpm need a digit first, then only letters, digits and . + ~ (no '-' or ':')", v)
	}
	return nil
}

// tagVersion is the package version of the release tag tag (vX.Y.Z[-PRE]).
func tagVersion(tag string) (string, error) {
	return packageVersion(gitInfo{Describe: tag + "-0-g0"})
}
