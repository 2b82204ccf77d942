package gui

import (
	"context"
	"image"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
	"github.com/hologramagent/hologram/starmap"
)

const testScene = "chan:qq/peer:group_1"

// skyKernel is a fake kernel with a small memory: four L2 events and the facts distilled from
// them (one of them in a QQ group's scene and scope), served over a real unix socket, with
// graph pages of two entities so loading has to page.
func skyKernel(t *testing.T) (*clienttest.Fake, *client.HTTP) {
	t.Helper()
	f, c := uiKernel(t)
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	f.AddMemory(
		client.MemoryHit{ID: 101, Session: "s1", Time: at, Role: "user", Scope: "private", Layer: 2, Content: "I moved to Porto with Alice."},
		client.MemoryHit{ID: 102, Session: "s1", Time: at.Add(time.Minute), Role: "user", Scope: "private", Layer: 2, Content: "Alice works at Acme now."},
		client.MemoryHit{ID: 103, Session: "s1", Time: at.Add(2 * time.Minute), Role: "user", Scope: "private", Layer: 2, Content: "Bob has known Alice for years."},
		client.MemoryHit{ID: 104, Session: "qq-g1", Time: at.Add(3 * time.Minute), Role: "user", Partner: "carol", Scope: "group:1", Layer: 2, Content: "Carol likes green tea."},
	)
	f.AddFact(client.TripleInput{Subject: "Alice", SubjectKind: "person", Predicate: "lives in", Object: "Porto", ObjectKind: "place"}, 101)
	f.AddFact(client.TripleInput{Subject: "Alice", SubjectKind: "person", Predicate: "works at", Object: "Acme", ObjectKind: "org"}, 102)
	f.AddFact(client.TripleInput{Subject: "Bob", SubjectKind: "person", Predicate: "knows", Object: "Alice", ObjectKind: "person"}, 103)
	f.AddFact(client.TripleInput{Subject: "Carol", SubjectKind: "person", Predicate: "likes", Object: "green tea", ObjectKind: "thing", Scope: "group:1"}, 104)
	f.SetEventScene(testScene, 104)
	f.SetScenes(client.Scene{ID: 1, Key: testScene, Declared: true, Strength: 2, Occurrences: 2, Seen: at})
	f.SetGraphPageSize(2)
	return f, c
}

// loadSky returns a star map view-model over c, loaded.
func loadSky(t *testing.T, c client.Service) *StarMapVM {
	t.Helper()
	vm := NewStarMapVM(c, nil)
	if err := vm.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	return vm
}

// node returns the node labelled label.
func node(t *testing.T, s *Sky, label string) int {
	t.Helper()
	for i, n := range s.Graph.Nodes {
		if n.Label == label {
			return i
		}
	}
	t.Fatalf("no star %q among %d", label, len(s.Graph.Nodes))
	return -1
}

// undimmed lists the labels of the nodes the filter keeps, sorted.
func undimmed(s *Sky) []string {
	var out []string
	for i, n := range s.Graph.Nodes {
		if !s.Dim[i] {
			out = append(out, n.Label)
		}
	}
	slices.Sort(out)
	return out
}

func TestStarMapLoadHoldsEveryNodeAndEdge(t *testing.T) {
	_, c := skyKernel(t)
	vm := loadSky(t, c)
	s := vm.Sky()
	// The kernel's whole graph, read page by page without the view-model's paging.
	var ents []client.Entity
	var trs []client.Triple
	for after := ""; ; {
		p, err := c.Graph(context.Background(), client.GraphQuery{After: after, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		ents, trs = append(ents, p.Entities...), append(trs, p.Triples...)
		if after = p.Next; after == "" {
			break
		}
	}
	if len(ents) != 6 || len(trs) != 4 {
		t.Fatalf("fixture: %d entities, %d triples", len(ents), len(trs))
	}
	for _, e := range ents {
		i, ok := s.EntityNode(e.ID)
		if !ok || s.Graph.Nodes[i].Label != e.Name || s.Graph.Nodes[i].Kind != e.Kind || s.Graph.Nodes[i].Mentions != e.Mentions {
			t.Errorf("entity %+v: star %d (%v) %+v", e, i, ok, s.Graph.Nodes[max(i, 0)])
		}
	}
	edges := map[[2]int]bool{}
	for _, e := range s.Graph.Edges {
		edges[[2]int{e.From, e.To}] = true
	}
	for _, tr := range trs {
		a, _ := s.EntityNode(tr.Subject)
		b, _ := s.EntityNode(tr.Object)
		if !edges[[2]int{a, b}] {
			t.Errorf("triple %s %s %s has no link", tr.SubjectName, tr.Predicate, tr.ObjectName)
		}
	}
	for _, id := range []int64{101, 102, 103, 104} {
		if _, ok := s.EventNode(id); !ok {
			t.Errorf("event %d is not a star", id)
		}
	}
	// 6 entities + 4 events; 4 facts + 8 event-to-entity links.
	if n, _ := vm.Stars.Get(); n != 10 || len(s.Graph.Nodes) != 10 {
		t.Errorf("stars = %d (%d nodes), want 10", n, len(s.Graph.Nodes))
	}
	if n, _ := vm.Links.Get(); n != 12 {
		t.Errorf("links = %d, want 12", n)
	}
	if len(s.Layout.Pos) != 10 || s.Layout.Radius <= 0 || s.Index == nil {
		t.Fatalf("layout %+v", s.Layout)
	}
	if got, _ := vm.Status.Get(); got != "10 stars, 12 links." {
		t.Errorf("status %q", got)
	}
}

func TestStarMapReloadKeepsTheSky(t *testing.T) {
	f, c := skyKernel(t)
	vm := loadSky(t, c)
	before := vm.Sky()
	f.AddFact(client.TripleInput{Subject: "Alice", Predicate: "has", Object: "a cat", ObjectKind: "animal"})
	if err := vm.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := vm.Sky()
	if len(after.Graph.Nodes) != len(before.Graph.Nodes)+1 {
		t.Fatalf("%d stars after adding one, had %d", len(after.Graph.Nodes), len(before.Graph.Nodes))
	}
	for i, n := range before.Graph.Nodes {
		j := slices.IndexFunc(after.Graph.Nodes, func(m starmap.Node) bool { return m.ID == n.ID })
		p, q := before.Layout.Pos[i], after.Layout.Pos[j]
		if d := math.Hypot(p.X-q.X, p.Y-q.Y); d > 0.02*before.Layout.Radius {
			t.Errorf("star %q moved %.3f (radius %.3f) when another was added", n.Label, d, before.Layout.Radius)
		}
	}
	// A fresh view-model over the same memory draws the same sky (deterministic layout).
	again := loadSky(t, c)
	if !slices.Equal(again.Sky().Layout.Pos, loadSky(t, c).Sky().Layout.Pos) {
		t.Error("two loads of the same memory laid it out differently")
	}
}

func TestStarMapSearchAndFilters(t *testing.T) {
	_, c := skyKernel(t)
	vm := loadSky(t, c)
	ctx := context.Background()
	vm.now = func() time.Time { return time.Now().Add(400 * 24 * time.Hour) }

	_ = vm.Query.Set("ali")
	best, err := vm.Search(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := vm.Sky()
	if best != node(t, s, "Alice") || !s.Highlight[best] {
		t.Fatalf("search ali: best %d, matches %v", best, s.Matches)
	}
	sel, _ := vm.Selected.Get()
	if sel.Entity == nil || sel.Entity.Entity.Name != "Alice" || len(sel.Entity.Triples) != 3 {
		t.Fatalf("selection after the search: %+v", sel)
	}
	// The events mentioning Alice match too, after her.
	if len(s.Matches) != 4 {
		t.Errorf("matches %v, want Alice and three events", s.Matches)
	}
	_ = vm.Query.Set("nobody")
	if best, _ := vm.Search(ctx); best != -1 {
		t.Errorf("search nobody = %d", best)
	}
	if st, _ := vm.Status.Get(); st != `No star matches "nobody".` {
		t.Errorf("status %q", st)
	}
	_ = vm.Query.Set("")

	tests := []struct {
		name, scope, scene, period string
		want                       []string
	}{
		{"everything", "", "", "", nil},
		{"scope group:1", "group:1", "", "", []string{"Carol", "Carol likes green tea.", "green tea"}},
		{"scope private", "private", "", "", []string{"Acme", "Alice", "Alice works at Acme now.", "Bob", "Bob has known Alice for years.", "I moved to Porto with Alice.", "Porto"}},
		{"scene", "", testScene, "", []string{"Carol", "Carol likes green tea.", "green tea"}},
		{"last day, a year later", "", "", PeriodDay, []string{}},
		{"last year, a year later", "", "", PeriodYear, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_ = vm.Scope.Set(tt.scope)
			_ = vm.Scene.Set(tt.scene)
			_ = vm.Period.Set(tt.period)
			if err := vm.Refilter(ctx); err != nil {
				t.Fatal(err)
			}
			got := undimmed(vm.Sky())
			if tt.want == nil {
				if len(got) != 10 {
					t.Fatalf("no filter keeps %d stars", len(got))
				}
				return
			}
			if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Fatalf("kept %q, want %q", got, tt.want)
			}
		})
	}
	vm.now = func() time.Time { return time.Date(2026, 5, 15, 0, 0, 0, 0, time.UTC) }
	_ = vm.Scope.Set("")
	_ = vm.Scene.Set("")
	_ = vm.Period.Set(PeriodMonth)
	if err := vm.Refilter(ctx); err != nil {
		t.Fatal(err)
	}
	// The events are from 1 May 2026, the entities from January.
	if got := undimmed(vm.Sky()); len(got) != 4 || !strings.HasSuffix(got[0], ".") {
		t.Errorf("last month on 15 May keeps %q, want the four events", got)
	}
}

func TestStarMapActions(t *testing.T) {
	_, c := skyKernel(t)
	vm := loadSky(t, c)
	ctx := context.Background()
	entity := func(name string) (client.Entity, bool) {
		for _, e := range vm.Sky().Entities {
			if e.Name == name {
				return e, true
			}
		}
		return client.Entity{}, false
	}
	selectName := func(name string) {
		t.Helper()
		if err := vm.Select(ctx, node(t, vm.Sky(), name)); err != nil {
			t.Fatal(err)
		}
	}
	status := func() string { s, _ := vm.Status.Get(); return s }

	// Nothing selected: the actions say so.
	if err := vm.SetPinned(ctx, true); err == nil || status() != "Select a star first." {
		t.Errorf("pin without a selection: %v, %q", err, status())
	}
	selectName("Alice")
	if err := vm.SetPinned(ctx, true); err != nil {
		t.Fatal(err)
	}
	if e, _ := entity("Alice"); !e.Pinned || status() != "Pinned Alice." {
		t.Errorf("after pin: %+v, %q", e, status())
	}
	if sel, _ := vm.Selected.Get(); sel.Entity == nil || !sel.Entity.Entity.Pinned {
		t.Errorf("the side panel was not re-read after the pin: %+v", sel)
	}
	if err := vm.Edit(ctx, " ", "person", "", ""); err == nil || status() != "A star needs a name." {
		t.Errorf("edit with an empty name: %v %q", err, status())
	}
	if err := vm.Edit(ctx, "Alice", "person", "", "friends"); err == nil {
		t.Error("edit with a bad scope succeeded")
	}
	if err := vm.Edit(ctx, "Alice Silva", "person", "my neighbour", "private"); err != nil {
		t.Fatal(err)
	}
	if e, ok := entity("Alice Silva"); !ok || e.Text != "my neighbour" {
		t.Errorf("after edit: %+v %v", e, ok)
	}
	for _, tc := range []struct{ other, want string }{
		{"", "Enter the name of the star to merge."},
		{"nobody", "No star is called nobody."},
		{"alice silva", "A star cannot be merged with itself."},
	} {
		if err := vm.Merge(ctx, tc.other); err == nil || status() != tc.want {
			t.Errorf("merge %q: %v, status %q, want %q", tc.other, err, status(), tc.want)
		}
	}
	if err := vm.Merge(ctx, "BOB"); err != nil {
		t.Fatal(err)
	}
	if _, ok := entity("Bob"); ok || status() != "Merged Bob into Alice Silva." {
		t.Errorf("Bob still there after the merge (%q)", status())
	}
	sel, _ := vm.Selected.Get()
	var lives client.Triple
	for _, tr := range sel.Entity.Triples {
		if tr.Predicate == "lives in" {
			lives = tr
		}
	}
	if err := vm.PinTriple(ctx, lives.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := vm.EditTriple(ctx, lives, "lives in", " "); err == nil {
		t.Error("a correction without an object succeeded")
	}
	if err := vm.EditTriple(ctx, lives, "lives in", "Lisbon"); err != nil {
		t.Fatal(err)
	}
	if _, ok := entity("Lisbon"); !ok {
		t.Error("the correction's object is not a star")
	}
	// Forgetting the Acme fact's only source forgets the fact.
	if err := vm.ForgetEvents(ctx, []int64{102}); err != nil {
		t.Fatal(err)
	}
	if status() != "Forgot 1 events and 1 facts." {
		t.Errorf("status %q", status())
	}
	if _, ok := vm.Sky().EventNode(102); ok {
		t.Error("the forgotten event is still a star")
	}
	selectName("Carol")
	if err := vm.Forget(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := entity("Carol"); ok {
		t.Error("Carol is still a star after Forget")
	}
	if sel, _ := vm.Selected.Get(); sel.Node != -1 {
		t.Errorf("the forgotten star is still selected: %+v", sel)
	}
	if err := vm.ForgetEvents(ctx, nil); err == nil {
		t.Error("forgetting nothing succeeded")
	}
}

// skyWindow shows the star map over c in a test window, loaded and drawn once.
func skyWindow(t *testing.T, c client.Service) (*starMapView, fyne.Window) {
	t.Helper()
	test.NewTempApp(t)
	old := flyDuration
	flyDuration = 0
	t.Cleanup(func() { flyDuration = old })
	vm := NewStarMapVM(c, nil)
	w := test.NewTempWindow(t, nil)
	v := newStarMapView(vm, w)
	w.SetContent(v.root)
	w.Resize(fyne.NewSize(1100, 720))
	if err := vm.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.Canvas().Capture() // draws the sky once: the view fits the layout
	return v, w
}

// starPos is where node i is drawn, in the window's coordinates.
func starPos(v *starMapView, i int) fyne.Position {
	p := v.sky.View().ToPixel(v.vm.Sky().Layout.Pos[i])
	abs := fyne.CurrentApp().Driver().AbsolutePositionForObject(v.sky)
	return abs.Add(fyne.NewPos(float32(p.X)/v.sky.pxScale, float32(p.Y)/v.sky.pxScale))
}

// lit counts the pixels of img brighter than the sky's background.
func lit(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8+g>>8+bl>>8 > 300 {
				n++
			}
		}
	}
	return n
}

func TestStarMapView(t *testing.T) {
	_, c := skyKernel(t)
	v, w := skyWindow(t, c)
	vm := v.vm
	if v.sky.Frames() == 0 || lit(v.sky.img) < 50 {
		t.Fatalf("the sky was not drawn: %d frames, %d lit pixels", v.sky.Frames(), lit(v.sky.img))
	}
	if !uiHasText(w, "You are at the centre") {
		t.Errorf("no help in the side panel: %q", uiTexts(w))
	}
	// The legend lists the kinds present and the relations drawn in colour.
	for _, want := range []string{"person (3)", "place (1)", "memory (4)", "knows (1)", "lives in (1)", "other relations, and memories"} {
		if !uiHasText(w, want) {
			t.Errorf("the legend lacks %q: %q", want, uiTexts(w))
		}
	}
	if uiHasText(w, "animal") {
		t.Errorf("the legend lists a kind the sky does not hold: %q", uiTexts(w))
	}

	// Hover shows the tooltip; tapping selects; the side panel shows facts and provenance.
	alice := node(t, vm.Sky(), "Alice")
	test.MoveMouse(w.Canvas(), starPos(v, alice))
	if !v.sky.tip.Visible() || !strings.HasPrefix(v.sky.tipTxt.Text, "Alice · person · 3 mentions") {
		t.Errorf("tooltip %q (visible %v)", v.sky.tipTxt.Text, v.sky.tip.Visible())
	}
	test.TapCanvas(w.Canvas(), starPos(v, alice))
	vm.Wait()
	if sel, _ := vm.Selected.Get(); sel.Node != alice {
		t.Fatalf("tap on Alice selected %+v", sel)
	}
	for _, want := range []string{"Facts (3)", "Alice — lives in — Porto", "Bob — knows — Alice", "From 1 events:"} {
		if !uiHasText(w, want) {
			t.Errorf("side panel lacks %q: %q", want, uiTexts(w))
		}
	}
	test.Tap(uiButton(t, w, "#101"))
	vm.Wait()
	if !uiHasText(w, "Event #101 in its conversation") || !uiHasText(w, "I moved to Porto with Alice.") || !uiHasText(w, "Alice works at Acme now.") {
		t.Errorf("the source event is not shown in context: %q", uiTexts(w))
	}
	test.Tap(uiButton(t, w, "Close"))
	test.MoveMouse(w.Canvas(), fyne.NewPos(2, 2))
	if v.sky.tip.Visible() {
		t.Error("the tooltip stays after the pointer left the star")
	}

	// Pointing at a line, away from its stars, names its relation, and the line is drawn bright.
	s := vm.Sky()
	porto := node(t, s, "Porto")
	k := slices.IndexFunc(s.Graph.Edges, func(e starmap.Edge) bool { return e.From == alice && e.To == porto })
	if k < 0 {
		t.Fatal("no Alice–Porto line")
	}
	a, b := starPos(v, alice), starPos(v, porto)
	w.Canvas().Capture()
	dark := lit(v.sky.img) // the sky alone, without the tooltip
	// A point of the line no star covers.
	for _, f := range []float32{0.5, 0.4, 0.6, 0.3, 0.7} {
		test.MoveMouse(w.Canvas(), fyne.NewPos(a.X+(b.X-a.X)*f, a.Y+(b.Y-a.Y)*f))
		if v.sky.tip.Visible() && v.sky.tipTxt.Text == "Alice — lives in — Porto" {
			break
		}
	}
	if !v.sky.tip.Visible() || v.sky.tipTxt.Text != "Alice — lives in — Porto" {
		t.Errorf("pointing at the line: tooltip %q (visible %v)", v.sky.tipTxt.Text, v.sky.tip.Visible())
	}
	w.Canvas().Capture()
	if bright := lit(v.sky.img); bright <= dark {
		t.Errorf("the hovered line is not drawn brighter: %d lit pixels, %d before", bright, dark)
	}
	test.MoveMouse(w.Canvas(), fyne.NewPos(2, 2))

	// Drag pans, the wheel zooms about the pointer, Fit shows everything again.
	before := v.sky.View()
	centre := fyne.CurrentApp().Driver().AbsolutePositionForObject(v.sky).Add(fyne.NewPos(v.sky.Size().Width/2, v.sky.Size().Height/2))
	test.Drag(w.Canvas(), centre, 40, -30)
	after := v.sky.View()
	if dx := (before.Center.X - after.Center.X) * before.Zoom; math.Abs(dx-40*float64(v.sky.pxScale)) > 0.5 {
		t.Errorf("a drag of 40 px moved the sky %.1f px", dx)
	}
	test.Scroll(w.Canvas(), centre, 0, 50)
	if z := v.sky.View().Zoom; !(z > after.Zoom*1.5) {
		t.Errorf("scrolling up zoomed %v → %v", after.Zoom, z)
	}
	test.Tap(uiIconButton(t, w, "zoom-fit"))
	if got := v.sky.View(); got.Zoom != before.Zoom || got.Center != before.Center {
		t.Errorf("fit: %+v, want %+v", got, before)
	}

	// The search flies to the best match and selects it.
	test.Type(uiEntry(t, w, "Search the stars…"), "acme")
	test.Tap(uiIconButton(t, w, "search"))
	vm.Wait()
	acme := node(t, vm.Sky(), "Acme")
	if sel, _ := vm.Selected.Get(); sel.Node != acme {
		t.Fatalf("search acme selected %+v", sel)
	}
	if got := v.sky.View(); got.Center != vm.Sky().Layout.Pos[acme] || got.Zoom < before.Zoom*flyZoomFactor {
		t.Errorf("the view did not fly to Acme: %+v", got)
	}

	// Actions from the panel: Forget asks first.
	test.Tap(uiButton(t, w, "Forget"))
	if !uiHasText(w, "Forget Acme with all its facts?") {
		t.Fatalf("no confirmation: %q", uiTexts(w))
	}
	test.Tap(uiButton(t, w, "Cancel"))
	vm.Wait()
	if _, ok := vm.Sky().EntityNode(vm.Sky().Entities[acme].ID); !ok {
		t.Fatal("forgot without confirmation")
	}
	test.Tap(uiButton(t, w, "Forget"))
	test.Tap(uiButtons(w, "Forget")[len(uiButtons(w, "Forget"))-1]) // the dialog's
	vm.Wait()
	if got, _ := vm.Status.Get(); got != "Forgot Acme." {
		t.Errorf("status %q", got)
	}
}

// uiIconButton returns the only text-less button whose icon's name holds name.
func uiIconButton(t *testing.T, w fyne.Window, name string) *widget.Button {
	t.Helper()
	var found []*widget.Button
	for _, b := range uiButtons(w, "") {
		if b.Icon != nil && strings.Contains(strings.ToLower(b.Icon.Name()), strings.ToLower(name)) {
			found = append(found, b)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d icon buttons named %q", len(found), name)
	}
	return found[0]
}

// TestStarMapOwnerAndWorlds: the owner's names are one star at the centre, labelled with the
// profile name; people are hubs with their worlds; relations get colours; the kind filter dims
// what it leaves out.
func TestStarMapOwnerAndWorlds(t *testing.T) {
	f, c := uiKernel(t)
	// The owner names themselves in their own words; a partner saying it does not count.
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	f.AddMemory(
		client.MemoryHit{ID: 201, Session: "s1", Time: at, Role: "user", Scope: "private", Layer: 2, Content: "Hi! My name is Sasha, by the way."},
		client.MemoryHit{ID: 202, Session: "s2", Time: at, Role: "user", Partner: "bob", Scope: "private", Layer: 2, Content: "my name is Bob"},
	)
	f.AddFact(client.TripleInput{Subject: "Sasha", SubjectKind: "person", Predicate: "mentioned", Object: "Porto", ObjectKind: "place"}, 201)
	f.AddFact(client.TripleInput{Subject: "Bob", SubjectKind: "person", Predicate: "mentioned", Object: "Berlin", ObjectKind: "place"}, 202)
	for _, tr := range []client.TripleInput{
		{Subject: "owner", SubjectKind: "person", Predicate: "name", Object: "Alex", ObjectKind: "person"},
		{Subject: "me", SubjectKind: "person", Predicate: "likes", Object: "green tea", ObjectKind: "thing"},
		{Subject: "owner", SubjectKind: "person", Predicate: "lives in", Object: "Porto", ObjectKind: "place"},
		{Subject: "Sasha", SubjectKind: "person", Predicate: "knows", Object: "Alice", ObjectKind: "person"},
		{Subject: "Alice", SubjectKind: "person", Predicate: "lives in", Object: "Lisbon", ObjectKind: "place"},
		{Subject: "Alice", SubjectKind: "person", Predicate: "has pet", Object: "Rex", ObjectKind: "animal"},
		{Subject: "Alice", SubjectKind: "person", Predicate: "visited", Object: "2024 trip", ObjectKind: "event"},
		{Subject: "Bob", SubjectKind: "person", Predicate: "works at", Object: "Acme", ObjectKind: "org"},
		{Subject: "Bob", SubjectKind: "person", Predicate: "lives in", Object: "Berlin", ObjectKind: "place"},
	} {
		f.AddFact(tr)
	}
	vm := loadSky(t, c)
	s := vm.Sky()
	if s.Owner < 0 {
		t.Fatal("no owner star")
	}
	for _, name := range []string{"owner", "me", "Sasha", "Alex"} {
		var id int64
		for _, e := range s.Entities {
			if e.Name == name {
				id = e.ID
			}
		}
		found := false
		for eid, i := range s.byEntity {
			if i == s.Owner && (eid == id || id == 0) {
				found = true
			}
		}
		if !found {
			t.Errorf("%q is not the owner's star", name)
		}
	}
	stars := map[string]int{}
	for _, n := range s.Graph.Nodes {
		stars[n.Label]++
	}
	if stars["owner"]+stars["me"]+stars["Sasha"] != 0 || stars["Alex"] != 1 || stars["Bob"] != 1 {
		t.Errorf("the owner's names are drawn as %d×owner, %d×me, %d×Sasha, %d×Alex (Bob %d); want one Alex, one Bob", stars["owner"],
			stars["me"], stars["Sasha"], stars["Alex"], stars["Bob"])
	}
	if p := s.Layout.Pos[s.Owner]; p != (starmap.Point{}) || !s.Graph.Nodes[s.Owner].Hub {
		t.Errorf("the owner is at %v (hub %v), not a hub at the centre", p, s.Graph.Nodes[s.Owner].Hub)
	}
	// Alice's things are nearer Alice than Bob, and Bob's nearer Bob.
	dist := func(a, b string) float64 {
		p, q := s.Layout.Pos[node(t, s, a)], s.Layout.Pos[node(t, s, b)]
		return math.Hypot(p.X-q.X, p.Y-q.Y)
	}
	for _, tc := range []struct{ item, own, other string }{
		{"Lisbon", "Alice", "Bob"}, {"Rex", "Alice", "Bob"}, {"Acme", "Bob", "Alice"}, {"Berlin", "Bob", "Alice"},
		{"green tea", "Alex", "Bob"},
	} {
		if dist(tc.item, tc.own) >= dist(tc.item, tc.other) {
			t.Errorf("%s is nearer %s (%.2f) than %s (%.2f)", tc.item, tc.other, dist(tc.item, tc.other), tc.own, dist(tc.item, tc.own))
		}
	}
	// "lives in" is the most frequent predicate: the first colour, on its edges.
	if len(s.Relations) == 0 || s.Relations[0].Predicate != "lives in" || s.Relations[0].Class != 1 || s.Relations[0].Count != 3 {
		t.Errorf("relations %+v", s.Relations)
	}
	for _, e := range s.Graph.Edges {
		if e.Label == "lives in" && e.Class != 1 {
			t.Errorf("a lives-in edge has class %d", e.Class)
		}
	}
	// The kind filter.
	ctx := context.Background()
	for _, tc := range []struct {
		hide string
		want []string
	}{
		{GroupPeople, []string{"2024 trip", "Acme", "Berlin", "Hi! My name is Sasha, by the wa…", "Lisbon", "Porto", "Rex", "green tea", "my name is Bob"}},
		{GroupPlaces, []string{"2024 trip", "Acme", "Alex", "Alice", "Bob", "Hi! My name is Sasha, by the wa…", "Rex", "green tea", "my name is Bob"}},
		{GroupThings, []string{"2024 trip", "Alex", "Alice", "Berlin", "Bob", "Hi! My name is Sasha, by the wa…", "Lisbon", "Porto", "my name is Bob"}},
		{GroupEvents, []string{"Acme", "Alex", "Alice", "Berlin", "Bob", "Lisbon", "Porto", "Rex", "green tea"}},
	} {
		_ = vm.Show[tc.hide].Set(false)
		if err := vm.Refilter(ctx); err != nil {
			t.Fatal(err)
		}
		if got := undimmed(vm.Sky()); !slices.Equal(got, tc.want) {
			t.Errorf("without %s: %q, want %q", tc.hide, got, tc.want)
		}
		_ = vm.Show[tc.hide].Set(true)
	}
}

// TestStarMapTimeline: the timeline lays facts out by valid-from, fades the stars whose facts
// have all been superseded, and switching back restores the worlds.
func TestStarMapTimeline(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC).AddDate(0, 0, d) } // noon: the same date in any zone
	ents := []client.Entity{{ID: 1, Name: "Alice", Kind: "person"}, {ID: 2, Name: "Porto", Kind: "place"},
		{ID: 3, Name: "Lisbon", Kind: "place"}, {ID: 4, Name: "Acme", Kind: "org"}}
	trs := []client.Triple{
		{ID: 10, Subject: 1, Object: 2, Predicate: "lives in", ValidFrom: day(0), ValidTo: day(40), SupersededBy: 11},
		{ID: 11, Subject: 1, Object: 3, Predicate: "lives in", ValidFrom: day(40)},
		{ID: 12, Subject: 1, Object: 4, Predicate: "works at", ValidFrom: day(90)},
	}
	s := buildSky(ents, trs, nil, nil)
	worlds := slices.Clone(s.Layout.Pos)
	vm := NewStarMapVM(nil, nil)
	vm.publish(s)
	_ = vm.Timeline.Set(true)
	if err := vm.Refilter(context.Background()); err != nil {
		t.Fatal(err)
	}
	tl := vm.Sky()
	x := func(name string) float64 { return tl.Layout.Pos[node(t, tl, name)].X }
	if !tl.Timeline || !(x("Porto") < x("Lisbon") && x("Lisbon") < x("Acme")) {
		t.Errorf("timeline %v: Porto %.1f, Lisbon %.1f, Acme %.1f: want in valid-from order", tl.Timeline, x("Porto"), x("Lisbon"), x("Acme"))
	}
	if got := undimmed(tl); !slices.Equal(got, []string{"Acme", "Alice", "Lisbon"}) {
		t.Errorf("the timeline shows %q, want Porto (superseded) faded", got)
	}
	if st, _ := vm.Status.Get(); st != "Timeline from 2025-03-01 (left) to 2025-05-30 (right); rows: people, places, things, events, time." {
		t.Errorf("status %q", st)
	}
	if tl.Index == nil || len(tl.Layout.Pos) != 4 {
		t.Fatalf("timeline layout %+v", tl.Layout)
	}
	_ = vm.Timeline.Set(false)
	if err := vm.Refilter(context.Background()); err != nil {
		t.Fatal(err)
	}
	if back := vm.Sky(); back.Timeline || !slices.Equal(back.Layout.Pos, worlds) || len(undimmed(back)) != 4 {
		t.Errorf("back from the timeline: timeline %v, same worlds %v, %d undimmed", back.Timeline, slices.Equal(back.Layout.Pos, worlds), len(undimmed(back)))
	}
}
