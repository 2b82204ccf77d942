package gui

import (
	"context"
	"fmt"
	"image/color"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/starmap"
)

// kindText is an entity kind in the current language.
func kindText(kind string) string {
	switch kind {
	case "person":
		return T("person")
	case "place":
		return T("place")
	case "org":
		return T("organisation")
	case "thing":
		return T("thing")
	case "concept":
		return T("concept")
	case "time":
		return T("time")
	case "event":
		return T("event")
	case "animal":
		return T("animal")
	case "note":
		return T("note")
	case eventKind:
		return T("memory")
	case "":
		return T("unknown kind")
	}
	return kind
}

// scopeText is a scope in the current language.
func scopeText(scope string) string {
	switch {
	case scope == client.ScopePrivate:
		return T("private")
	case scope == client.ScopePublic:
		return T("public")
	case strings.HasPrefix(scope, client.ScopeGroup):
		return Tf("group %s", strings.TrimPrefix(scope, client.ScopeGroup))
	}
	return scope
}

// timeText formats a time for the panels ("" for the zero time).
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04")
}

// starMapView is the star map screen: a toolbar (search, filters, zoom), the sky, and the side
// panel of the selection.
type starMapView struct {
	vm    *StarMapVM
	w     fyne.Window
	sky   *skyWidget
	panel *fyne.Container
	root  fyne.CanvasObject
}

// NewStarMapView builds the star map view over vm. The graph is read when the view opens (and
// by its Refresh button); w hosts the dialogs.
func NewStarMapView(vm *StarMapVM, w fyne.Window) fyne.CanvasObject {
	return newStarMapView(vm, w).root
}

func newStarMapView(vm *StarMapVM, w fyne.Window) *starMapView {
	v := &starMapView{vm: vm, w: w, sky: newSkyWidget(vm), panel: container.NewVBox()}

	search := widget.NewEntryWithData(vm.Query)
	search.SetPlaceHolder(T("Search the stars…"))
	search.OnSubmitted = func(string) { v.search() }
	searchBtn := widget.NewButtonWithIcon("", theme.SearchIcon(), v.search)

	allScopes, allScenes := T("All scopes"), T("All scenes")
	scopeSel := widget.NewSelect([]string{allScopes}, nil)
	scopeSel.SetSelected(allScopes)
	scopeOf := map[string]string{allScopes: ""}
	scopeSel.OnChanged = func(s string) {
		_ = vm.Scope.Set(scopeOf[s])
		v.refilter()
	}
	vm.Scopes.AddListener(binding.NewDataListener(func() {
		scopes, _ := vm.Scopes.Get()
		opts := []string{allScopes}
		for _, sc := range scopes {
			opts = append(opts, scopeText(sc))
			scopeOf[scopeText(sc)] = sc
		}
		scopeSel.SetOptions(opts)
	}))
	sceneSel := widget.NewSelect([]string{allScenes}, nil)
	sceneSel.SetSelected(allScenes)
	sceneOf := map[string]string{allScenes: ""}
	sceneSel.OnChanged = func(s string) {
		_ = vm.Scene.Set(sceneOf[s])
		v.refilter()
	}
	vm.Scenes.AddListener(binding.NewDataListener(func() {
		scenes, _ := vm.Scenes.Get()
		opts := []string{allScenes}
		for _, sc := range scenes {
			opts = append(opts, sc.Key)
			sceneOf[sc.Key] = sc.Key
		}
		sceneSel.SetOptions(opts)
	}))
	periods := []struct{ label, value string }{
		{T("All time"), PeriodAll}, {T("Last day"), PeriodDay}, {T("Last week"), PeriodWeek},
		{T("Last month"), PeriodMonth}, {T("Last year"), PeriodYear},
	}
	var periodLabels []string
	periodOf := map[string]string{}
	for _, p := range periods {
		periodLabels = append(periodLabels, p.label)
		periodOf[p.label] = p.value
	}
	periodSel := widget.NewSelect(periodLabels, nil)
	periodSel.SetSelected(periods[0].label) // before OnChanged: building the view filters nothing
	periodSel.OnChanged = func(s string) {
		_ = vm.Period.Set(periodOf[s])
		v.refilter()
	}

	zoomIn := widget.NewButtonWithIcon("", theme.ZoomInIcon(), func() { v.sky.Zoom(1.5) })
	zoomOut := widget.NewButtonWithIcon("", theme.ZoomOutIcon(), func() { v.sky.Zoom(1 / 1.5) })
	fit := widget.NewButtonWithIcon("", theme.ZoomFitIcon(), v.sky.Fit)
	refresh := widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), func() {
		vm.spawn(func(ctx context.Context) { _ = vm.Load(ctx) })
	})
	status := widget.NewLabelWithData(vm.Status)
	status.Truncation = fyne.TextTruncateEllipsis

	toolbar := container.NewBorder(nil, nil, nil,
		container.NewHBox(scopeSel, sceneSel, periodSel, zoomOut, zoomIn, fit, refresh),
		container.NewBorder(nil, nil, nil, searchBtn, search))
	// The kind filter: one switch per group.
	filters := container.NewHBox(widget.NewLabel(T("Show:")))
	for _, g := range Groups {
		b := vm.Show[g]
		on, _ := b.Get()
		check := widget.NewCheck(groupText(g), nil)
		check.SetChecked(on) // before OnChanged: building the view filters nothing
		check.OnChanged = func(on bool) {
			_ = b.Set(on)
			v.refilter()
		}
		filters.Add(check)
	}
	timeline := widget.NewCheck(T("Timeline"), func(on bool) {
		_ = vm.Timeline.Set(on)
		v.refilter()
	})
	filters.Add(widget.NewSeparator())
	filters.Add(timeline)
	toolbar = container.NewVBox(toolbar, filters)

	vm.Version.AddListener(binding.NewDataListener(func() {
		fyne.Do(func() {
			v.sky.refresh()
			if sel, _ := vm.Selected.Get(); sel.Node < 0 {
				v.showSelection() // the legend follows the sky
			}
		})
	}))
	vm.Selected.AddListener(binding.NewDataListener(func() {
		fyne.Do(func() {
			v.showSelection()
			v.sky.refresh()
		})
	}))
	v.showSelection()

	panel := container.NewVScroll(container.NewPadded(v.panel))
	panel.SetMinSize(fyne.NewSize(300, 0))
	split := container.NewHSplit(v.sky, panel)
	split.Offset = 0.72
	v.root = container.NewBorder(toolbar, status, nil, nil, split)
	return v
}

// search applies the search text and flies to the best match.
func (v *starMapView) search() {
	vm := v.vm
	vm.spawn(func(ctx context.Context) {
		if i, err := vm.Search(ctx); err == nil && i >= 0 {
			fyne.Do(func() { v.sky.FlyTo(i) })
		}
	})
}

// refilter applies a changed filter.
func (v *starMapView) refilter() {
	vm := v.vm
	vm.spawn(func(ctx context.Context) { _ = vm.Refilter(ctx) })
}

// showSelection fills the side panel from the selection.
func (v *starMapView) showSelection() {
	sel, _ := v.vm.Selected.Get()
	var objs []fyne.CanvasObject
	switch {
	case sel.Entity != nil:
		objs = v.entityPanel(sel.Entity)
	case sel.Event != nil:
		objs = v.eventPanel(sel.Event)
	default:
		help := widget.NewLabel(T("You are at the centre; every person you talk about is a ringed star with their world around them: the places, things and events memory links to them. Stars are sized by how often they come up and coloured by kind; lines are facts, coloured by relation.\n\nDrag to move, scroll to zoom, point at a line to read it, click a star to see what memory holds about it."))
		help.Wrapping = fyne.TextWrapWord
		objs = append([]fyne.CanvasObject{heading(T("Star map")), help}, legend(v.vm.Sky())...)
	}
	v.panel.Objects = objs
	v.panel.Refresh()
}

// heading is a bold title label.
func heading(text string) *widget.Label {
	l := widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	l.Wrapping = fyne.TextWrapWord
	return l
}

// groupText is a group of the kind filter in the current language.
func groupText(g string) string {
	switch g {
	case GroupPeople:
		return T("People")
	case GroupPlaces:
		return T("Places")
	case GroupThings:
		return T("Things")
	case GroupEvents:
		return T("Events")
	case GroupTime:
		return T("Time")
	}
	return g
}

// legendKinds is the order of the kinds in the legend.
var legendKinds = []string{"person", "place", "org", "thing", "concept", "time", "event", "animal", "note", eventKind}

// legend explains what the sky draws: the colours of the kinds present (with how many stars),
// and of the relations drawn in colour (with how many facts).
func legend(s *Sky) []fyne.CanvasObject {
	kinds := map[string]int{}
	for _, n := range s.Graph.Nodes {
		kinds[n.Kind]++
	}
	box := container.NewVBox()
	row := func(shape fyne.CanvasObject, text string) {
		box.Add(container.NewHBox(container.NewGridWrap(fyne.NewSize(14, 14), shape), widget.NewLabel(text)))
	}
	for _, k := range legendKinds {
		if kinds[k] == 0 {
			continue
		}
		row(canvas.NewCircle(starmap.KindColor(k)), fmt.Sprintf("%s (%d)", kindText(k), kinds[k]))
		delete(kinds, k)
	}
	if len(kinds) > 0 {
		other := 0
		for _, c := range kinds {
			other += c
		}
		row(canvas.NewCircle(starmap.KindColor("")), Tf("other kinds (%d)", other))
	}
	if len(s.Relations) == 0 {
		return []fyne.CanvasObject{box}
	}
	rels := container.NewVBox()
	for _, r := range s.Relations {
		line := canvas.NewRectangle(starmap.RelationColor(r.Class))
		line.SetMinSize(fyne.NewSize(18, 3))
		rels.Add(container.NewHBox(container.NewCenter(line), widget.NewLabel(fmt.Sprintf("%s (%d)", r.Predicate, r.Count))))
	}
	line := canvas.NewRectangle(starmap.RelationColor(0))
	line.SetMinSize(fyne.NewSize(18, 3))
	rels.Add(container.NewHBox(container.NewCenter(line), widget.NewLabel(T("other relations, and memories"))))
	return []fyne.CanvasObject{heading(T("Kinds")), box, heading(T("Relations")), rels}
}

// field is one "Label: value" line of a panel.
func field(label, value string) fyne.CanvasObject {
	l := widget.NewLabel(label + ": " + value)
	l.Wrapping = fyne.TextWrapWord
	return l
}

// entityPanel shows an entity: its facts, validity and provenance, and the actions.
func (v *starMapView) entityPanel(d *client.EntityDetail) []fyne.CanvasObject {
	e := d.Entity
	vm := v.vm
	dot := canvas.NewCircle(starmap.KindColor(e.Kind))
	title := container.NewBorder(nil, nil, container.NewGridWrap(fyne.NewSize(14, 14), dot), nil, heading(e.Name))
	objs := []fyne.CanvasObject{title,
		field(T("Kind"), kindText(e.Kind)),
		field(T("Scope"), scopeText(e.Scope)),
		field(T("Mentions"), fmt.Sprint(e.Mentions)),
	}
	if e.Pinned {
		objs = append(objs, field(T("Pinned"), T("yes: never fades from memory")))
	}
	if e.Origin != "" {
		objs = append(objs, field(T("Learnt by"), originText(e.Origin)))
	}
	objs = append(objs, field(T("First seen"), timeText(e.Created)))
	if t := timeText(e.LastRecalled); t != "" {
		objs = append(objs, field(T("Last recalled"), t))
	}
	if strings.TrimSpace(e.Text) != "" {
		txt := widget.NewLabel(e.Text)
		txt.Wrapping = fyne.TextWrapWord
		objs = append(objs, txt)
	}
	pin := widget.NewButtonWithIcon(T("Pin"), theme.ContentAddIcon(), func() {
		vm.spawn(func(ctx context.Context) { _ = vm.SetPinned(ctx, true) })
	})
	if e.Pinned {
		pin = widget.NewButtonWithIcon(T("Unpin"), theme.ContentRemoveIcon(), func() {
			vm.spawn(func(ctx context.Context) { _ = vm.SetPinned(ctx, false) })
		})
	}
	edit := widget.NewButtonWithIcon(T("Edit"), theme.DocumentCreateIcon(), func() { v.editDialog(e) })
	merge := widget.NewButtonWithIcon(T("Merge…"), theme.ContentCopyIcon(), func() { v.mergeDialog(e) })
	forget := widget.NewButtonWithIcon(T("Forget"), theme.DeleteIcon(), func() {
		confirm(v.w, T("Forget this star"), Tf("Forget %s with all its facts? This cannot be undone.", e.Name), T("Forget"), func() {
			vm.spawn(func(ctx context.Context) { _ = vm.Forget(ctx) })
		})
	})
	forget.Importance = widget.DangerImportance
	objs = append(objs, container.NewGridWithColumns(2, pin, edit, merge, forget), widget.NewSeparator(),
		heading(Tf("Facts (%d)", len(d.Triples))))
	if len(d.Triples) == 0 {
		objs = append(objs, widget.NewLabel(T("No facts yet.")))
	}
	for _, t := range d.Triples {
		objs = append(objs, v.tripleCard(t))
	}
	if len(d.Blocks) > 0 {
		objs = append(objs, widget.NewSeparator(), heading(Tf("Attachments (%d)", len(d.Blocks))))
		for _, b := range d.Blocks {
			objs = append(objs, field(b.Kind, cmpOr(b.Name, b.ID)))
		}
	}
	return objs
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// originText says who made a thing.
func originText(o string) string {
	switch o {
	case "llm":
		return T("the model, from conversations")
	case "rules":
		return T("rules, from conversations")
	case "owner":
		return T("you")
	case "import":
		return T("an import")
	}
	return o
}

// validityText says when a triple holds.
func validityText(t client.Triple) string {
	from, to := timeText(t.ValidFrom), timeText(t.ValidTo)
	switch {
	case t.SupersededBy != 0:
		return Tf("superseded (was true %s – %s)", from, to)
	case to != "":
		return Tf("true %s – %s", from, to)
	case from != "":
		return Tf("true since %s", from)
	}
	return T("true")
}

// tripleCard shows one fact with its validity, provenance and actions.
func (v *starMapView) tripleCard(t client.Triple) fyne.CanvasObject {
	vm := v.vm
	text := widget.NewLabel(t.SubjectName + " — " + t.Predicate + " — " + t.ObjectName)
	text.Wrapping = fyne.TextWrapWord
	// The relation's colour, as its line is drawn in the sky.
	swatch := canvas.NewRectangle(starmap.RelationColor(vm.Sky().RelationClass(t.Predicate)))
	swatch.SetMinSize(fyne.NewSize(4, 0))
	text.TextStyle.Bold = t.SupersededBy == 0 && t.ValidTo.IsZero()
	meta := validityText(t) + " · " + scopeText(t.Scope)
	if t.Pinned {
		meta += " · " + T("pinned")
	}
	objs := []fyne.CanvasObject{container.NewBorder(nil, nil, swatch, nil, text), widget.NewLabel(meta)}
	if len(t.Sources) > 0 {
		src := container.NewHBox(widget.NewLabel(Tf("From %d events:", len(t.Sources))))
		for k, id := range t.Sources {
			if k == 4 {
				src.Add(widget.NewLabel(Tf("and %d more", len(t.Sources)-k)))
				break
			}
			src.Add(widget.NewButton(fmt.Sprintf("#%d", id), func() { v.openEvent(id) }))
		}
		objs = append(objs, src)
	} else {
		objs = append(objs, widget.NewLabel(Tf("Added by %s", originText(t.Origin))))
	}
	if t.SupersededBy == 0 {
		pinLabel, pinned := T("Pin"), true
		if t.Pinned {
			pinLabel, pinned = T("Unpin"), false
		}
		pin := widget.NewButton(pinLabel, func() {
			vm.spawn(func(ctx context.Context) { _ = vm.PinTriple(ctx, t.ID, pinned) })
		})
		edit := widget.NewButton(T("Correct"), func() { v.correctDialog(t) })
		row := container.NewHBox(pin, edit)
		if len(t.Sources) > 0 {
			forget := widget.NewButton(T("Forget sources"), func() {
				confirm(v.w, T("Forget the sources"), Tf("Forget the %d events this fact came from? Facts that have no other source go too.", len(t.Sources)), T("Forget"), func() {
					vm.spawn(func(ctx context.Context) { _ = vm.ForgetEvents(ctx, t.Sources) })
				})
			})
			forget.Importance = widget.DangerImportance
			row.Add(forget)
		}
		objs = append(objs, row)
	}
	return widget.NewCard("", "", container.NewVBox(objs...))
}

// eventPanel shows an event star.
func (v *starMapView) eventPanel(ev *client.GraphEvt) []fyne.CanvasObject {
	vm := v.vm
	who := ev.Role
	if ev.Partner != "" {
		who = ev.Partner
	}
	txt := widget.NewLabel(ev.Content)
	txt.Wrapping = fyne.TextWrapWord
	open := widget.NewButtonWithIcon(T("Open in context"), theme.VisibilityIcon(), func() { v.openEvent(ev.ID) })
	forget := widget.NewButtonWithIcon(T("Forget"), theme.DeleteIcon(), func() {
		confirm(v.w, T("Forget this memory"), T("Forget this event? Facts that came only from it go too."), T("Forget"), func() {
			vm.spawn(func(ctx context.Context) { _ = vm.ForgetEvents(ctx, []int64{ev.ID}) })
		})
	})
	forget.Importance = widget.DangerImportance
	return []fyne.CanvasObject{heading(T("A memory")), field(T("When"), timeText(ev.Time)), field(T("Who"), who),
		field(T("Session"), ev.Session), field(T("Scope"), scopeText(ev.Scope)), txt,
		field(T("Facts from it"), fmt.Sprint(len(ev.Triples))), container.NewHBox(open, forget)}
}

// openEvent shows an event among its neighbours in a dialog.
func (v *starMapView) openEvent(id int64) {
	vm := v.vm
	vm.spawn(func(ctx context.Context) {
		evs, err := vm.EventContext(ctx, id)
		if err != nil {
			return
		}
		thumbs := readThumbnails(ctx, vm.svc, evs, inspectorThumbs)
		fyne.Do(func() { showEventContext(v.w, id, evs, thumbs) })
	})
}

// showEventContext is the dialog of an event in context, each event's images under it
// (thumbnails where thumbs has them, see hitImages).
func showEventContext(w fyne.Window, id int64, evs []client.MemoryHit, thumbs map[string][]byte) {
	box := container.NewVBox()
	for _, e := range evs {
		who := e.Role
		if e.Partner != "" {
			who = e.Partner
		}
		l := widget.NewLabel(fmt.Sprintf("%s  %s: %s", timeText(e.Time), who, e.Content))
		l.Wrapping = fyne.TextWrapWord
		if e.ID == id {
			l.TextStyle.Bold = true
			bg := canvas.NewRectangle(color.NRGBA{R: 255, G: 200, B: 120, A: 40})
			box.Add(container.NewStack(bg, l))
		} else {
			box.Add(l)
		}
		if imgs := hitImages(e.Images, thumbs); imgs != nil {
			box.Add(imgs)
		}
	}
	scroll := container.NewVScroll(box)
	scroll.SetMinSize(fyne.NewSize(560, 320))
	d := dialog.NewCustom(Tf("Event #%d in its conversation", id), T("Close"), scroll, w)
	d.Show()
}

// confirm asks before a destructive action.
func confirm(w fyne.Window, title, text, ok string, fn func()) {
	d := dialog.NewConfirm(title, text, func(yes bool) {
		if yes {
			fn()
		}
	}, w)
	d.SetConfirmText(ok)
	d.SetDismissText(T("Cancel"))
	d.Show()
}

// editDialog edits an entity's name, kind, text and scope.
func (v *starMapView) editDialog(e client.Entity) {
	vm := v.vm
	name := widget.NewEntry()
	name.SetText(e.Name)
	kind := widget.NewSelectEntry([]string{"person", "place", "org", "thing", "concept", "time", "event", "animal", "note"})
	kind.SetText(e.Kind)
	text := widget.NewMultiLineEntry()
	text.SetText(e.Text)
	text.Wrapping = fyne.TextWrapWord
	scope := widget.NewSelectEntry([]string{client.ScopePrivate, client.ScopePublic})
	scope.SetText(e.Scope)
	items := []*widget.FormItem{widget.NewFormItem(T("Name"), name), widget.NewFormItem(T("Kind"), kind),
		widget.NewFormItem(T("Text"), text), widget.NewFormItem(T("Scope"), scope)}
	d := dialog.NewForm(Tf("Edit %s", e.Name), T("Save"), T("Cancel"), items, func(ok bool) {
		if ok {
			vm.spawn(func(ctx context.Context) { _ = vm.Edit(ctx, name.Text, kind.Text, text.Text, scope.Text) })
		}
	}, v.w)
	d.Resize(fyne.NewSize(480, 360))
	d.Show()
}

// mergeDialog merges another star into e.
func (v *starMapView) mergeDialog(e client.Entity) {
	vm := v.vm
	other := widget.NewSelectEntry(vm.EntityNames())
	other.SetPlaceHolder(T("the other star's name"))
	items := []*widget.FormItem{widget.NewFormItem(T("Merge"), other)}
	d := dialog.NewForm(Tf("Merge another star into %s", e.Name), T("Merge"), T("Cancel"), items, func(ok bool) {
		if ok {
			vm.spawn(func(ctx context.Context) { _ = vm.Merge(ctx, other.Text) })
		}
	}, v.w)
	d.Resize(fyne.NewSize(420, 200))
	d.Show()
}

// correctDialog corrects a fact: the correction supersedes it.
func (v *starMapView) correctDialog(t client.Triple) {
	vm := v.vm
	pred := widget.NewEntry()
	pred.SetText(t.Predicate)
	obj := widget.NewEntry()
	obj.SetText(t.ObjectName)
	items := []*widget.FormItem{widget.NewFormItem(T("Relation"), pred), widget.NewFormItem(T("Object"), obj)}
	d := dialog.NewForm(Tf("Correct: %s", t.SubjectName+" "+t.Predicate+" "+t.ObjectName), T("Save"), T("Cancel"), items, func(ok bool) {
		if ok {
			vm.spawn(func(ctx context.Context) { _ = vm.EditTriple(ctx, t, pred.Text, obj.Text) })
		}
	}, v.w)
	d.Resize(fyne.NewSize(420, 220))
	d.Show()
}
