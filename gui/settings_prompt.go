package gui

import (
	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// The base system prompt in Settings → Assistant: the template every turn starts with and the
// owner's name ({owner}); a chat's own instructions follow it.

// SettingsPrompt is the base prompt's form: Template and Owner as edited, Preview as the next
// turn reads it, Default whether the built-in template is in use.
type SettingsPrompt struct {
	Template, Owner, Preview binding.String
	Default                  binding.Bool
	Status                   SettingsStatus
}

func newSettingsPrompt() SettingsPrompt {
	return SettingsPrompt{Template: binding.NewString(), Owner: binding.NewString(), Preview: binding.NewString(),
		Default: binding.NewBool(), Status: newSettingsStatus()}
}

func (p SettingsPrompt) show(bp client.BasePrompt) {
	_ = p.Template.Set(bp.Template)
	_ = p.Owner.Set(bp.Owner)
	_ = p.Preview.Set(bp.Preview)
	_ = p.Default.Set(bp.Default)
}

// RefreshPrompt reads the base prompt from the kernel.
func (vm *SettingsVM) RefreshPrompt(ctx context.Context) error {
	bp, err := vm.svc.BasePrompt(ctx)
	if err != nil {
		vm.Prompt.Status.set(Tf("Could not read the base prompt: %v", err), true)
		return err
	}
	vm.Prompt.show(bp)
	return nil
}

// SavePrompt saves the edited template and owner's name; reset goes back to the built-in
// template (keeping the name).
func (vm *SettingsVM) SavePrompt(ctx context.Context, reset bool) error {
	tmpl, _ := vm.Prompt.Template.Get()
	owner, _ := vm.Prompt.Owner.Get()
	bp, err := vm.svc.SetBasePrompt(ctx, client.BasePrompt{Template: tmpl, Owner: owner, Default: reset})
	if err != nil {
		vm.Prompt.Status.set(Tf("Could not save the base prompt: %v", err), true)
		return err
	}
	vm.Prompt.show(bp)
	msg := T("Saved: the next turn starts with this prompt.")
	if reset {
		msg = T("Back to the built-in prompt.")
	}
	vm.Prompt.Status.set(msg, false)
	return nil
}

// settingsPrompt is the Assistant card: the owner's name, the template, its preview, Save and
// Reset.
func settingsPrompt(vm *SettingsVM) fyne.CanvasObject {
	owner := widget.NewEntryWithData(vm.Prompt.Owner)
	owner.SetPlaceHolder(T("How the assistant calls you"))
	tmpl := widget.NewEntryWithData(vm.Prompt.Template)
	tmpl.MultiLine = true
	tmpl.Wrapping = fyne.TextWrapWord
	tmpl.SetMinRowsVisible(6)
	preview := widget.NewLabelWithData(vm.Prompt.Preview)
	preview.Wrapping = fyne.TextWrapWord
	preview.Importance = widget.LowImportance
	save := widget.NewButtonWithIcon(T("Save"), theme.DocumentSaveIcon(), func() {
		vm.spawn(func(ctx context.Context) { _ = vm.SavePrompt(ctx, false) })
	})
	save.Importance = widget.HighImportance
	reset := widget.NewButtonWithIcon(T("Reset to the built-in prompt"), theme.ViewRefreshIcon(), func() {
		vm.spawn(func(ctx context.Context) { _ = vm.SavePrompt(ctx, true) })
	})
	form := widget.NewForm(widget.NewFormItem(T("Your name"), owner), widget.NewFormItem(T("Base prompt"), tmpl))
	help := settingsText(T("Every chat starts with this prompt; {date}, {time}, {timezone} and {owner} are filled in at each turn, and a chat's own instructions follow it. Your name is said only in your own chats. An empty prompt turns it off."), widget.LowImportance)
	previewBox := widget.NewAccordion(widget.NewAccordionItem(T("As the next turn reads it"), preview))
	return widget.NewCard(T("Assistant"), "", container.NewVBox(form, help, previewBox,
		container.NewHBox(layout.NewSpacer(), reset, save), vmStatusLabel(vm.Prompt.Status.Text, vm.Prompt.Status.Failed)))
}
