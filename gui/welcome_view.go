package gui

import (
	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/widget"
)

// NewWelcomeView builds the first-run screen over vm: local servers found by the kernel (looked
// for when the view opens), the provider form, "Test connection" and "Save and start chatting",
// which calls done once the kernel has the provider.
func NewWelcomeView(vm *WelcomeVM, done func()) fyne.CanvasObject {
	title := widget.NewRichText(&widget.TextSegment{Style: widget.RichTextStyleHeading, Text: T("Welcome to HologramAgent")})
	intro := widget.NewLabel(T("Add a language model provider to start chatting. Any OpenAI-compatible server works: OpenAI, DeepSeek, Qwen, Moonshot, OpenRouter, or a local Ollama or llama.cpp server."))
	intro.Wrapping = fyne.TextWrapWord

	// Local servers.
	detectStatus := widget.NewLabelWithData(vm.DetectStatus)
	detectStatus.Wrapping = fyne.TextWrapWord
	servers := container.NewVBox()
	vm.Detected.AddListener(binding.NewDataListener(func() {
		found, _ := vm.Detected.Get()
		objs := make([]fyne.CanvasObject, 0, len(found))
		for _, p := range found {
			objs = append(objs, widget.NewButton(Tf("Use %s (%s) at %s", p.Name, p.Model, p.BaseURL), func() { vm.Use(p) }))
		}
		servers.Objects = objs
		servers.Refresh()
	}))
	detect := func() { vm.spawn(func(ctx context.Context) { _ = vm.Detect(ctx) }) }
	rescan := widget.NewButton(T("Look again"), detect)
	vm.Detecting.AddListener(binding.NewDataListener(func() {
		if b, _ := vm.Detecting.Get(); b {
			rescan.Disable()
		} else {
			rescan.Enable()
		}
	}))
	local := widget.NewCard(T("Local servers"), "", container.NewVBox(detectStatus, servers, container.NewHBox(rescan)))

	// The form.
	urlEntry := widget.NewEntryWithData(vm.BaseURL)
	urlEntry.SetPlaceHolder(Tf("e.g. %s", welcomeURLExample))
	urlEntry.OnChanged = vm.BaseURLEdited
	modelEntry := widget.NewSelectEntry(nil)
	modelEntry.Bind(vm.Model)
	modelEntry.SetPlaceHolder(Tf("e.g. %s", welcomeModelExample))
	modelEntry.OnChanged = func(string) { vm.Edited() }
	vm.Models.AddListener(binding.NewDataListener(func() {
		models, _ := vm.Models.Get()
		modelEntry.SetOptions(models)
	}))
	keyEntry := widget.NewPasswordEntry()
	keyEntry.Bind(vm.APIKey)
	keyEntry.SetPlaceHolder(T("Not needed for local servers"))
	keyEntry.OnChanged = func(string) { vm.Edited() }
	form := widget.NewForm(
		widget.NewFormItem(T("Base URL"), urlEntry),
		widget.NewFormItem(T("Model"), modelEntry),
		widget.NewFormItem(T("API key"), keyEntry),
	)
	keyNote := widget.NewLabel(T("The key goes to the kernel, which stores it encrypted; the app never keeps it."))
	keyNote.Wrapping = fyne.TextWrapWord
	keyNote.Importance = widget.LowImportance

	test := widget.NewButton(T("Test connection"), func() {
		vm.spawn(func(ctx context.Context) { _, _ = vm.Test(ctx) })
	})
	save := widget.NewButton(T("Save and start chatting"), func() {
		vm.spawn(func(ctx context.Context) {
			if _, err := vm.Save(ctx); err == nil && done != nil {
				fyne.Do(done)
			}
		})
	})
	save.Importance = widget.HighImportance
	vm.Busy.AddListener(binding.NewDataListener(func() {
		if b, _ := vm.Busy.Get(); b {
			test.Disable()
			save.Disable()
		} else {
			test.Enable()
			save.Enable()
		}
	}))
	status := vmStatusLabel(vm.Status, vm.Failed)

	provider := widget.NewCard(T("Provider"), "", container.NewVBox(form, keyNote, container.NewHBox(test, save), status))
	detect()
	return container.NewVScroll(container.NewPadded(container.NewVBox(title, intro, local, provider)))
}

// vmStatusLabel shows a view-model's status line, in the danger colour while failed is true.
func vmStatusLabel(text binding.String, failed binding.Bool) *widget.Label {
	l := widget.NewLabelWithData(text)
	l.Wrapping = fyne.TextWrapWord
	failed.AddListener(binding.NewDataListener(func() {
		if f, _ := failed.Get(); f {
			l.Importance = widget.DangerImportance
		} else {
			l.Importance = widget.MediumImportance
		}
		l.Refresh()
	}))
	return l
}
