package gui

import (
	"context"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// NewInspectorView builds the memory inspector over vm: a session picker, then four tabs — the
// context window (why each item is in the prompt), what the last turn recalled, a cold-memory
// search with Forget, and the scenes. w hosts the confirmation dialogs.
func NewInspectorView(vm *InspectorVM, w fyne.Window) fyne.CanvasObject {
	sessOf := map[string]string{}
	sessSel := widget.NewSelect(nil, func(label string) {
		id, ok := sessOf[label]
		if !ok {
			return
		}
		if cur, _ := vm.Session.Get(); cur == id {
			return
		}
		vm.spawn(func(ctx context.Context) { _ = vm.Select(ctx, id) })
	})
	vm.Sessions.AddListener(binding.NewDataListener(func() {
		ss, _ := vm.Sessions.Get()
		cur, _ := vm.Session.Get()
		var opts []string
		selected := ""
		for _, s := range ss {
			label := s.ID
			if s.Title != "" && s.Title != s.ID {
				label = s.Title + " (" + s.ID + ")"
			}
			sessOf[label] = s.ID
			opts = append(opts, label)
			if s.ID == cur {
				selected = label
			}
		}
		fyne.Do(func() {
			sessSel.SetOptions(opts)
			if selected != "" && sessSel.Selected != selected {
				sessSel.SetSelected(selected)
			}
		})
	}))
	refresh := widget.NewButtonWithIcon(T("Refresh"), theme.ViewRefreshIcon(), func() {
		vm.spawn(func(ctx context.Context) { _ = vm.Refresh(ctx) })
	})
	forget := func(id int64) {
		confirm(w, T("Forget this memory"), T("Forget this event? Facts that came only from it go too."), T("Forget"), func() {
			vm.spawn(func(ctx context.Context) { _ = vm.Forget(ctx, id) })
		})
	}

	// The window.
	winHead := widget.NewLabel("")
	winHead.Wrapping = fyne.TextWrapWord
	winList := container.NewVBox()
	recallBox := container.NewVBox()
	vm.Window.AddListener(binding.NewDataListener(func() {
		win, _ := vm.Window.Get()
		fyne.Do(func() {
			winHead.SetText(Tf("Budget %d tokens, %d used · %d recent items pinned · %d sunk to cold memory when last computed.",
				win.Budget, win.Used, win.Pinned, win.Sunk) + "\n" + Tf("Scored against: %s", snippet(win.Input, 200)))
			objs := make([]fyne.CanvasObject, 0, len(win.Items))
			if len(win.Items) == 0 {
				objs = append(objs, widget.NewLabel(T("The window is empty.")))
			}
			for _, it := range win.Items {
				objs = append(objs, windowItemCard(it, forget))
			}
			winList.Objects = objs
			winList.Refresh()
			recallBox.Objects = recallObjects(win.Recall, forget)
			recallBox.Refresh()
		})
	}))

	// Cold search.
	query := widget.NewEntryWithData(vm.Query)
	query.SetPlaceHolder(T("Search cold memory (L2)…"))
	doSearch := func() { vm.spawn(func(ctx context.Context) { _ = vm.Search(ctx) }) }
	query.OnSubmitted = func(string) { doSearch() }
	hitsBox := container.NewVBox()
	vm.Hits.AddListener(binding.NewDataListener(func() {
		hits, _ := vm.Hits.Get()
		thumbs, _ := vm.Thumbs.Get()
		fyne.Do(func() {
			objs := make([]fyne.CanvasObject, 0, len(hits))
			for _, h := range hits {
				objs = append(objs, hitCard(h, forget, thumbs))
			}
			hitsBox.Objects = objs
			hitsBox.Refresh()
		})
	}))
	search := container.NewBorder(container.NewBorder(nil, nil, nil,
		widget.NewButtonWithIcon(T("Search"), theme.SearchIcon(), doSearch), query), nil, nil, nil,
		container.NewVScroll(hitsBox))

	// Scenes.
	scenesBox := container.NewVBox()
	vm.Scenes.AddListener(binding.NewDataListener(func() {
		scenes, _ := vm.Scenes.Get()
		fyne.Do(func() {
			objs := make([]fyne.CanvasObject, 0, len(scenes)+1)
			if len(scenes) == 0 {
				objs = append(objs, widget.NewLabel(T("No scenes yet: a scene forms when a situation recurs.")))
			}
			for _, s := range scenes {
				objs = append(objs, sceneCard(s))
			}
			scenesBox.Objects = objs
			scenesBox.Refresh()
		})
	}))

	tabs := container.NewAppTabs(
		container.NewTabItem(T("Context window"), container.NewBorder(winHead, nil, nil, nil, container.NewVScroll(winList))),
		container.NewTabItem(T("Last turn recalled"), container.NewVScroll(recallBox)),
		container.NewTabItem(T("Cold memory"), search),
		container.NewTabItem(T("Scenes"), container.NewVScroll(scenesBox)),
	)
	status := widget.NewLabelWithData(vm.Status)
	status.Truncation = fyne.TextTruncateEllipsis
	top := container.NewBorder(nil, nil, widget.NewLabel(T("Session")), refresh, sessSel)
	return container.NewBorder(top, status, nil, nil, tabs)
}

// windowItemCard is one item of the window: who, when, its score, why it is there, the text.
func windowItemCard(it client.WindowItem, forget func(int64)) fyne.CanvasObject {
	head := widget.NewLabelWithStyle(fmt.Sprintf("%s · %s · %s · %s", roleText(it.Role), timeText(it.Time),
		sourceText(it.Source), Tf("score %.2f · %d tokens", it.Score, it.Tokens)), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	why := widget.NewLabel(Tf("Why: %s", it.Reason))
	why.Wrapping = fyne.TextWrapWord
	body := widget.NewLabel(snippet(it.Content, 400))
	body.Wrapping = fyne.TextWrapWord
	return widget.NewCard("", "", container.NewVBox(head, why, body,
		container.NewHBox(widget.NewButtonWithIcon(T("Forget"), theme.DeleteIcon(), func() { forget(it.ID) }))))
}

// hitCard is one recalled event, with its images: thumbnails where thumbs has them, else their
// names.
func hitCard(h client.MemoryHit, forget func(int64), thumbs map[string][]byte) fyne.CanvasObject {
	who := roleText(h.Role)
	if h.Partner != "" {
		who = h.Partner
	}
	head := widget.NewLabelWithStyle(fmt.Sprintf("%s · %s · %s · L%d · %s", who, timeText(h.Time), scopeText(h.Scope), h.Layer,
		Tf("score %.2f", h.Score)), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	objs := []fyne.CanvasObject{head}
	if h.Reason != "" {
		why := widget.NewLabel(Tf("Why: %s", h.Reason))
		why.Wrapping = fyne.TextWrapWord
		objs = append(objs, why)
	}
	body := widget.NewLabel(snippet(h.Content, 400))
	body.Wrapping = fyne.TextWrapWord
	objs = append(objs, body)
	if imgs := hitImages(h.Images, thumbs); imgs != nil {
		objs = append(objs, imgs)
	}
	objs = append(objs, container.NewHBox(widget.NewButtonWithIcon(T("Forget"), theme.DeleteIcon(), func() { forget(h.ID) })))
	return widget.NewCard("", "", container.NewVBox(objs...))
}

// thumbSide is the side of the square a hit's thumbnail is shown in.
const thumbSide = 96

// hitImages shows a hit's images in a row: each thumbnail (scaled to fit thumbSide) over its
// name, "matched" for an image the query matched by its picture; nil when the hit has none.
func hitImages(ims []client.HitImage, thumbs map[string][]byte) fyne.CanvasObject {
	if len(ims) == 0 {
		return nil
	}
	row := container.NewHBox()
	for _, im := range ims {
		name := im.Name
		if name == "" {
			name = T("image")
		}
		if im.Matched {
			name = Tf("%s (matched)", name)
		}
		label := widget.NewLabel(snippet(name, 30))
		data, ok := thumbs[im.Block]
		if !ok {
			row.Add(label)
			continue
		}
		pic := canvas.NewImageFromResource(fyne.NewStaticResource(im.Block+".png", data))
		pic.FillMode = canvas.ImageFillContain
		pic.SetMinSize(fyne.NewSize(thumbSide, thumbSide))
		row.Add(container.NewVBox(pic, label))
	}
	return row
}

// recallObjects shows what the last turn recalled.
func recallObjects(r *client.Recall, forget func(int64)) []fyne.CanvasObject {
	if r == nil {
		return []fyne.CanvasObject{widget.NewLabel(T("No turn ran in this session since the kernel started."))}
	}
	head := widget.NewLabel(Tf("Turn at %s for: %s", timeText(r.Time), snippet(r.Input, 200)))
	head.Wrapping = fyne.TextWrapWord
	objs := []fyne.CanvasObject{head, heading(Tf("Facts (%d)", len(r.Facts)))}
	if len(r.Facts) == 0 {
		objs = append(objs, widget.NewLabel(T("No fact was recalled.")))
	}
	for _, f := range r.Facts {
		l := widget.NewLabel(fmt.Sprintf("%s  (%s)", f.Text, Tf("score %.2f", f.Score)))
		l.Wrapping = fyne.TextWrapWord
		objs = append(objs, l)
	}
	objs = append(objs, heading(Tf("Events (%d)", len(r.Events))))
	if len(r.Events) == 0 {
		objs = append(objs, widget.NewLabel(T("No event was recalled.")))
	}
	for _, h := range r.Events {
		objs = append(objs, hitCard(h, forget, nil))
	}
	return objs
}

// sceneCard is one scene.
func sceneCard(s client.Scene) fyne.CanvasObject {
	kind := T("emerged")
	if s.Declared {
		kind = T("declared")
	}
	l := widget.NewLabel(fmt.Sprintf("%s · %s · %s · %s", s.Key, kind,
		Tf("strength %.2f, seen %d times", s.Strength, s.Occurrences), Tf("last %s", timeText(s.Seen))))
	l.Wrapping = fyne.TextWrapWord
	return l
}

// roleText is a message role in the current language.
func roleText(role string) string {
	switch role {
	case "user":
		return T("you")
	case "assistant":
		return T("agent")
	case "tool":
		return T("tool")
	case "system":
		return T("system")
	}
	return role
}
