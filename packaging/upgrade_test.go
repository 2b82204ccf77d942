//go:build integration

package packaging

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// fixtureEvents are the events of the data dir fixture, in order.
var fixtureEvents = []string{
	"the packaging fixture remembers the lighthouse keeper",
	"noted: the lighthouse keeper lives on the island",
	"灯塔看守人住在岛上",
}

// schema2Fixture writes a data dir database at schema version 2: migrations 0001 and 0002 of
// this tree, applied with the sqlite3 CLI, and a session with fixtureEvents (indexed as
// migration 0002's Go step would: lower-cased text in events_fts).
func schema2Fixture(t *testing.T) string {
	t.Helper()
	migs, err := filepath.Glob(filepath.Join(repoRoot, "memory", "sqlite", "migrations", "*.sql"))
	if err != nil || len(migs) < 3 {
		t.Fatalf("migrations: %q, %v (want 0001, 0002 and a later one)", migs, err)
	}
	sort.Strings(migs)
	var script strings.Builder
	for _, m := range migs[:2] {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		script.Write(b)
		script.WriteString("\n")
	}
	const t0 = int64(1764000000000000000)
	script.WriteString("INSERT INTO sessions (id, title, created, updated) VALUES ('main', 'Main', " + strconv.FormatInt(t0, 10) + ", " + strconv.FormatInt(t0, 10) + ");\n")
	for i, e := range fixtureEvents {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		script.WriteString("INSERT INTO events (session, time, role, content, tokens) VALUES ('main', " +
			strconv.FormatInt(t0+int64(i+1)*1e9, 10) + ", '" + role + "', '" + e + "', " + strconv.Itoa(len(strings.Fields(e))) + ");\n")
	}
	script.WriteString("INSERT INTO events_fts (rowid, tokens, expansion) SELECT id, lower(content), '' FROM events;\nPRAGMA user_version = 2;\n")
	db := filepath.Join(t.TempDir(), "hologram.db")
	cmd := exec.Command("sqlite3", "-bail", db)
	cmd.Stdin = strings.NewReader(script.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}
	if v := strings.TrimSpace(run(t, "sqlite3", db, "PRAGMA user_version")); v != "2" {
		t.Fatalf("fixture schema version %s, want 2", v)
	}
	return db
}

// nfpmTool is the nfpm make packages installed ($HOLOGRAM_NFPM or build/tools/nfpm-*).
func nfpmTool(t *testing.T) string {
	t.Helper()
	if n := os.Getenv("HOLOGRAM_NFPM"); n != "" {
		return n
	}
	got, _ := filepath.Glob(filepath.Join(repoRoot, "build", "tools", "nfpm-v*"))
	if len(got) == 0 {
		msg := "no build/tools/nfpm-v*: run make packages"
		if ciMode() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	abs, err := filepath.Abs(got[len(got)-1])
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// earlierCommit is the newest commit before the tree under test that has the packaging (a
// clean checkout is HEAD, so HEAD does not count; a tree with changes is newer than HEAD).
func earlierCommit(t *testing.T) string {
	t.Helper()
	revs := strings.Fields(run(t, "git", "-C", repoRoot, "rev-list", "--max-count=1000", "HEAD"))
	clean := strings.TrimSpace(run(t, "git", "-C", repoRoot, "status", "--porcelain", "--untracked-files=no")) == ""
	for i, c := range revs {
		if i == 0 && clean {
			continue
		}
		if exec.Command("git", "-C", repoRoot, "cat-file", "-e", c+":mk/packages.mk").Run() == nil &&
			exec.Command("git", "-C", repoRoot, "cat-file", "-e", c+":packaging/mkpkg/main.go").Run() == nil {
			return c
		}
	}
	return ""
}

// prevServerPackage builds the older hologram-server .deb: from the newest earlier commit that
// has the packaging, in a git worktree built with the same GOCACHE and flags (make packages);
// else from this tree's binaries as version 0.0.0~~prev ("~~" sorts before 0.0.0~git…, which
// 0.0.0~prev would not). It reports whether it came from history.
func prevServerPackage(t *testing.T) (deb string, fromHistory bool) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "dist")
	nfpm := nfpmTool(t)
	if c := earlierCommit(t); c != "" {
		wt := filepath.Join(dir, "wt")
		run(t, "git", "-C", repoRoot, "worktree", "add", "--detach", wt, c)
		t.Cleanup(func() {
			exec.Command("git", "-C", repoRoot, "worktree", "remove", "--force", wt).Run()
			exec.Command("git", "-C", repoRoot, "worktree", "prune").Run()
		})
		t.Logf("building the previous hologram-server from %s", c)
		run(t, "make", "-C", wt, "packages", "PKG_VARIANTS=server", "DIST="+out, "NFPM="+nfpm)
		fromHistory = true
	} else {
		t.Log("no earlier commit has the packaging: the previous package is this tree's, as 0.0.0~~prev")
		cmd := exec.Command("go", "run", "-trimpath", "./packaging/mkpkg", "-nfpm", nfpm, "-bin", absBin(t),
			"-out", out, "-work", filepath.Join(dir, "work"), "-variants", "server", "-formats", "deb", "-version", "0.0.0~~prev")
		cmd.Dir = repoRoot
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building the previous package: %v\n%s", err, b)
		}
	}
	got, _ := filepath.Glob(filepath.Join(out, serverPkg+"_*_amd64.deb"))
	if len(got) != 1 {
		t.Fatalf("previous package: %q", got)
	}
	return got[0], fromHistory
}

func absBin(t *testing.T) string {
	abs, err := filepath.Abs(binDir())
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func debVersion(t *testing.T, deb string) string {
	return strings.TrimSpace(run(t, "dpkg-deb", "--field", deb, "Version"))
}

// migratedTo is the last schema version homed logged migrating to, or 0.
func migratedTo(log string) int {
	last := 0
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, "memory store migrated") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "schema_version="); ok {
				last, _ = strconv.Atoi(v)
			}
		}
	}
	return last
}

func TestServerUpgradeKeepsData(t *testing.T) {
	needRoot(t)
	need(t, "sqlite3", "git", "go", "make")
	cur := findPackages(t)["server"]
	prev, fromHistory := prevServerPackage(t)
	if pv := debVersion(t, prev); exec.Command("dpkg", "--compare-versions", pv, "lt", cur.version).Run() != nil {
		t.Fatalf("the previous version %s does not sort before %s", pv, cur.version)
	}
	fixture := schema2Fixture(t)
	before := fileList(t)

	dpkg(t, "--install", prev)
	a := lookupAccount(t, "hologram")
	db := filepath.Join(stateDir, "hologram.db")
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(db, int(a.uid), int(a.gid)); err != nil {
		t.Fatal(err)
	}
	if fromHistory {
		// The previous kernel runs on the data first, as it would have before the upgrade.
		startAsUnit(t).stop(t)
	}
	sum := sha256File(t, db)

	dpkg(t, "--install", cur.deb)
	if v := strings.TrimSpace(run(t, "dpkg-query", "-W", "-f=${Version}", serverPkg)); v != cur.version {
		t.Fatalf("installed version %s after the upgrade, want %s", v, cur.version)
	}
	if got := lookupAccount(t, "hologram"); got != a {
		t.Errorf("the upgrade changed the user: %+v, was %+v", got, a)
	}
	if sha256File(t, db) != sum {
		t.Error("the upgrade itself changed the data dir's database")
	}
	checkOwned(t, db, a, 0o600)

	r := startAsUnit(t)
	var msgs []struct{ Content string }
	out := r.asService(t, "/usr/bin/waiter", "history", "--session", "main", "--limit", "0", "--json")
	if err := json.Unmarshal([]byte(out), &msgs); err != nil {
		t.Fatalf("waiter history: %v\n%s", err, out)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.Content)
	}
	if strings.Join(got, "\n") != strings.Join(fixtureEvents, "\n") {
		t.Errorf("events after the upgrade:\n%q\nwant:\n%q", got, fixtureEvents)
	}
	r.stop(t)
	// homed migrated the schema-2 data to its own schema: the version it logged last.
	v, err := strconv.Atoi(strings.TrimSpace(run(t, "sqlite3", db, "PRAGMA user_version")))
	if err != nil || v <= 2 {
		t.Errorf("schema version %d (%v) after the upgrade, want above 2 (homed migrates on start)", v, err)
	}
	if logged := migratedTo(r.stderr.String()); !fromHistory && logged != v {
		t.Errorf("homed logged migrating to schema %d, the file says %d:\n%s", logged, v, r.stderr)
	}

	dpkg(t, "--purge", serverPkg)
	if added, removed := diffLists(before, fileList(t)); len(added)+len(removed) > 0 {
		t.Errorf("after dpkg --purge: added %q, removed %q", added, removed)
	}
}
