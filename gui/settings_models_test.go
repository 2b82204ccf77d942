package gui

import (
	"context"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// uiModelsKernel serves m (a fake kernel with the dense-model routes) and returns the real
// HTTP client to it.
func uiModelsKernel(t *testing.T, m *clienttest.Models) *client.HTTP {
	t.Helper()
	c, err := client.Dial(client.Options{Socket: clienttest.ServeUnix(t, m)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSettingsModels: Settings → Models lists the kernel's dense models (it said they were
// "not available in this version" while `waiter model list` offered them), installs one,
// uses it and stops using it, through the real HTTP client; a model that does not load says
// why.
func TestSettingsModels(t *testing.T) {
	m := clienttest.NewModels(clienttest.New())
	c := uiModelsKernel(t, m)
	app := test.NewTempApp(t)
	r := newSettingsRig(t, c, app.Preferences(), "")
	w := settingsWindow(t, r)
	vm := r.vm
	for _, s := range []string{"bge-small-zh-v1.5 · text · 512 dims · 90.6 MB · not installed", "multilingual-e5-small · text · 384 dims · not installed",
		"Recall uses keyword matching (BM25)"} {
		if !uiHasText(w, s) {
			t.Errorf("no %q in %q", s, uiTexts(w))
		}
	}
	if uiHasText(w, "not available in this version") {
		t.Error("Settings still says dense models are not available")
	}
	test.Tap(uiButtons(w, "Install")[0])
	vm.Wait()
	if !uiHasText(w, "Installed bge-small-zh-v1.5.") || !uiHasText(w, "bge-small-zh-v1.5 · text · 512 dims · 90.6 MB · installed") {
		t.Fatalf("after Install: %q", uiTexts(w))
	}
	test.Tap(uiButton(t, w, "Use"))
	vm.Wait()
	if m.Active() != "bge-small-zh-v1.5" || !uiHasText(w, "Recall combines the dense model bge-small-zh-v1.5") || !uiHasText(w, "in use") {
		t.Fatalf("after Use: active %q, %q", m.Active(), uiTexts(w))
	}
	test.Tap(uiButton(t, w, "Stop using"))
	vm.Wait()
	if m.Active() != "" || !uiHasText(w, "Dense recall is off.") {
		t.Fatalf("after Stop using: active %q, %q", m.Active(), uiTexts(w))
	}

	// A model that does not load: the reason shows, the mode stays.
	m.Corrupt("bge-small-zh-v1.5")
	if err := vm.UseModel(context.Background(), "bge-small-zh-v1.5"); err == nil {
		t.Fatal("using a corrupt model succeeded")
	}
	if got := uiGet[string](t, vm.Models.Result.Text); got == "" || !uiGet[bool](t, vm.Models.Result.Failed) {
		t.Errorf("no failure shown: %q", got)
	}
}
