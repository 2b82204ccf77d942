//go:build integration

package gui

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// uiFakeOpenAI starts ../shared/tools/fake_openai.py (the project's independent fake provider:
// "CALL NAME {json}" in the last user message calls tool NAME; after a tool result it answers
// "DONE <result>") and returns its base URL.
func uiFakeOpenAI(t *testing.T) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "shared", "tools", "fake_openai.py"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("the shared fake provider: %v (the repository's ../shared/tools/fake_openai.py)", err)
	}
	dir := t.TempDir()
	port := filepath.Join(dir, "port")
	cmd := exec.Command("python3", script, port, filepath.Join(dir, "log"))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("python3 %s: %v", script, err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if raw, err := os.ReadFile(port); err == nil && len(raw) > 0 {
			return "http://127.0.0.1:" + strings.TrimSpace(string(raw)) + "/v1"
		}
		if time.Now().After(deadline) {
			t.Fatal("fake_openai.py wrote no port in 10 s")
		}
	}
}

// uiBuiltinFiles builds the files plugin into a built-in plugins directory and returns it.
func uiBuiltinFiles(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "plugins")
	if err := os.MkdirAll(filepath.Join(dir, "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gobin, "build", "-trimpath", "-tags=sqlite_fts5", "-o", filepath.Join(dir, "files", "files"), "../plugins/builtin/files")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the files plugin: %v\n%s", err, out)
	}
	manifest, err := os.ReadFile(filepath.Join("..", "plugins", "builtin", "files", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "files", "plugin.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readTurn asks the agent to call files_read on path and returns the reply.
func readTurn(t *testing.T, c client.Service, path string) string {
	t.Helper()
	res, err := c.Chat(t.Context(), client.ChatRequest{Input: `CALL files_read {"path": "` + path + `"}`, Channel: "gui"}, func(client.ChatEvent) {})
	if err != nil {
		t.Fatal(err)
	}
	return res.Text
}

// TestPluginSettingsFilesRoot: the files plugin's Settings form in the Plugins view, generated
// from the schema in its plugin.json, over a real homed running the real files plugin: a
// folder added there and saved is written to files.toml, the plugin restarts, and files_read
// (called by fake_openai.py through the agent) reads a file in it, which it refused before.
// A setting the schema refuses is an error in the view and changes nothing.
func TestPluginSettingsFilesRoot(t *testing.T) {
	builtin := uiBuiltinFiles(t)
	provider := uiFakeOpenAI(t)
	k := startHomed(t, "[builtin]\ndir = \""+builtin+"\"\n")
	ctx := context.Background()
	if _, err := k.c.AddProvider(ctx, client.ProviderConfig{Name: "fake", BaseURL: provider, Model: "fake-model"}); err != nil {
		t.Fatal(err)
	}
	docs := t.TempDir()
	secret := filepath.Join(docs, "invoice.txt")
	if err := os.WriteFile(secret, []byte("total 42 EUR"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readTurn(t, k.c, secret); !strings.Contains(got, "outside the roots") {
		t.Fatalf("before the setting, files_read of %s answered %q; want it refused", secret, got)
	}

	vm, w := pluginsWindow(t, k.c)
	vm.Local = true
	w.Resize(fyne.NewSize(900, 760))
	test.Tap(uiButton(t, w, "Settings"))
	vm.Wait()
	for _, s := range []string{"Folders", "Largest read (bytes)", "No folder: the plugin's default applies."} {
		if !uiHasText(w, s) {
			t.Fatalf("no %q in the form: %q", s, uiTexts(w))
		}
	}
	checks := 0
	for _, r := range uiRoots(w) {
		uiWalk(r, func(o fyne.CanvasObject) {
			if c, ok := o.(*widget.Check); ok && c.Text == "Read only" {
				checks++
			}
		})
	}
	if checks != 1 {
		t.Errorf("%d check boxes Read only in the form, want 1", checks)
	}
	if len(uiButtons(w, "Choose folder…")) != 1 {
		t.Error("no folder picker in the form")
	}
	test.Type(uiEntry(t, w, "/path/to/folder"), docs)
	test.Tap(uiButton(t, w, "Add"))
	if !uiHasText(w, docs) {
		t.Fatalf("the folder is not listed: %q", uiTexts(w))
	}
	shot(t, w, "plugin-settings-files")
	test.Tap(uiButton(t, w, "Save"))
	vm.Wait()
	if got := uiGet[string](t, vm.Status); !strings.Contains(got, "Saved the settings of files") || uiGet[bool](t, vm.Failed) {
		t.Fatalf("after Save: %q\n%s", got, k.log())
	}
	raw, err := os.ReadFile(filepath.Join(k.config, "hologram", "plugins", "files.toml"))
	if err != nil || !strings.Contains(string(raw), docs) {
		t.Fatalf("files.toml = %q, %v", raw, err)
	}
	if got := readTurn(t, k.c, secret); !strings.Contains(got, "total 42 EUR") {
		t.Fatalf("after the setting, files_read of %s answered %q\n%s", secret, got, k.log())
	}

	// Refused by the schema: a largest read of 0. The file stays as it was.
	f, old, err := vm.OpenSettings(ctx, "files")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range f.Fields {
		if fd.Key == "max_read_bytes" {
			_ = fd.Text.Set("0")
		}
	}
	if err := vm.SaveSettings(ctx, f, old); err == nil || !strings.Contains(uiGet[string](t, vm.Status), "max_read_bytes") {
		t.Errorf("a largest read of 0 saved: %v, %q", err, uiGet[string](t, vm.Status))
	}
	if again, _ := os.ReadFile(filepath.Join(k.config, "hologram", "plugins", "files.toml")); !bytes.Equal(again, raw) {
		t.Errorf("a refused setting changed files.toml: %q", again)
	}
	// A folder that does not exist passes the schema but the plugin refuses it: the previous
	// settings come back and the plugin keeps reading the folder.
	for _, fd := range f.Fields {
		if fd.Key == "max_read_bytes" {
			_ = fd.Text.Set("")
		}
		if fd.Key == "roots" {
			fd.AddFolder(filepath.Join(docs, "missing"))
		}
	}
	err = vm.SaveSettings(ctx, f, old)
	t.Logf("a missing folder: %v", err)
	if err == nil || !strings.Contains(uiGet[string](t, vm.Status), "the previous ones are back") {
		t.Errorf("a missing folder saved: %v, %q", err, uiGet[string](t, vm.Status))
	}
	if again, _ := os.ReadFile(filepath.Join(k.config, "hologram", "plugins", "files.toml")); !bytes.Equal(again, raw) {
		t.Errorf("a refused folder changed files.toml: %q", again)
	}
	if got := readTurn(t, k.c, secret); !strings.Contains(got, "total 42 EUR") {
		t.Fatalf("after a refused setting, files_read answered %q", got)
	}
}

// shot saves w's capture as build/screenshots/<name>.png.
func shot(t *testing.T, w fyne.Window, name string) {
	t.Helper()
	dir := filepath.Join("..", "build", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, w.Canvas().Capture()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
