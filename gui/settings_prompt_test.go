package gui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// TestSettingsBasePrompt: Settings → Assistant shows the kernel's base prompt; the owner's name
// and an edited template are saved to the kernel and previewed; Reset brings the built-in one.
func TestSettingsBasePrompt(t *testing.T) {
	f, c := uiKernel(t)
	r := newSettingsRig(t, c, nil, "")
	w := settingsWindow(t, r)
	vm := r.vm
	if !uiGet[bool](t, vm.Prompt.Default) || !strings.Contains(uiGet[string](t, vm.Prompt.Template), "{owner}") {
		t.Fatalf("the built-in template is not shown: %q", uiGet[string](t, vm.Prompt.Template))
	}
	var owner, tmpl *widget.Entry
	var save, reset *widget.Button
	uiWalk(w.Content(), func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Entry:
			if x.PlaceHolder == "How the assistant calls you" {
				owner = x
			} else if strings.Contains(x.Text, "{owner}") {
				tmpl = x
			}
		case *widget.Button:
			switch x.Text {
			case "Reset to the built-in prompt":
				reset = x
			case "Save":
				if save == nil || owner != nil && tmpl != nil { // the Assistant card's Save follows its entries
					save = x
				}
			}
		}
	})
	if owner == nil || tmpl == nil || reset == nil || save == nil {
		t.Fatalf("the Assistant card lacks its name entry, template, Save or Reset")
	}
	owner.SetText("Sasha")
	tmpl.SetText("Base prompt for {owner}.")
	test.Tap(save)
	vm.Wait()
	if got := uiGet[string](t, vm.Prompt.Preview); got != "Base prompt for Sasha." || uiGet[bool](t, vm.Prompt.Default) {
		t.Errorf("after Save: preview %q, default %v", got, uiGet[bool](t, vm.Prompt.Default))
	}
	if body := chatLastBody(t, f, "/api/v1/prompt"); !strings.Contains(body, `"template":"Base prompt for {owner}."`) || !strings.Contains(body, `"owner":"Sasha"`) {
		t.Errorf("PUT /api/v1/prompt body %s", body)
	}
	test.Tap(reset)
	vm.Wait()
	if !uiGet[bool](t, vm.Prompt.Default) || !strings.Contains(uiGet[string](t, vm.Prompt.Preview), "Sasha") ||
		uiGet[string](t, vm.Prompt.Status.Text) != "Back to the built-in prompt." {
		t.Errorf("after Reset: default %v, preview %q, status %q", uiGet[bool](t, vm.Prompt.Default),
			uiGet[string](t, vm.Prompt.Preview), uiGet[string](t, vm.Prompt.Status.Text))
	}
}
