package gui

import (
	"context"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// NewSettingsView builds the settings view over vm, one card per section: providers, data,
// remote connections, models, and general (start at login, language, close to tray).
// Confirmations are dialogs on w. The provider list is read when the view opens.
func NewSettingsView(vm *SettingsVM, w fyne.Window) fyne.CanvasObject {
	content := container.NewVBox(
		settingsProviders(vm, w),
		settingsPrompt(vm),
		settingsData(vm),
		settingsRemotes(vm),
		settingsPair(vm),
		settingsMemory(vm, w),
		settingsModels(vm, w),
		settingsGeneral(vm),
	)
	// One task, one refresh after the other: their bindings update the view, and updates must not
	// run concurrently (the test driver runs them on the calling goroutine).
	vm.spawn(func(ctx context.Context) {
		_ = vm.RefreshProviders(ctx)
		_ = vm.RefreshPrompt(ctx)
		_ = vm.RefreshModels(ctx)
		_ = vm.RefreshPairing(ctx)
	})
	return container.NewVScroll(container.NewPadded(content))
}

// settingsText is a word-wrapping label.
func settingsText(text string, imp widget.Importance) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	l.Importance = imp
	return l
}

func settingsProviders(vm *SettingsVM, w fyne.Window) fyne.CanvasObject {
	list := container.NewVBox()
	var rowButtons []*widget.Button
	remove := func(name string) {
		d := dialog.NewConfirm(T("Remove provider"),
			Tf("Remove the provider %s? Its stored key is deleted too.", name),
			func(ok bool) {
				if ok {
					vm.spawn(func(ctx context.Context) { _ = vm.RemoveProvider(ctx, name) })
				}
			}, w)
		d.SetConfirmText(T("Remove"))
		d.SetDismissText(T("Cancel"))
		d.Show()
	}
	vm.Providers.AddListener(binding.NewDataListener(func() {
		providers, _ := vm.Providers.Get()
		rowButtons = rowButtons[:0]
		rows := make([]fyne.CanvasObject, 0, len(providers))
		if len(providers) == 0 {
			rows = append(rows, settingsText(T("No provider yet: chat needs at least one."), widget.WarningImportance))
		}
		for _, p := range providers {
			p := p
			key := T("no key")
			if p.HasKey {
				key = T("key stored encrypted")
			}
			text := widget.NewLabel(Tf("%s: %s at %s · priority %d · %s", p.Name, p.Model, p.BaseURL, p.Priority, key))
			text.Truncation = fyne.TextTruncateEllipsis
			edit := widget.NewButtonWithIcon(T("Edit"), theme.DocumentCreateIcon(), func() { vm.EditProvider(p) })
			rm := widget.NewButtonWithIcon(T("Remove"), theme.DeleteIcon(), func() { remove(p.Name) })
			rm.Importance = widget.DangerImportance
			rowButtons = append(rowButtons, rm)
			rows = append(rows, container.NewBorder(nil, nil, nil, container.NewCenter(container.NewHBox(edit, rm)), text))
		}
		list.Objects = rows
		list.Refresh()
	}))

	name := widget.NewEntryWithData(vm.ProvName)
	name.SetPlaceHolder("deepseek")
	base := widget.NewEntryWithData(vm.ProvURL)
	base.SetPlaceHolder("https://api.deepseek.com/v1")
	model := widget.NewEntryWithData(vm.ProvModel)
	model.SetPlaceHolder("deepseek-chat")
	key := widget.NewPasswordEntry()
	key.Bind(vm.ProvKey)
	key.SetPlaceHolder(T("Not needed for local servers"))
	prio := widget.NewEntryWithData(vm.ProvPriority)
	prio.SetPlaceHolder("0")
	visionLabels := []string{T("Ask the server"), T("Yes, send images"), T("No, send their text")}
	visionValues := []string{VisionAuto, VisionYes, VisionNo}
	vision := widget.NewSelect(visionLabels, func(label string) {
		if i := slices.Index(visionLabels, label); i >= 0 {
			_ = vm.ProvVision.Set(visionValues[i])
		}
	})
	vm.ProvVision.AddListener(binding.NewDataListener(func() {
		v, _ := vm.ProvVision.Get()
		i := max(slices.Index(visionValues, v), 0)
		vision.SetSelected(visionLabels[i])
	}))
	form := widget.NewForm(
		widget.NewFormItem(T("Name"), name),
		widget.NewFormItem(T("Base URL"), base),
		widget.NewFormItem(T("Model"), model),
		widget.NewFormItem(T("API key"), key),
		widget.NewFormItem(T("Priority"), prio),
		widget.NewFormItem(T("Model takes images"), vision),
	)
	save := widget.NewButtonWithIcon(T("Save provider"), theme.DocumentSaveIcon(), func() {
		vm.spawn(func(ctx context.Context) { _, _ = vm.SaveProvider(ctx) })
	})
	save.Importance = widget.HighImportance
	vm.Busy.AddListener(binding.NewDataListener(func() {
		busy, _ := vm.Busy.Get()
		for _, b := range append(rowButtons, save) {
			if busy {
				b.Disable()
			} else {
				b.Enable()
			}
		}
	}))
	help := settingsText(T("Providers are tried in priority order (lower first); when one fails the next takes over. Keys are sealed by the kernel and never shown again."), widget.LowImportance)
	return widget.NewCard(T("Providers"), "", container.NewVBox(
		list, help, form, container.NewHBox(save), vmStatusLabel(vm.ProvStatus.Text, vm.ProvStatus.Failed)))
}

func settingsData(vm *SettingsVM) fyne.CanvasObject {
	where := widget.NewLabel(vm.DataText())
	where.Wrapping = fyne.TextWrapBreak
	where.TextStyle = fyne.TextStyle{Monospace: vm.env.Remote == ""}
	return widget.NewCard(T("Data"), T("Everything the agent keeps lives here."), where)
}

func settingsRemotes(vm *SettingsVM) fyne.CanvasObject {
	list := container.NewVBox()
	vm.Remotes.AddListener(binding.NewDataListener(func() {
		remotes, _ := vm.Remotes.Get()
		rows := make([]fyne.CanvasObject, 0, len(remotes))
		if len(remotes) == 0 {
			rows = append(rows, settingsText(T("No saved connections."), widget.LowImportance))
		}
		for _, c := range remotes {
			c := c
			detail := Tf("token file %s", c.TokenFile)
			if c.Fingerprint != "" {
				fp := c.Fingerprint
				if len(fp) > 16 {
					fp = fp[:16] + "…"
				}
				detail += " · " + Tf("pinned sha256:%s", fp)
			}
			if c.Insecure {
				detail += " · " + T("insecure (plain HTTP)")
			}
			text := widget.NewLabel(c.URL + "\n" + detail)
			text.Truncation = fyne.TextTruncateEllipsis
			if c.Insecure {
				text.Importance = widget.WarningImportance
			}
			buttons := container.NewHBox()
			if vm.CanConnect() {
				buttons.Add(widget.NewButtonWithIcon(T("Connect"), theme.LoginIcon(), func() {
					vm.spawn(func(context.Context) { _ = vm.Connect(c) })
				}))
			}
			buttons.Add(widget.NewButtonWithIcon(T("Forget"), theme.DeleteIcon(), func() { vm.RemoveRemote(c.URL) }))
			rows = append(rows, container.NewBorder(nil, nil, nil, container.NewCenter(buttons), text))
		}
		list.Objects = rows
		list.Refresh()
	}))

	u := widget.NewEntryWithData(vm.RemoteURL)
	u.SetPlaceHolder("https://homeserver:7878")
	tok := widget.NewEntryWithData(vm.RemoteToken)
	tok.SetPlaceHolder("~/.config/hologram/remote.token")
	fp := widget.NewEntryWithData(vm.RemoteFingerprint)
	fp.SetPlaceHolder(T("SHA-256 of the server's certificate (optional)"))
	insecure := widget.NewCheckWithData(T("Insecure: allow plain http:// to another machine"), vm.RemoteInsecure)
	warning := widget.NewLabelWithData(vm.RemoteWarning)
	warning.Wrapping = fyne.TextWrapWord
	warning.Importance = widget.DangerImportance
	form := widget.NewForm(
		widget.NewFormItem(T("URL"), u),
		widget.NewFormItem(T("Token file"), tok),
		widget.NewFormItem(T("Fingerprint"), fp),
	)
	save := widget.NewButtonWithIcon(T("Save connection"), theme.ContentAddIcon(), func() { _, _ = vm.AddRemote() })
	help := settingsText(T("Connect this app to an agent running elsewhere (homed). The token stays in its file; pin the certificate's fingerprint for a self-signed server."), widget.LowImportance)
	return widget.NewCard(T("Remote connections"), "", container.NewVBox(
		list, help, form, insecure, warning, container.NewHBox(save), vmStatusLabel(vm.RemoteStatus.Text, vm.RemoteStatus.Failed)))
}

func settingsGeneral(vm *SettingsVM) fyne.CanvasObject {
	autostart := widget.NewCheck(T("Start HologramAgent when I log in"), nil)
	autostart.Checked, _ = vm.Autostart.Get()
	autostart.OnChanged = func(on bool) { _ = vm.SetAutostart(on) }
	vm.Autostart.AddListener(binding.NewDataListener(func() {
		autostart.Checked, _ = vm.Autostart.Get()
		autostart.Refresh()
	}))

	names := vm.LanguageNames()
	lang := widget.NewSelect(names, nil)
	selectLang := func() {
		tag, _ := vm.LanguageTag.Get()
		for i, l := range Languages {
			if l.Tag == tag {
				lang.Selected = names[i]
			}
		}
		lang.Refresh()
	}
	selectLang()
	lang.OnChanged = func(name string) {
		for i, n := range names {
			if n == name {
				if err := vm.SetLanguageTag(Languages[i].Tag); err != nil {
					vm.General.set(err.Error(), true)
				}
			}
		}
	}
	vm.LanguageTag.AddListener(binding.NewDataListener(selectLang))

	tray := widget.NewCheck(T("Keep running in the tray when the window is closed"), nil)
	tray.Checked, _ = vm.CloseToTray.Get()
	tray.OnChanged = vm.SetCloseToTray
	vm.CloseToTray.AddListener(binding.NewDataListener(func() {
		tray.Checked, _ = vm.CloseToTray.Get()
		tray.Refresh()
	}))

	form := widget.NewForm(widget.NewFormItem(T("Language"), lang))
	return widget.NewCard(T("General"), "", container.NewVBox(
		autostart, tray, form, vmStatusLabel(vm.General.Text, vm.General.Failed)))
}

// settingsMemory exports and imports the memory through file dialogs, with a progress bar and
// the transferred size while it runs.
func settingsMemory(vm *SettingsVM, w fyne.Window) fyne.CanvasObject {
	secrets := widget.NewCheck(T("Include provider keys (in clear text)"), nil)
	exportAs := func(format, name string) func() {
		return func() {
			d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
				if err != nil || wc == nil {
					if err != nil {
						vm.Memory.Status.set(err.Error(), true)
					}
					return
				}
				include := secrets.Checked
				vm.spawn(func(ctx context.Context) {
					defer wc.Close()
					_ = vm.ExportMemory(ctx, format, include, wc)
				})
			}, w)
			d.SetFileName(name)
			d.Show()
		}
	}
	importAs := func(format string) func() {
		return func() {
			dialog.NewFileOpen(func(rc fyne.URIReadCloser, err error) {
				if err != nil || rc == nil {
					if err != nil {
						vm.Memory.Status.set(err.Error(), true)
					}
					return
				}
				vm.spawn(func(ctx context.Context) {
					defer rc.Close()
					_, _ = vm.ImportMemory(ctx, format, rc)
				})
			}, w).Show()
		}
	}
	// A chat history import opens the file by its path: a ChatGPT export's .zip is read here.
	importChatsAs := func(format string, exts []string) func() {
		return func() {
			d := dialog.NewFileOpen(func(rc fyne.URIReadCloser, err error) {
				if err != nil || rc == nil {
					if err != nil {
						vm.Memory.Status.set(err.Error(), true)
					}
					return
				}
				path := rc.URI().Path()
				_ = rc.Close()
				vm.spawn(func(ctx context.Context) { _, _ = vm.ImportChats(ctx, format, path) })
			}, w)
			d.SetFilter(storage.NewExtensionFileFilter(exts))
			d.Show()
		}
	}
	bar := widget.NewProgressBarInfinite()
	bar.Hide()
	sized := widget.NewProgressBarWithData(vm.Memory.Fraction)
	sized.Hide()
	progress := widget.NewLabelWithData(vm.Memory.Progress)
	status := widget.NewLabelWithData(vm.Memory.Status.Text)
	status.Wrapping = fyne.TextWrapWord
	buttons := []*widget.Button{
		widget.NewButtonWithIcon(T("Export a full backup (JSON)…"), theme.DocumentSaveIcon(), exportAs(client.FormatJSON, "hologram-backup.json")),
		widget.NewButtonWithIcon(T("Export for the MCP memory server (JSONL)…"), theme.DocumentSaveIcon(), exportAs(client.FormatJSONL, "hologram-memory.jsonl")),
		widget.NewButtonWithIcon(T("Export as Markdown (tar)…"), theme.DocumentSaveIcon(), exportAs(client.FormatMarkdown, "hologram-memory.tar")),
		widget.NewButtonWithIcon(T("Restore a backup (JSON)…"), theme.FolderOpenIcon(), importAs(client.FormatJSON)),
		widget.NewButtonWithIcon(T("Import an MCP memory file (JSONL)…"), theme.FolderOpenIcon(), importAs(client.FormatJSONL)),
		widget.NewButtonWithIcon(T("Import ChatGPT conversations (conversations.json or the export's .zip)…"), theme.FolderOpenIcon(),
			importChatsAs(client.FormatChatGPT, []string{".json", ".zip"})),
		widget.NewButtonWithIcon(T("Import Open WebUI chats (JSON)…"), theme.FolderOpenIcon(), importChatsAs(client.FormatOpenWebUI, []string{".json"})),
		widget.NewButtonWithIcon(T("Distil all memory into facts now"), theme.ViewRefreshIcon(), func() {
			vm.spawn(func(ctx context.Context) { _, _ = vm.CoolAll(ctx) })
		}),
	}
	showRunning := binding.NewDataListener(func() {
		running, _ := vm.Memory.Running.Get()
		isSized, _ := vm.Memory.Sized.Get()
		for _, b := range buttons {
			if running {
				b.Disable()
			} else {
				b.Enable()
			}
		}
		switch {
		case running && isSized:
			bar.Hide()
			sized.Show()
		case running:
			sized.Hide()
			bar.Show()
		default:
			bar.Hide()
			sized.Hide()
		}
	})
	vm.Memory.Running.AddListener(showRunning)
	vm.Memory.Sized.AddListener(showRunning)
	rows := container.NewVBox(settingsText(T("Everything the agent remembers, in open formats. A backup restores only into an empty memory (a new data directory); an MCP memory file merges. Conversations from ChatGPT or Open WebUI become private sessions; importing them again adds only new messages."), widget.MediumImportance),
		secrets)
	for _, b := range buttons {
		rows.Add(b)
	}
	rows.Add(bar)
	rows.Add(sized)
	rows.Add(progress)
	rows.Add(status)
	return widget.NewCard(T("Memory"), "", rows)
}
