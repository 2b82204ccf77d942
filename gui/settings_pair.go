package gui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	qrcode "github.com/skip2/go-qrcode"

	"github.com/hologramagent/hologram/kernel/client"
)

// Settings → Pair a phone: when the kernel listens on TCP (and so serves the web UI,
// docs/web.md), a button makes a single-use pairing and shows its QR code, its link and its
// short code, as `waiter pair` prints them.

// SettingsPair is the pairing section: Available once the kernel said it serves the web UI;
// URL, Short and Detail (expiry, fingerprint) of the last pairing made, PNG its QR code.
type SettingsPair struct {
	Available          binding.Bool
	URL, Short, Detail binding.String
	PNG                binding.Item[[]byte]
	Status             SettingsStatus
}

func newSettingsPair() SettingsPair {
	return SettingsPair{Available: binding.NewBool(), URL: binding.NewString(), Short: binding.NewString(),
		Detail: binding.NewString(), PNG: newSliceBinding[byte](), Status: newSettingsStatus()}
}

// RefreshPairing asks the kernel whether it serves the web UI (a kernel client that cannot
// pair, or a kernel without a TCP listener, leaves the section hidden).
func (vm *SettingsVM) RefreshPairing(ctx context.Context) error {
	ps, ok := vm.svc.(client.PairingService)
	if !ok {
		return nil
	}
	on, err := ps.WebUI(ctx)
	if err != nil {
		return fmt.Errorf("web UI: %w", err)
	}
	_ = vm.Pair.Available.Set(on)
	return nil
}

// NewPairing makes a pairing and shows it: its QR code (PNG), link and short code.
func (vm *SettingsVM) NewPairing(ctx context.Context) error {
	ps, ok := vm.svc.(client.PairingService)
	if !ok {
		return errors.New("this kernel client cannot pair devices")
	}
	p, err := ps.NewPairing(ctx, "")
	if err != nil {
		vm.Pair.Status.set(Tf("Could not make a pairing: %v", err), true)
		return fmt.Errorf("new pairing: %w", err)
	}
	png, err := qrcode.Encode(p.URL, qrcode.Medium, 512)
	if err != nil {
		vm.Pair.Status.set(Tf("Could not make a pairing: %v", err), true)
		return fmt.Errorf("QR code: %w", err)
	}
	detail := Tf("Single use; expires at %s.", p.Expires.Local().Format(time.TimeOnly))
	if p.Fingerprint != "" {
		detail += " " + Tf("The phone's browser warns about the kernel's own certificate: its SHA-256 fingerprint is %s.", p.Fingerprint)
	}
	_ = vm.Pair.PNG.Set(png)
	_ = vm.Pair.URL.Set(p.URL)
	_ = vm.Pair.Short.Set(p.Short)
	_ = vm.Pair.Detail.Set(detail)
	vm.Pair.Status.set(T("Scan the QR code with the phone's camera, or type the short code in \"Pairing code\" on the web page's sign-in."), false)
	return nil
}

// settingsPair is the pairing card, hidden until the kernel says it serves the web UI.
func settingsPair(vm *SettingsVM) fyne.CanvasObject {
	img := canvas.NewImageFromResource(nil)
	img.FillMode = canvas.ImageFillContain
	img.SetMinSize(fyne.NewSize(256, 256))
	img.Hide()
	vm.Pair.PNG.AddListener(binding.NewDataListener(func() {
		png, _ := vm.Pair.PNG.Get()
		if len(png) == 0 {
			return
		}
		img.Resource = fyne.NewStaticResource("pairing.png", png)
		img.Show()
		img.Refresh()
	}))
	url := widget.NewLabelWithData(vm.Pair.URL)
	url.Wrapping = fyne.TextWrapBreak
	url.TextStyle = fyne.TextStyle{Monospace: true}
	short := widget.NewLabelWithData(vm.Pair.Short)
	short.TextStyle = fyne.TextStyle{Monospace: true}
	short.Importance = widget.HighImportance
	detail := widget.NewLabelWithData(vm.Pair.Detail)
	detail.Wrapping = fyne.TextWrapWord
	button := widget.NewButtonWithIcon(T("Pair a phone"), theme.ComputerIcon(), func() {
		vm.spawn(func(ctx context.Context) { _ = vm.NewPairing(ctx) })
	})
	help := settingsText(T("Sign a phone's browser in to this agent's web UI: one QR code, valid once for 5 minutes."), widget.LowImportance)
	card := widget.NewCard(T("Use from a phone"), "", container.NewVBox(help, container.NewHBox(button),
		container.NewCenter(img), url, short, detail, vmStatusLabel(vm.Pair.Status.Text, vm.Pair.Status.Failed)))
	card.Hide()
	vm.Pair.Available.AddListener(binding.NewDataListener(func() {
		if on, _ := vm.Pair.Available.Get(); on {
			card.Show()
		} else {
			card.Hide()
		}
	}))
	return card
}
