package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A changeEntry is one version of the Debian changelog.
type changeEntry struct {
	Version string
	Changes []string  // commit subjects, newest first
	Time    time.Time // the newest commit's time
}

// changelog renders the Debian changelog of pkgName from the history of the repository at
// root: one entry per release tag (vX.Y.Z…) reachable from HEAD, newest first, each listing the
// subjects of the commits it added; the commits after the newest tag (or all of them, when there
// is no tag) form the entry of version, the package's own.
func changelog(ctx context.Context, root, pkgName, version, maint string) (string, error) {
	out, err := runCmd(ctx, root, nil, "git", "tag", "--merged", "HEAD", "--list", "v[0-9]*", "--sort=-v:refname")
	if err != nil {
		return "", err
	}
	bounds := []string{"HEAD"}
	versions := []string{version}
	for _, t := range strings.Fields(string(out)) {
		v, err := tagVersion(t)
		if err != nil {
			continue // not a release tag
		}
		bounds = append(bounds, t)
		versions = append(versions, v)
	}
	var entries []changeEntry
	for i, b := range bounds {
		rng := b
		if i+1 < len(bounds) {
			rng = bounds[i+1] + ".." + b
		}
		e, err := logRange(ctx, root, rng)
		if err != nil {
			return "", err
		}
		e.Version = versions[i]
		if len(e.Changes) == 0 {
			if i == 0 {
				// HEAD is the newest tag: its entry carries the package's version.
				versions[1] = version
			}
			continue
		}
		entries = append(entries, e)
	}
	return renderChangelog(pkgName, maint, entries), nil
}

// logRange reads the subjects and newest time of the commits in rng.
func logRange(ctx context.Context, root, rng string) (changeEntry, error) {
	out, err := runCmd(ctx, root, nil, "git", "log", "--format=%ct%x00%s%x1e", rng)
	if err != nil {
		return changeEntry{}, err
	}
	var e changeEntry
	for _, rec := range strings.Split(string(out), "\x1e") {
		rec = strings.TrimSpace(rec)
		if rec == "" {
			continue
		}
		ts, subj, ok := strings.Cut(rec, "\x00")
		if !ok {
			return e, fmt.Errorf("git log printed %q", rec)
		}
		sec, err := strconv.ParseInt(ts, 10, 64)
		if err != nil {
			return e, fmt.Errorf("commit time %q: %w", ts, err)
		}
		if t := time.Unix(sec, 0).UTC(); t.After(e.Time) {
			e.Time = t
		}
		if subj = strings.TrimSpace(subj); subj == "" {
			subj = "(no subject)"
		}
		e.Changes = append(e.Changes, subj)
	}
	return e, nil
}

// renderChangelog writes entries in Debian's changelog format (deb-changelog(5)), lines at
// most 80 columns.
func renderChangelog(pkgName, maint string, entries []changeEntry) string {
	var b strings.Builder
	for i, e := range entries {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s (%s) unstable; urgency=medium\n\n", pkgName, e.Version)
		for _, c := range e.Changes {
			for j, line := range wrap(c, 76) {
				if j == 0 {
					b.WriteString("  * " + line + "\n")
				} else {
					b.WriteString("    " + line + "\n")
				}
			}
		}
		fmt.Fprintf(&b, "\n -- %s  %s\n", maint, e.Time.Format(time.RFC1123Z))
	}
	return b.String()
}
