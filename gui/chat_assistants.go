package gui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// Assistants: saved presets (name, instructions, model, tools) a new chat starts from. The
// New session dialog lists them; its Assistants… button opens their editor.

// errNoAssistants: the kernel client keeps no assistants.
var errNoAssistants = errors.New("this kernel keeps no assistants")

func (vm *ChatVM) assistantService() (client.AssistantService, error) {
	if as, ok := vm.svc.(client.AssistantService); ok {
		return as, nil
	}
	return nil, errNoAssistants
}

// Assistants lists the kernel's assistants by name.
func (vm *ChatVM) Assistants(ctx context.Context) ([]client.Assistant, error) {
	as, err := vm.assistantService()
	if err != nil {
		return nil, err
	}
	list, err := as.Assistants(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", T("Could not load the assistants"), err)
	}
	return list, nil
}

// SaveAssistant creates or replaces an assistant.
func (vm *ChatVM) SaveAssistant(ctx context.Context, a client.Assistant) (client.Assistant, error) {
	as, err := vm.assistantService()
	if err != nil {
		return client.Assistant{}, err
	}
	out, err := as.SaveAssistant(ctx, a)
	if err != nil {
		return client.Assistant{}, fmt.Errorf("%s: %w", T("Could not save the assistant"), err)
	}
	return out, nil
}

// RemoveAssistant deletes an assistant; its chats stay.
func (vm *ChatVM) RemoveAssistant(ctx context.Context, id string) error {
	as, err := vm.assistantService()
	if err != nil {
		return err
	}
	if err := as.RemoveAssistant(ctx, id); err != nil {
		return fmt.Errorf("%s: %w", T("Could not remove the assistant"), err)
	}
	return nil
}

// StartAssistant creates a chat from an assistant (its instructions, model and tools) and makes
// it current.
func (vm *ChatVM) StartAssistant(ctx context.Context, id, title string) (client.Session, error) {
	if vm.opts.Quick {
		return client.Session{}, errors.New("new session: the quick chat has one session")
	}
	as, err := vm.assistantService()
	if err != nil {
		return client.Session{}, err
	}
	s, err := as.StartAssistant(ctx, id, strings.TrimSpace(title))
	if err != nil {
		return client.Session{}, fmt.Errorf("%s: %w", T("Could not create the session"), err)
	}
	vm.mu.Lock()
	vm.sessions = append([]client.Session{s}, vm.sessions...)
	vm.current = s.ID
	vm.sess(s.ID).loaded = true
	vm.mu.Unlock()
	vm.notify(ChatChange{Kind: ChatSessionsChanged}, ChatChange{Kind: ChatSessionChanged, Session: s.ID})
	return s, nil
}

// SessionTools says which tools the current session offers (an assistant's, or every tool).
func (vm *ChatVM) SessionTools(ctx context.Context) (client.SessionTools, error) {
	as, err := vm.assistantService()
	if err != nil {
		return client.SessionTools{}, err
	}
	return as.SessionTools(ctx, vm.Current())
}

// refreshTools loads what the current session's tools are into the Instructions pane.
func (v *chatView) refreshTools() {
	id := v.vm.Current()
	v.vm.Go(func() {
		st, err := v.vm.SessionTools(context.Background())
		text := T("Every tool")
		switch {
		case err != nil:
			text = ""
		case len(st.Tools) > 0:
			text = Tf("Only %s (from the assistant %s)", strings.Join(st.Tools, ", "), st.Assistant)
		}
		v.vm.do(func() {
			if v.vm.Current() == id {
				v.instrTools.SetText(text)
			}
		})
	})
}

// askNewSession loads the assistants, then asks for the new chat's title and what it starts
// from: a blank chat or an assistant.
func (v *chatView) askNewSession() {
	v.vm.Go(func() {
		list, _ := v.vm.Assistants(context.Background()) // none: a blank chat only
		v.vm.do(func() { v.showNewSession(list) })
	})
}

func (v *chatView) showNewSession(list []client.Assistant) {
	title := widget.NewEntry()
	title.SetPlaceHolder(T("Optional"))
	names := []string{T("Blank chat")}
	for _, a := range list {
		names = append(names, a.Name)
	}
	from := widget.NewSelect(names, nil)
	from.SetSelectedIndex(0)
	var d *dialog.FormDialog
	manage := widget.NewButtonWithIcon(T("Assistants…"), theme.SettingsIcon(), func() {
		d.Hide()
		v.showAssistants(list)
	})
	d = dialog.NewForm(T("New session"), T("Create"), T("Cancel"),
		[]*widget.FormItem{widget.NewFormItem(T("Title"), title), widget.NewFormItem(T("Start from"), container.NewBorder(nil, nil, nil, manage, from))},
		func(ok bool) {
			if !ok {
				return
			}
			t, i := title.Text, from.SelectedIndex()
			v.vm.Go(func() {
				var err error
				if i > 0 && i <= len(list) {
					_, err = v.vm.StartAssistant(context.Background(), list[i-1].ID, t)
				} else {
					_, err = v.vm.NewSession(context.Background(), t)
				}
				if err != nil {
					v.vm.do(func() { dialog.ShowError(err, v.w) })
				}
			})
		}, v.w)
	d.Resize(fyne.NewSize(460, d.MinSize().Height))
	d.Show()
}

// assistantEditor is the Assistants dialog: the presets on the left, the one selected (or a
// new one) on the right.
type assistantEditor struct {
	v       *chatView
	list    []client.Assistant
	sel     int // index in list; -1: a new preset
	presets *widget.List
	name    *widget.Entry
	instr   *widget.Entry
	model   *widget.SelectEntry
	tools   *widget.Entry
	save    *widget.Button
	remove  *widget.Button
	start   *widget.Button
	status  *widget.Label
	dialog  dialog.Dialog
}

// showAssistants opens the Assistants dialog over list (as last loaded).
func (v *chatView) showAssistants(list []client.Assistant) {
	e := &assistantEditor{v: v, list: list, sel: -1}
	e.name = widget.NewEntry()
	e.name.SetPlaceHolder(T("e.g. Translator"))
	e.instr = widget.NewMultiLineEntry()
	e.instr.SetPlaceHolder(T("What the assistant is and does (the chat's system prompt)"))
	e.instr.Wrapping = fyne.TextWrapWord
	e.instr.SetMinRowsVisible(6)
	e.model = widget.NewSelectEntry(v.vm.ModelChoices())
	e.model.SetPlaceHolder(T("Default model"))
	e.tools = widget.NewEntry()
	e.tools.SetPlaceHolder(T("Every tool"))
	e.status = widget.NewLabel("")
	e.status.Wrapping = fyne.TextWrapWord
	e.save = widget.NewButtonWithIcon(T("Save"), theme.DocumentSaveIcon(), e.doSave)
	e.save.Importance = widget.HighImportance
	e.remove = widget.NewButtonWithIcon(T("Remove"), theme.DeleteIcon(), e.doRemove)
	e.start = widget.NewButtonWithIcon(T("Start a chat"), theme.MailSendIcon(), e.doStart)
	e.presets = widget.NewList(func() int { return len(e.list) },
		func() fyne.CanvasObject { return widget.NewLabel("assistant name") },
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i < len(e.list) {
				o.(*widget.Label).SetText(e.list[i].Name)
			}
		})
	e.presets.OnSelected = func(i widget.ListItemID) { e.show(i) }
	add := widget.NewButtonWithIcon(T("New assistant"), theme.ContentAddIcon(), func() { e.presets.UnselectAll(); e.show(-1) })
	form := widget.NewForm(
		widget.NewFormItem(T("Name"), e.name),
		widget.NewFormItem(T("Instructions"), e.instr),
		widget.NewFormItem(T("Model"), e.model),
		&widget.FormItem{Text: T("Tools"), Widget: e.tools, HintText: T("Tool or plugin names, comma-separated (e.g. files, notes); empty: every tool")},
	)
	plugins := widget.NewLabel("")
	plugins.Wrapping = fyne.TextWrapWord
	plugins.Importance = widget.LowImportance
	form.Append("", plugins)
	v.vm.Go(func() { // the names a preset's tools can use
		ps, err := v.vm.svc.Plugins(context.Background())
		var names []string
		for _, p := range ps {
			if p.State == "running" {
				names = append(names, p.Name)
			}
		}
		if err != nil || len(names) == 0 {
			return
		}
		v.vm.do(func() { plugins.SetText(Tf("Plugins running now: %s", strings.Join(names, ", "))) })
	})
	right := container.NewBorder(nil, container.NewVBox(e.status, container.NewHBox(e.save, e.remove, e.start)), nil, nil, form)
	left := container.NewBorder(nil, add, nil, nil, e.presets)
	split := container.NewHSplit(left, right)
	split.Offset = 0.3
	e.dialog = dialog.NewCustom(T("Assistants"), T("Close"), split, v.w)
	e.dialog.Resize(fyne.NewSize(820, 540))
	e.show(-1)
	if len(e.list) > 0 {
		e.presets.Select(0)
	}
	e.dialog.Show()
}

// show fills the form with preset i (-1: empty, for a new one).
func (e *assistantEditor) show(i int) {
	e.sel = i
	a := client.Assistant{}
	if i >= 0 && i < len(e.list) {
		a = e.list[i]
	}
	e.name.SetText(a.Name)
	e.instr.SetText(a.Instructions)
	e.model.SetText(a.Model)
	e.tools.SetText(strings.Join(a.Tools, ", "))
	e.status.SetText("")
	if e.sel < 0 {
		e.remove.Disable()
		e.start.Disable()
	} else {
		e.remove.Enable()
		e.start.Enable()
	}
}

// form is the preset the form holds.
func (e *assistantEditor) form() client.Assistant {
	a := client.Assistant{Name: e.name.Text, Instructions: e.instr.Text, Model: e.model.Text, Tools: []string{}}
	if e.sel >= 0 && e.sel < len(e.list) {
		a.ID = e.list[e.sel].ID
	}
	for _, t := range strings.FieldsFunc(e.tools.Text, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
		a.Tools = append(a.Tools, t)
	}
	return a
}

func (e *assistantEditor) doSave() {
	a := e.form()
	e.save.Disable()
	vm := e.v.vm
	vm.Go(func() {
		saved, err := vm.SaveAssistant(context.Background(), a)
		var list []client.Assistant
		if err == nil {
			list, err = vm.Assistants(context.Background())
		}
		vm.do(func() {
			e.save.Enable()
			if err != nil {
				e.status.SetText(err.Error())
				return
			}
			e.reload(list, saved.ID)
			e.status.SetText(Tf("Assistant %s saved.", saved.Name))
		})
	})
}

func (e *assistantEditor) doRemove() {
	if e.sel < 0 || e.sel >= len(e.list) {
		return
	}
	a := e.list[e.sel]
	vm := e.v.vm
	vm.Go(func() {
		err := vm.RemoveAssistant(context.Background(), a.ID)
		var list []client.Assistant
		if err == nil {
			list, err = vm.Assistants(context.Background())
		}
		vm.do(func() {
			if err != nil {
				e.status.SetText(err.Error())
				return
			}
			e.reload(list, "")
			e.status.SetText(Tf("Assistant %s removed; its chats stay.", a.Name))
		})
	})
}

func (e *assistantEditor) doStart() {
	if e.sel < 0 || e.sel >= len(e.list) {
		return
	}
	id := e.list[e.sel].ID
	vm := e.v.vm
	e.dialog.Hide()
	vm.Go(func() {
		if _, err := vm.StartAssistant(context.Background(), id, ""); err != nil {
			vm.do(func() { dialog.ShowError(err, e.v.w) })
		}
	})
}

// reload shows list, selecting the preset id ("" or gone: a new one).
func (e *assistantEditor) reload(list []client.Assistant, id string) {
	e.list = list
	e.presets.Refresh()
	for i, a := range list {
		if a.ID == id {
			e.presets.Select(i)
			return
		}
	}
	e.presets.UnselectAll()
	e.show(-1)
}
