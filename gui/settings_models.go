package gui

import (
	"context"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// SettingsModels is the state of Settings → Models: how the memory embeds text (Mode, a
// sentence), the kernel's catalogue of dense models with their state (List), and the outcome
// of the last install or use (Result). Dense models are optional: without one recall is
// keyword matching (BM25).
type SettingsModels struct {
	Mode   binding.String
	List   binding.Item[[]client.EmbeddingModel]
	Result SettingsStatus
}

func newSettingsModels() SettingsModels {
	return SettingsModels{Mode: binding.NewString(), List: newSliceBinding[client.EmbeddingModel](), Result: newSettingsStatus()}
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

// InstallModel downloads a catalogue model, showing the progress in Result, and refreshes.
func (vm *SettingsVM) InstallModel(ctx context.Context, id string) error {
	_ = vm.Busy.Set(true)
	defer vm.Busy.Set(false)
	vm.Models.Result.set(Tf("Downloading %s…", id), false)
	_, err := vm.svc.InstallModel(ctx, id, func(p client.ModelProgress) {
		msg := Tf("Downloading %s: %s", id, p.File)
		if p.Total > 0 {
			msg += Tf(" (%d%%)", p.Done*100/p.Total)
		}
		vm.Models.Result.set(msg, false)
	})
	if err != nil {
		vm.Models.Result.set(Tf("Could not install %s: %v", id, err), true)
		return fmt.Errorf("install model %s: %w", id, err)
	}
	vm.Models.Result.set(Tf("Installed %s.", id), false)
	return vm.RefreshModels(ctx)
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

// settingsModels is the Models card: the mode, then one row per catalogue model with Install,
// Use or Stop using.
func settingsModels(vm *SettingsVM) fyne.CanvasObject {
	mode := widget.NewLabelWithData(vm.Models.Mode)
	mode.Wrapping = fyne.TextWrapWord
	list := container.NewVBox()
	var buttons []*widget.Button
	run := func(f func(ctx context.Context) error) func() {
		return func() { vm.spawn(func(ctx context.Context) { _ = f(ctx) }) }
	}
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
			var b *widget.Button
			switch {
			case m.Active:
				b = widget.NewButtonWithIcon(T("Stop using"), theme.MediaStopIcon(), run(func(ctx context.Context) error { return vm.UseModel(ctx, "") }))
			case m.Installed:
				b = widget.NewButtonWithIcon(T("Use"), theme.ConfirmIcon(), run(func(ctx context.Context) error { return vm.UseModel(ctx, id) }))
				b.Importance = widget.HighImportance
			default:
				b = widget.NewButtonWithIcon(T("Install"), theme.DownloadIcon(), run(func(ctx context.Context) error { return vm.InstallModel(ctx, id) }))
			}
			buttons = append(buttons, b)
			rows = append(rows, container.NewBorder(nil, nil, nil, container.NewCenter(b), text))
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
	help := settingsText(T("Dense models recall by meaning as well as by words; they are downloaded once and run on this machine (ONNX Runtime). Also: waiter model list | install ID | use ID."), widget.LowImportance)
	return widget.NewCard(T("Models"), "", container.NewVBox(mode, list, help, vmStatusLabel(vm.Models.Result.Text, vm.Models.Result.Failed)))
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
