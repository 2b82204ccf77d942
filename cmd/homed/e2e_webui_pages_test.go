//go:build integration

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/draw"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/starmap"
)

// Star map size of the web UI's performance run (issue 28): 10,000 entities, 20,000 facts.
const (
	bigStars = 10_000
	bigFacts = 20_000
)

// seedBigSky restores into TestWebUI's still empty memory (a full JSON backup, one
// transaction) 10,000 entities — 100 people, each with a world of 99 things — and 20,000 facts
// within and across the worlds.
func seedBigSky(t *testing.T, e *env) {
	t.Helper()
	// The header of this binary's backups, from an export of the empty memory.
	resp, err := e.unixHTTP().Get("http://hologram/api/v1/memory/export?format=json")
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
		Schema  int    `json:"schema"`
	}
	err = json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if err != nil || h.Format == "" {
		t.Fatalf("export the empty memory: %+v %v", h, err)
	}
	var doc bytes.Buffer
	now := time.Now().UTC().Format(time.RFC3339Nano)
	fmt.Fprintf(&doc, `{"format":%q,"version":%d,"created":%q,"schema":%d,"sessions":[],"events":[],"blocks":[],"entities":[`, h.Format, h.Version, now, h.Schema)
	kinds := []string{"place", "org", "thing", "concept", "time", "event", "animal", "note"}
	for i := range bigStars {
		kind := kinds[i%len(kinds)]
		if i%100 == 0 {
			kind = "person"
		}
		if i > 0 {
			doc.WriteByte(',')
		}
		fmt.Fprintf(&doc, `{"id":%d,"name":"Star %05d","kind":%q,"scope":"private","origin":"import","created":%q,"updated":%q}`+"\n", i+1, i, kind, now, now)
	}
	doc.WriteString(`],"triples":[`)
	preds := []string{"knows", "lives in", "works at", "likes", "owns", "visited", "part of", "mentions", "near", "about"}
	for k := range bigFacts {
		a := k % bigStars
		b := (a/100)*100 + (a*7+k/bigStars*13+1)%100 // the same world
		if k%5 == 0 {
			b = (a*37 + 101) % bigStars // another world
		}
		if a == b {
			b = (b + 1) % bigStars
		}
		if k > 0 {
			doc.WriteByte(',')
		}
		fmt.Fprintf(&doc, `{"id":%d,"subject":%d,"predicate":%q,"object":%d,"scope":"private","origin":"import","created":%q}`+"\n", k+1, a+1, preds[k%len(preds)], b+1, now)
	}
	doc.WriteString(`],"scenes":[],"settings":[]}` + "\n")
	t0 := time.Now()
	if code, raw := e.postJSON("/api/v1/memory/import?format=json", doc.String()); code != 200 {
		t.Fatalf("restore the big sky: %d %.300s", code, raw)
	}
	t.Logf("restored %d entities and %d facts (%d KB of JSON) in %v", bigStars, bigFacts, doc.Len()>>10, time.Since(t0).Round(time.Millisecond))
}

// webPages runs testdata/webui/pages.mjs against TestWebUI's homed (its fake provider "fake"
// and shell plugin): a memory seeded by seedBigSky and with a chat message's facts (the rules'
// extraction, so they have a source event); then
// memory search and Forget, the context window, an entity's facts with the source event opened
// and an edit, the star map drawn (its labelled canvas's screenshot has more than 20 colours) and
// a star tapped opening its facts, a plugin restarted, the provider tested, axe-core on every
// view at both sizes in light and dark (no critical or serious violation), and the star map's
// load-to-first-frame and pan times at 1280×800 reported beside the desktop rasteriser's figures
// of the same graph in this run.
func webPages(t *testing.T, e *env, base, token, dir, shots string) {
	const (
		entity = "Beatriz"
		said   = "My sister Beatriz is a nurse."
	)
	// A fact with its source (the rules extract it right after the turn), something to search
	// for and forget, and a turn after them so that they are in the chat's window.
	for _, in := range []string{said, "The old locker code was 4711.", "Thanks."} {
		if code, raw := e.postJSON("/api/v1/chat", map[string]string{"input": in}); code != 200 || !bytes.Contains(raw, []byte("event: final")) {
			t.Fatalf("the seeding turn %q: %d %.300s", in, code, raw)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var facts []string
		if id, ok := findEntity(t, e, entity); ok {
			for _, f := range entityDetail(t, e, id).Triples {
				facts = append(facts, f.SubjectName+" | "+f.Predicate+" | "+f.ObjectName)
			}
		}
		if strings.Contains(strings.ToLower(strings.Join(facts, "\n")), "beatriz | works as | nurse") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no fact about %s 10 s after the turn: %q", entity, facts)
		}
	}
	start := time.Now()
	cmd := exec.Command("node", filepath.Join(dir, "pages.mjs"), base, token, shots, entity, said, "shell", "fake")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node pages.mjs: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	var got struct {
		Phone, Desktop map[string]any
		Perf           map[string]any
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &got); err != nil {
		t.Fatalf("pages.mjs: %v: %q %s", err, stdout.String(), stderr.String())
	}
	t.Logf("pages.mjs in %v", time.Since(start).Round(time.Millisecond))
	for size, m := range map[string]map[string]any{"phone": got.Phone, "desktop": got.Desktop} {
		axe, _ := m["axe"].([]any)
		delete(m, "axe")
		t.Logf("%s: %v", size, m)
		if len(axe) > 0 || m["axe_checked"] != float64(10) {
			t.Errorf("%s: axe-core found critical or serious violations (%v views checked): %v", size, m["axe_checked"], axe)
		}
		// The labelled element drew a sky: its screenshot has more than 20 colours.
		if n := pngColours(t, filepath.Join(shots, "starmap-canvas-"+size+".png")); n <= 20 {
			t.Errorf("%s: the star map's screenshot has %d colours, want > 20", size, n)
		} else {
			t.Logf("%s: the star map's screenshot has %d colours", size, n)
		}
	}
	// The edits went the real way: the entity holds the last size's notes.
	id, _ := findEntity(t, e, entity)
	if d := entityDetail(t, e, id); d.Entity.Text != "edited on the desktop" {
		t.Errorf("%s after the edits: %+v", entity, d.Entity)
	}
	// The plugin was restarted twice (once per size).
	p := e.waitPlugin("shell", "running", func(p client.Plugin) bool { return p.State == "running" })
	if p.Restarts < 2 {
		t.Errorf("shell after two restarts from the web: %+v", p)
	}
	desk := desktopStarMap(t, e)
	t.Logf("star map, %d stars / %d edges at 1280×800, same graph, same run: web (chromium canvas) load to first frame %v ms "+
		"(the layout fetched in %v ms, drawn in %v ms: %v); a drag of %v moves, each drawn %v ms after it (the last full frame moved, in %v ms; the full frame at rest %v ms); "+
		"desktop (starmap rasteriser) graph fetched in %v, laid out in %v, first frame %v, a panned frame %v; GET /api/v1/memory/starmap over the socket %v",
		bigStars, bigFacts, got.Perf["load_to_first_frame_ms"], got.Perf["fetch_ms"], got.Perf["draw_ms"], got.Perf["first_frame_parts"],
		got.Perf["pan_moves"], got.Perf["pan_latency_ms"], got.Perf["pan_frame_draw_ms"], got.Perf["rest_frame_ms"],
		desk.fetch, desk.layout, desk.first, desk.pan, desk.scene)
}

// findEntity finds an entity by name in the star map's scene.
func findEntity(t *testing.T, e *env, name string) (int64, bool) {
	t.Helper()
	sc := fetchScene(t, e)
	for i, l := range sc.Label {
		if l == name {
			return sc.ID[i], true
		}
	}
	return 0, false
}

func entityDetail(t *testing.T, e *env, id int64) client.EntityDetail {
	t.Helper()
	var d client.EntityDetail
	resp, err := e.unixHTTP().Get(fmt.Sprintf("http://hologram/api/v1/memory/entities/%d", id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || resp.StatusCode != 200 {
		t.Fatalf("entity %d: %d %v", id, resp.StatusCode, err)
	}
	return d
}

func fetchScene(t *testing.T, e *env) starmap.Scene {
	t.Helper()
	resp, err := e.unixHTTP().Get("http://hologram/api/v1/memory/starmap")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sc starmap.Scene
	if err := json.NewDecoder(resp.Body).Decode(&sc); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /api/v1/memory/starmap: %d %v", resp.StatusCode, err)
	}
	return sc
}

// desktopStarMap times the desktop's way with the same graph: the Worlds layout, then frames of
// the starmap rasteriser (anti-aliased, at rest) at 1280×800, the first and one panned.
func desktopStarMap(t *testing.T, e *env) (out struct{ fetch, scene, layout, first, pan time.Duration }) {
	// What the desktop fetches (gui StarMapVM.Load): the graph's pages of 10,000 entities.
	t0 := time.Now()
	for after := ""; ; {
		resp, err := e.unixHTTP().Get("http://hologram/api/v1/memory/graph?limit=10000&after=" + after)
		if err != nil {
			t.Fatal(err)
		}
		var page client.GraphPage
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if after = page.Next; after == "" {
			break
		}
	}
	out.fetch = time.Since(t0).Round(time.Millisecond)
	t0 = time.Now()
	sc := fetchScene(t, e) // and what the web UI fetches, over the socket
	out.scene = time.Since(t0).Round(time.Millisecond)
	g := starmap.Graph{Nodes: make([]starmap.Node, len(sc.ID))}
	for i := range sc.ID {
		g.Nodes[i] = starmap.Node{ID: sc.ID[i], Label: sc.Label[i], Kind: sc.Kinds[sc.Kind[i]], Mentions: sc.Mentions[i], Hub: sc.Flags[i]&starmap.FlagHub != 0}
	}
	for k := 0; k+2 < len(sc.Edges); k += 3 {
		g.Edges = append(g.Edges, starmap.Edge{From: int(sc.Edges[k]), To: int(sc.Edges[k+1]), Class: int(sc.Edges[k+2]), Weight: 1})
	}
	t0 = time.Now()
	l := starmap.Worlds(g, starmap.WorldOptions{Centre: -1})
	out.layout = time.Since(t0).Round(time.Millisecond)
	f, err := starmap.LoadFont()
	if err != nil {
		t.Logf("no font, the desktop frame has no labels: %v", err)
	}
	r := starmap.NewRenderer(starmap.RenderOptions{Font: f})
	dst := image.NewRGBA(image.Rect(0, 0, 1280, 800))
	v := starmap.Fit(l, 1280, 800)
	st := starmap.State{AntiAlias: true, Selected: -1, Hover: -1}
	t0 = time.Now()
	r.Render(dst, g, l, v, st)
	out.first = time.Since(t0).Round(time.Millisecond)
	v.Center.X += 200 / v.Zoom
	t0 = time.Now()
	r.Render(dst, g, l, v, st)
	out.pan = time.Since(t0).Round(time.Millisecond)
	return out
}

// pngColours counts the distinct colours of a PNG.
func pngColours(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	rgba := image.NewRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Bounds(), img, img.Bounds().Min, draw.Src)
	seen := map[[4]uint8]bool{}
	for i := 0; i+3 < len(rgba.Pix); i += 4 {
		seen[[4]uint8(rgba.Pix[i:i+4])] = true
	}
	return len(seen)
}
