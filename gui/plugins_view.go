package gui

import (
	"context"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// NewPluginsView builds the plugins view over vm: one card per plugin (kind, state, pid,
// restarts, last error, tools) with Restart, Enable or Disable, Logs and Remove (confirmed in a
// dialog on w), Refresh, and a form to add a plugin. The list is read when the view opens.
func NewPluginsView(vm *PluginsVM, w fyne.Window) fyne.CanvasObject {
	list := container.NewVBox()
	var actions []*widget.Button // every button that starts a kernel call, disabled while busy
	setBusy := func() {
		b, _ := vm.Busy.Get()
		for _, btn := range actions {
			if b {
				btn.Disable()
			} else {
				btn.Enable()
			}
		}
	}
	act := func(name, action string) {
		vm.spawn(func(ctx context.Context) { _ = vm.Act(ctx, name, action) })
	}
	remove := func(name string) {
		d := dialog.NewConfirm(T("Remove plugin"),
			Tf("Remove %s? It is stopped and forgotten, and its tools go away.", name),
			func(ok bool) {
				if ok {
					act(name, client.PluginRemove)
				}
			}, w)
		d.SetConfirmText(T("Remove"))
		d.SetDismissText(T("Cancel"))
		d.Show()
	}
	logs := func(name string) {
		vm.spawn(func(ctx context.Context) {
			lines, err := vm.Logs(ctx, name)
			if err != nil {
				return
			}
			fyne.Do(func() { showPluginLogs(name, lines, w) })
		})
	}

	settings := func(name string) {
		vm.spawn(func(ctx context.Context) {
			f, old, err := vm.OpenSettings(ctx, name)
			if err != nil {
				return
			}
			fyne.Do(func() { showPluginSettings(vm, f, old, vm.Local, w) })
		})
	}

	body := container.NewVBox(list) // list, then the add card (below)
	scroll := container.NewVScroll(body)
	vm.Plugins.AddListener(binding.NewDataListener(func() {
		plugins, _ := vm.Plugins.Get()
		actions = actions[:0]
		cards := make([]fyne.CanvasObject, 0, len(plugins)+1)
		if len(plugins) == 0 {
			empty := widget.NewLabel(T("No plugins yet. Add an MCP server or a native plugin below."))
			empty.Wrapping = fyne.TextWrapWord
			cards = append(cards, empty)
		}
		for _, p := range plugins {
			name := p.Name
			restart := widget.NewButtonWithIcon(T("Restart"), theme.ViewRefreshIcon(), func() { act(name, client.PluginRestart) })
			toggle := widget.NewButton(T("Disable"), func() { act(name, client.PluginDisable) })
			if p.State == "disabled" {
				toggle = widget.NewButton(T("Enable"), func() { act(name, client.PluginEnable) })
				restart.Disable()
			}
			logBtn := widget.NewButtonWithIcon(T("Logs"), theme.DocumentIcon(), func() { logs(name) })
			rm := widget.NewButtonWithIcon(T("Remove"), theme.DeleteIcon(), func() { remove(name) })
			rm.Importance = widget.DangerImportance
			if p.State != "disabled" {
				actions = append(actions, restart)
			}
			actions = append(actions, toggle, rm)
			row := container.NewHBox(restart, toggle, logBtn, rm)
			if _, ok := vm.settingsService(); ok && p.Builtin {
				set := widget.NewButtonWithIcon(T("Settings"), theme.SettingsIcon(), func() { settings(name) })
				actions = append(actions, set)
				row.Objects = append([]fyne.CanvasObject{set}, row.Objects...)
			}
			cards = append(cards, pluginCard(p, row))
		}
		list.Objects = cards
		// The list changed size: lay out what holds it too, or the add card stays where it was
		// and the new cards are drawn over it.
		list.Refresh()
		body.Refresh()
		scroll.Refresh()
		setBusy()
	}))

	refresh := widget.NewButtonWithIcon(T("Refresh"), theme.ViewRefreshIcon(), func() {
		vm.spawn(func(ctx context.Context) { _ = vm.Refresh(ctx) })
	})

	// The add form.
	nameEntry := widget.NewEntryWithData(vm.AddName)
	nameEntry.SetPlaceHolder("everything")
	cmdEntry := widget.NewEntryWithData(vm.AddCommand)
	cmdEntry.SetPlaceHolder("npx -y @modelcontextprotocol/server-everything")
	dirEntry := widget.NewEntryWithData(vm.AddDir)
	dirEntry.SetPlaceHolder(T("/path/to/plugin (a folder with plugin.json)"))
	form := widget.NewForm(
		widget.NewFormItem(T("Name"), nameEntry),
		widget.NewFormItem(T("Command line"), cmdEntry),
		widget.NewFormItem(T("or directory"), dirEntry),
	)
	add := widget.NewButtonWithIcon(T("Add plugin"), theme.ContentAddIcon(), func() {
		vm.spawn(func(ctx context.Context) { _, _ = vm.Add(ctx) })
	})
	add.Importance = widget.HighImportance
	addCard := widget.NewCard(T("Add a plugin"), T("An MCP server started by its command line, or a native plugin's directory"),
		container.NewVBox(form, container.NewHBox(add)))

	vm.Busy.AddListener(binding.NewDataListener(func() {
		setBusy()
		if b, _ := vm.Busy.Get(); b {
			add.Disable()
		} else {
			add.Enable()
		}
	}))

	status := vmStatusLabel(vm.Status, vm.Failed)
	header := container.NewBorder(nil, nil, widget.NewLabelWithStyle(T("Plugins"), fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), refresh)
	body.Add(addCard)
	vm.spawn(func(ctx context.Context) { _ = vm.Refresh(ctx) }) // once the view is whole: the refresh lays it out
	return container.NewBorder(container.NewVBox(header, status), nil, nil, nil, scroll)
}

// pluginCard shows one plugin and its buttons.
func pluginCard(p client.Plugin, buttons fyne.CanvasObject) fyne.CanvasObject {
	sub := pluginKindText(p.Kind) + " · " + pluginStateText(p.State)
	var facts []string
	if p.PID > 0 {
		facts = append(facts, Tf("PID %d", p.PID))
	}
	facts = append(facts, Tf("restarts: %d", p.Restarts))
	tools := T("no tools")
	if len(p.Tools) > 0 {
		tools = Tf("tools: %s", strings.Join(p.Tools, ", "))
	}
	facts = append(facts, tools)
	info := widget.NewLabel(strings.Join(facts, " · "))
	info.Wrapping = fyne.TextWrapWord
	body := container.NewVBox(info)
	if where := pluginWhere(p); where != "" {
		l := widget.NewLabel(where)
		l.Wrapping = fyne.TextWrapBreak
		l.Importance = widget.LowImportance
		body.Add(l)
	}
	if p.LastError != "" {
		e := widget.NewLabel(Tf("Last error: %s", p.LastError))
		e.Wrapping = fyne.TextWrapWord
		e.Importance = widget.DangerImportance
		body.Add(e)
	}
	body.Add(buttons)
	return widget.NewCard(p.Name, sub, body)
}

// pluginWhere is the command line or directory a plugin runs from.
func pluginWhere(p client.Plugin) string {
	if p.Dir != "" {
		return p.Dir
	}
	words := make([]string, len(p.Command))
	for i, a := range p.Command {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`") {
			a = strconv.Quote(a)
		}
		words[i] = a
	}
	return strings.Join(words, " ")
}

// showPluginLogs shows a plugin's last stderr lines in a dialog on w.
func showPluginLogs(name string, lines []client.LogLine, w fyne.Window) {
	text := formatLogLines(lines)
	if text == "" {
		text = T("(no log lines)")
	}
	l := widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	scroll := container.NewScroll(l)
	scroll.SetMinSize(fyne.NewSize(640, 380))
	scroll.ScrollToBottom()
	d := dialog.NewCustom(Tf("Logs of %s (last %d lines)", name, pluginLogLines), T("Close"), scroll, w)
	d.Show()
}
