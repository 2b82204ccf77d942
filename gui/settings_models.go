package gui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// SettingsModels is the state of Settings → Models: how the memory embeds text (Mode, a
// sentence), the kernel's catalogue of dense models with their state (List), and the outcome
// of the last install, import or use (Result). While a download runs, Installing names the
// model, Progress is the current file's fraction (0 to 1) and CancelInstall stops it. Dense
// models are optional: without one recall is keyword matching (BM25).
type SettingsModels struct {
	Mode       binding.String
	List       binding.Item[[]client.EmbeddingModel]
	Result     SettingsStatus
	Installing binding.String
	Progress   binding.Float

	mu     sync.Mutex
	cancel context.CancelFunc // of the running install, nil when none runs
}

func newSettingsModels() *SettingsModels {
	return &SettingsModels{Mode: binding.NewString(), List: newSliceBinding[client.EmbeddingModel](), Result: newSettingsStatus(),
		Installing: binding.NewString(), Progress: binding.NewFloat()}
}

// RefreshModels reads the embedding mode and the catalogue from the kernel.
func (vm *SettingsVM) RefreshModels(ctx context.Context) error {
	st, err := vm.svc.Embedding(ctx)
	if err != nil {
		vm.Models.Result.set(Tf("Could not read the embedding models: %v", err), true)
		return fmt.Errorf("embedding status: %w", err)
	}
	list, err := vm.svc.EmbeddingModels(ctx)
	if err != nil {
		vm.Models.Result.set(Tf("Could not read the embedding models: %v", err), true)
		return fmt.Errorf("embedding models: %w", err)
	}
	_ = vm.Models.Mode.Set(embeddingModeText(st))
	_ = vm.Models.List.Set(list)
	return nil
}

// embeddingModeText says in one sentence how recall ranks, and why.
func embeddingModeText(st client.EmbeddingStatus) string {
	switch {
	case st.Mode == client.EmbeddingDense:
		s := Tf("Recall combines the dense model %s with keyword matching (BM25).", st.Model)
		if st.Reembed.Running || st.Reembed.Done < st.Reembed.Total {
			s += " " + Tf("Embedding the memory: %d of %d events.", st.Reembed.Done, st.Reembed.Total)
		}
		return s
	case st.Loading:
		return Tf("The model %s is loading; until then recall uses keyword matching (BM25).", st.Model)
	case st.Reason != "":
		return Tf("Recall uses keyword matching (BM25): %s", st.Reason)
	}
	return T("Recall uses keyword matching (BM25). A dense model below adds recall by meaning.")
}

// InstallModel downloads a catalogue model, showing the file and its progress in Result and
// Progress, and refreshes. It runs until the download ends or CancelInstall (or ctx) stops it
// (a large model takes minutes: no call timeout applies); a cancelled download keeps its part,
// which the next install resumes.
func (vm *SettingsVM) InstallModel(ctx context.Context, id string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := vm.Models
	m.mu.Lock()
	if m.cancel != nil {
		m.mu.Unlock()
		return errors.New(T("Another model is being installed."))
	}
	m.cancel = cancel
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.cancel = nil
		m.mu.Unlock()
		_ = m.Installing.Set("")
	}()
	_ = vm.Busy.Set(true)
	defer vm.Busy.Set(false)
	_ = m.Progress.Set(0)
	_ = m.Installing.Set(id)
	m.Result.set(Tf("Downloading %s…", id), false)
	_, err := vm.svc.InstallModel(ctx, id, func(p client.ModelProgress) {
		msg := Tf("Downloading %s: %s", id, p.File)
		if p.Total > 0 {
			msg += " " + Tf("(%s of %s)", chatSize(p.Done), chatSize(p.Total))
			_ = m.Progress.Set(float64(p.Done) / float64(p.Total))
		}
		m.Result.set(msg, false)
	})
	if errors.Is(err, context.Canceled) {
		m.Result.set(Tf("Install of %s cancelled; the part downloaded is kept: Install again to resume.", id), false)
		_ = vm.RefreshModels(context.WithoutCancel(ctx))
		return fmt.Errorf("install model %s: %w", id, err)
	}
	if err != nil {
		m.Result.set(Tf("Could not install %s: %v", id, err), true)
		return fmt.Errorf("install model %s: %w", id, err)
	}
	_ = m.Progress.Set(1)
	m.Result.set(Tf("Installed %s.", id), false)
	return vm.RefreshModels(ctx)
}

// CancelInstall stops the running install, if any; it reports whether one ran.
func (vm *SettingsVM) CancelInstall() bool {
	m := vm.Models
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cancel == nil {
		return false
	}
	m.cancel()
	return true
}

// ImportModel installs a catalogue model from a folder of its files on the kernel's machine
// (the same as `waiter model import ID DIR`), and refreshes.
func (vm *SettingsVM) ImportModel(ctx context.Context, id, dir string) error {
	_ = vm.Busy.Set(true)
	defer vm.Busy.Set(false)
	vm.Models.Result.set(Tf("Importing %s from %s…", id, dir), false)
	if _, err := vm.svc.ImportModel(ctx, id, dir); err != nil {
		vm.Models.Result.set(Tf("Could not import %s: %v", id, err), true)
		return fmt.Errorf("import model %s: %w", id, err)
	}
	vm.Models.Result.set(Tf("Imported %s from %s.", id, dir), false)
	return vm.RefreshModels(ctx)
}

// spawnInstall runs an install on its own goroutine with no call timeout: CancelInstall
// stops it.
func (vm *SettingsVM) spawnInstall(id string) {
	vm.wg.Add(1)
	go func() {
		defer vm.wg.Done()
		_ = vm.InstallModel(context.Background(), id)
	}()
}

// UseModel makes an installed model the active one ("" returns to keyword matching).
func (vm *SettingsVM) UseModel(ctx context.Context, id string) error {
	_ = vm.Busy.Set(true)
	defer vm.Busy.Set(false)
	if _, err := vm.svc.UseModel(ctx, id); err != nil {
		vm.Models.Result.set(Tf("Could not use %s: %v", id, err), true)
		return fmt.Errorf("use model %s: %w", id, err)
	}
	if id == "" {
		vm.Models.Result.set(T("Dense recall is off."), false)
	} else {
		vm.Models.Result.set(Tf("Now using %s; the memory is embedded in the background.", id), false)
	}
	return vm.RefreshModels(ctx)
}

// settingsModels is the Models card: the mode, then one row per catalogue model with
// Install (and Import… from a folder, with the in-process kernel), Use or Stop using; while a
// download runs, its progress bar and Cancel.
func settingsModels(vm *SettingsVM, w fyne.Window) fyne.CanvasObject {
	mode := widget.NewLabelWithData(vm.Models.Mode)
	mode.Wrapping = fyne.TextWrapWord
	list := container.NewVBox()
	var buttons []*widget.Button
	run := func(f func(ctx context.Context) error) func() {
		return func() { vm.spawn(func(ctx context.Context) { _ = f(ctx) }) }
	}
	local := vm.env.Remote == ""
	vm.Models.List.AddListener(binding.NewDataListener(func() {
		models, _ := vm.Models.List.Get()
		buttons = buttons[:0]
		rows := make([]fyne.CanvasObject, 0, len(models))
		for _, m := range models {
			id := m.ID
			facts := []string{m.Kind, Tf("%d dims", m.Dim)}
			if m.Size > 0 {
				facts = append(facts, chatSize(m.Size))
			}
			facts = append(facts, modelStateText(m))
			text := widget.NewLabel(id + " · " + strings.Join(facts, " · ") + "\n" + m.Description)
			text.Wrapping = fyne.TextWrapWord
			var bs []fyne.CanvasObject
			switch {
			case m.Active:
				bs = append(bs, widget.NewButtonWithIcon(T("Stop using"), theme.MediaStopIcon(), run(func(ctx context.Context) error { return vm.UseModel(ctx, "") })))
			case m.Installed:
				b := widget.NewButtonWithIcon(T("Use"), theme.ConfirmIcon(), run(func(ctx context.Context) error { return vm.UseModel(ctx, id) }))
				b.Importance = widget.HighImportance
				bs = append(bs, b)
			default:
				bs = append(bs, widget.NewButtonWithIcon(T("Install"), theme.DownloadIcon(), func() { vm.spawnInstall(id) }))
				if local {
					bs = append(bs, widget.NewButtonWithIcon(T("Import…"), theme.FolderOpenIcon(), func() {
						d := dialog.NewFolderOpen(func(dir fyne.ListableURI, err error) {
							if err != nil || dir == nil {
								return
							}
							run(func(ctx context.Context) error { return vm.ImportModel(ctx, id, dir.Path()) })()
						}, w)
						d.Show()
					}))
				}
			}
			for _, b := range bs {
				buttons = append(buttons, b.(*widget.Button))
			}
			rows = append(rows, container.NewBorder(nil, nil, nil, container.NewCenter(container.NewHBox(bs...)), text))
		}
		if len(models) == 0 {
			rows = append(rows, settingsText(T("The kernel offers no dense model."), widget.LowImportance))
		}
		list.Objects = rows
		list.Refresh()
	}))
	vm.Busy.AddListener(binding.NewDataListener(func() {
		busy, _ := vm.Busy.Get()
		for _, b := range buttons {
			if busy {
				b.Disable()
			} else {
				b.Enable()
			}
		}
	}))
	bar := widget.NewProgressBarWithData(vm.Models.Progress)
	cancel := widget.NewButtonWithIcon(T("Cancel"), theme.CancelIcon(), func() { vm.CancelInstall() })
	progress := container.NewBorder(nil, nil, nil, cancel, bar)
	progress.Hide()
	help := T("Dense models recall by meaning as well as by words; they are downloaded once and run on this machine (ONNX Runtime). Also: waiter model list | install ID | use ID.")
	if local {
		help += " " + T("Import… installs a model from a folder holding its files (waiter model import ID DIR).")
	}
	box := container.NewVBox(mode, list, progress, settingsText(help, widget.LowImportance), vmStatusLabel(vm.Models.Result.Text, vm.Models.Result.Failed))
	vm.Models.Installing.AddListener(binding.NewDataListener(func() {
		if id, _ := vm.Models.Installing.Get(); id != "" {
			progress.Show()
		} else {
			progress.Hide()
		}
		box.Refresh() // lay the card out again: the bar takes a row only while shown
	}))
	return widget.NewCard(T("Models"), "", box)
}

// modelStateText is a model's state for people.
func modelStateText(m client.EmbeddingModel) string {
	switch {
	case m.Active && m.Installed:
		return T("in use")
	case m.Active:
		return T("in use, files missing")
	case m.Installed:
		return T("installed")
	case m.Partial > 0:
		return Tf("download interrupted at %s", chatSize(m.Partial))
	}
	return T("not installed")
}
