package gui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

const uiPin = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89"

// settingsRig is a SettingsVM over a fake kernel with a temporary XDG config dir, recording
// what it tells the App.
type settingsRig struct {
	vm        *SettingsVM
	prefs     fyne.Preferences
	xdg       string
	languages []string
	tray      []bool
	connects  [][3]string
	connErr   error
}

func newSettingsRig(t *testing.T, svc client.Service, prefs fyne.Preferences, remote string) *settingsRig {
	t.Helper()
	if prefs == nil {
		prefs = test.NewTempApp(t).Preferences()
	}
	r := &settingsRig{prefs: prefs, xdg: t.TempDir()}
	r.vm = NewSettingsVM(svc, SettingsEnv{
		Prefs:         prefs,
		Getenv:        uiEnv(map[string]string{"XDG_CONFIG_HOME": r.xdg, "HOME": "/nonexistent"}),
		Executable:    "/usr/bin/hologram",
		DataDir:       "/home/owner/.local/share/hologram",
		Remote:        remote,
		OnLanguage:    func(tag string) { r.languages = append(r.languages, tag) },
		OnCloseToTray: func(on bool) { r.tray = append(r.tray, on) },
		OnConnect: func(url, tokenFile, fp string) error {
			r.connects = append(r.connects, [3]string{url, tokenFile, fp})
			return r.connErr
		},
	})
	return r
}

func TestSettingsProviders(t *testing.T) {
	ctx := context.Background()
	f, c := uiKernel(t)
	r := newSettingsRig(t, c, nil, "")
	vm := r.vm

	set := func(name, url, model, key, prio string) {
		_ = vm.ProvName.Set(name)
		_ = vm.ProvURL.Set(url)
		_ = vm.ProvModel.Set(model)
		_ = vm.ProvKey.Set(key)
		_ = vm.ProvPriority.Set(prio)
	}
	for _, tc := range []struct {
		name, pname, url, model, prio, want string
	}{
		{"no name", "", "https://api.deepseek.com/v1", "deepseek-chat", "", "Enter a name for the provider"},
		{"bad name", "deep seek", "https://api.deepseek.com/v1", "deepseek-chat", "", "letters, digits"},
		{"bad url", "ds", "api.deepseek.com", "deepseek-chat", "", "must start with http:// or https://"},
		{"no model", "ds", "https://api.deepseek.com/v1", "", "", "Enter a model name"},
		{"bad priority", "ds", "https://api.deepseek.com/v1", "deepseek-chat", "first", "whole number"},
		{"negative priority", "ds", "https://api.deepseek.com/v1", "deepseek-chat", "-1", "cannot be negative"},
	} {
		set(tc.pname, tc.url, tc.model, "", tc.prio)
		if _, err := vm.SaveProvider(ctx); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	if n := len(slices.DeleteFunc(uiRequests(f), func(s string) bool { return !strings.HasPrefix(s, "POST") })); n != 0 {
		t.Fatalf("%d POSTs for invalid forms", n)
	}

	set("deepseek", "https://api.deepseek.com/v1", "deepseek-chat", "sk-ds", "1")
	if _, err := vm.SaveProvider(ctx); err != nil {
		t.Fatal(err)
	}
	set("ollama", "http://127.0.0.1:11434/v1", "qwen2.5:7b", "", "")
	if _, err := vm.SaveProvider(ctx); err != nil {
		t.Fatal(err)
	}
	list := uiGet[[]client.Provider](t, vm.Providers)
	if len(list) != 2 || list[0].Name != "ollama" || list[1].Name != "deepseek" || !list[1].HasKey || list[1].Priority != 1 {
		t.Fatalf("providers = %+v", list)
	}
	if p, _ := f.ProviderConfig("deepseek"); p.APIKey != "sk-ds" {
		t.Errorf("kernel key = %q", p.APIKey)
	}
	for _, b := range []string{uiGet[string](t, vm.ProvName), uiGet[string](t, vm.ProvKey)} {
		if b != "" {
			t.Errorf("form not cleared: %q", b)
		}
	}

	// Editing a provider with a key keeps the key when the field stays empty.
	vm.EditProvider(list[1])
	if got := uiGet[string](t, vm.ProvStatus.Text); !strings.Contains(got, "leave the key empty to keep it") {
		t.Errorf("edit status = %q", got)
	}
	_ = vm.ProvPriority.Set("1")
	if _, err := vm.SaveProvider(ctx); err != nil {
		t.Fatalf("save without retyping the key: %v", err)
	}
	if p, _ := f.ProviderConfig("deepseek"); p.APIKey == "" || p.Priority != 1 {
		t.Fatalf("edited provider = %+v; want its key kept and priority 1", p)
	}
	vm.EditProvider(list[1])
	_ = vm.ProvPriority.Set("0")
	_ = vm.ProvKey.Set("sk-ds2")
	if _, err := vm.SaveProvider(ctx); err != nil {
		t.Fatal(err)
	}
	if p, _ := f.ProviderConfig("deepseek"); p.APIKey != "sk-ds2" || p.Priority != 0 {
		t.Errorf("replaced provider = %+v", p)
	}

	if err := vm.RemoveProvider(ctx, "ollama"); err != nil {
		t.Fatal(err)
	}
	if list := uiGet[[]client.Provider](t, vm.Providers); len(list) != 1 || list[0].Name != "deepseek" {
		t.Errorf("after remove: %+v", list)
	}
	if err := vm.RemoveProvider(ctx, "ollama"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("remove twice: %v", err)
	}
	if s := uiGet[string](t, vm.ProvStatus.Text); !strings.HasPrefix(s, "Could not remove ollama: ") || !uiGet[bool](t, vm.ProvStatus.Failed) {
		t.Errorf("status = %q", s)
	}
}

func TestCheckRemote(t *testing.T) {
	pin := strings.ToLower(strings.ReplaceAll(uiPin, ":", ""))
	for _, tc := range []struct {
		name string
		in   RemoteConn
		want RemoteConn
		err  string
	}{
		{"https pinned", RemoteConn{URL: " https://home.example:7878/ ", TokenFile: "/t", Fingerprint: "sha256:" + uiPin},
			RemoteConn{URL: "https://home.example:7878", TokenFile: "/t", Fingerprint: pin}, ""},
		{"loopback http", RemoteConn{URL: "http://127.0.0.1:7878", TokenFile: "/t"},
			RemoteConn{URL: "http://127.0.0.1:7878", TokenFile: "/t"}, ""},
		{"localhost http, insecure dropped", RemoteConn{URL: "http://localhost:7878", TokenFile: "/t", Insecure: true},
			RemoteConn{URL: "http://localhost:7878", TokenFile: "/t"}, ""},
		{"lan http refused", RemoteConn{URL: "http://192.168.1.5:7878", TokenFile: "/t"}, RemoteConn{}, "is refused"},
		{"lan http insecure", RemoteConn{URL: "http://192.168.1.5:7878", TokenFile: "/t", Insecure: true},
			RemoteConn{URL: "http://192.168.1.5:7878", TokenFile: "/t", Insecure: true}, ""},
		{"no url", RemoteConn{TokenFile: "/t"}, RemoteConn{}, "Enter the remote kernel's URL"},
		{"bad scheme", RemoteConn{URL: "ftp://h:1", TokenFile: "/t"}, RemoteConn{}, "must start with https://"},
		{"path", RemoteConn{URL: "https://h:1/api", TokenFile: "/t"}, RemoteConn{}, "nothing after the port"},
		{"user", RemoteConn{URL: "https://me@h:1", TokenFile: "/t"}, RemoteConn{}, "nothing after the port"},
		{"no token file", RemoteConn{URL: "https://h:1"}, RemoteConn{}, "file that holds the token"},
		{"pin on http", RemoteConn{URL: "http://127.0.0.1:1", TokenFile: "/t", Fingerprint: uiPin}, RemoteConn{}, "needs an https:// URL"},
		{"short pin", RemoteConn{URL: "https://h:1", TokenFile: "/t", Fingerprint: "abcd"}, RemoteConn{}, "64 hex digits"},
	} {
		got, err := checkRemote(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: checkRemote = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

func TestSettingsRemotes(t *testing.T) {
	_, c := uiKernel(t)
	r := newSettingsRig(t, c, nil, "")
	vm := r.vm

	// Ticking insecure shows the warning.
	_ = vm.RemoteInsecure.Set(true)
	if w := uiGet[string](t, vm.RemoteWarning); !strings.HasPrefix(w, "Warning: plain HTTP") {
		t.Errorf("warning = %q", w)
	}
	_ = vm.RemoteInsecure.Set(false)
	if w := uiGet[string](t, vm.RemoteWarning); w != "" {
		t.Errorf("warning without insecure = %q", w)
	}

	add := func(url, tok, fp string, insecure bool) error {
		_ = vm.RemoteURL.Set(url)
		_ = vm.RemoteToken.Set(tok)
		_ = vm.RemoteFingerprint.Set(fp)
		_ = vm.RemoteInsecure.Set(insecure)
		_, err := vm.AddRemote()
		return err
	}
	if err := add("http://192.168.1.5:7878", "/tok", "", false); err == nil {
		t.Fatal("plain http off loopback saved without insecure")
	}
	if s := uiGet[string](t, vm.RemoteStatus.Text); !strings.Contains(s, "is refused") {
		t.Errorf("status = %q", s)
	}
	if err := add("https://home.example:7878", "/home/a/.config/hologram/home.token", uiPin, false); err != nil {
		t.Fatal(err)
	}
	if err := add("http://192.168.1.5:7878", "/tok", "", true); err != nil {
		t.Fatal(err)
	}
	if err := add("https://home.example:7878", "/other.token", "", false); err != nil { // replaces by URL
		t.Fatal(err)
	}
	want := []RemoteConn{
		{URL: "http://192.168.1.5:7878", TokenFile: "/tok", Insecure: true},
		{URL: "https://home.example:7878", TokenFile: "/other.token"},
	}
	if got := uiGet[[]RemoteConn](t, vm.Remotes); !slices.Equal(got, want) {
		t.Fatalf("remotes = %+v, want %+v", got, want)
	}
	var stored []RemoteConn
	if err := json.Unmarshal([]byte(r.prefs.String(prefRemotes)), &stored); err != nil || !slices.Equal(stored, want) {
		t.Errorf("stored %q (%v)", r.prefs.String(prefRemotes), err)
	}

	// A new view-model over the same preferences sees them.
	again := newSettingsRig(t, c, r.prefs, "")
	if got := uiGet[[]RemoteConn](t, again.vm.Remotes); !slices.Equal(got, want) {
		t.Errorf("reloaded remotes = %+v", got)
	}

	// Connect hands the checked connection to the App, and shows its error.
	if err := vm.Connect(want[0]); err != nil {
		t.Fatal(err)
	}
	r.connErr = errors.New("certificate fingerprint mismatch")
	if err := vm.Connect(want[1]); err == nil {
		t.Fatal("connect error lost")
	}
	if s := uiGet[string](t, vm.RemoteStatus.Text); s != "Could not connect to https://home.example:7878: certificate fingerprint mismatch" {
		t.Errorf("status = %q", s)
	}
	if err := vm.Connect(RemoteConn{URL: "http://10.0.0.1:1", TokenFile: "/t"}); err == nil {
		t.Error("connected over plain http off loopback without insecure")
	}
	wantCalls := [][3]string{{"http://192.168.1.5:7878", "/tok", ""}, {"https://home.example:7878", "/other.token", ""}}
	if !slices.Equal(r.connects, wantCalls) {
		t.Errorf("OnConnect calls = %q, want %q", r.connects, wantCalls)
	}

	vm.RemoveRemote("http://192.168.1.5:7878")
	vm.RemoveRemote("https://home.example:7878")
	if got := uiGet[[]RemoteConn](t, vm.Remotes); len(got) != 0 || r.prefs.String(prefRemotes) != "" {
		t.Errorf("after removing all: %+v, prefs %q", got, r.prefs.String(prefRemotes))
	}

	// Unreadable saved connections: said so, and the list starts empty.
	r.prefs.SetString(prefRemotes, "{not json")
	broken := newSettingsRig(t, c, r.prefs, "")
	if s := uiGet[string](t, broken.vm.RemoteStatus.Text); !strings.HasPrefix(s, "The saved remote connections cannot be read") {
		t.Errorf("status = %q", s)
	}
}

func TestSettingsGeneral(t *testing.T) {
	_, c := uiKernel(t)
	r := newSettingsRig(t, c, nil, "")
	vm := r.vm
	t.Cleanup(func() { _ = SetLanguage("en") })

	// Start at login writes and removes the XDG entry.
	if uiGet[bool](t, vm.Autostart) {
		t.Fatal("autostart on at start")
	}
	if err := vm.SetAutostart(true); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(r.xdg, "autostart", "hologram.desktop")
	if b, err := os.ReadFile(entry); err != nil || !strings.Contains(string(b), "\nExec=/usr/bin/hologram\n") {
		t.Fatalf("entry: %q, %v", b, err)
	}
	if !uiGet[bool](t, vm.Autostart) || uiGet[string](t, vm.General.Text) != "HologramAgent starts when you log in." {
		t.Errorf("after on: %v %q", uiGet[bool](t, vm.Autostart), uiGet[string](t, vm.General.Text))
	}
	if err := vm.SetAutostart(false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entry); !os.IsNotExist(err) || uiGet[bool](t, vm.Autostart) {
		t.Errorf("entry after off: %v", err)
	}
	// A failure is shown and the switch shows the real state.
	if err := os.RemoveAll(filepath.Join(r.xdg, "autostart")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.xdg, "autostart"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := vm.SetAutostart(true); err == nil {
		t.Fatal("no error writing under a file")
	}
	if s := uiGet[string](t, vm.General.Text); !strings.HasPrefix(s, "Could not turn on start at login: ") || !uiGet[bool](t, vm.General.Failed) {
		t.Errorf("status = %q", s)
	}

	// Language.
	if got := vm.LanguageNames(); !slices.Equal(got, []string{"English", "简体中文 (Simplified Chinese)"}) {
		t.Errorf("names in English = %q", got)
	}
	if err := vm.SetLanguageTag("zh"); err != nil {
		t.Fatal(err)
	}
	if r.prefs.String(prefLanguage) != "zh" || !slices.Equal(r.languages, []string{"zh"}) || uiGet[string](t, vm.LanguageTag) != "zh" {
		t.Errorf("prefs %q, OnLanguage %q", r.prefs.String(prefLanguage), r.languages)
	}
	if err := vm.SetLanguageTag("fr"); err == nil {
		t.Error("unknown language accepted")
	}
	if err := SetLanguage("zh"); err != nil {
		t.Fatal(err)
	}
	if got := vm.LanguageNames(); !slices.Equal(got, []string{"English (英语)", "简体中文"}) {
		t.Errorf("names in Chinese = %q", got)
	}
	_ = SetLanguage("en")

	// Close to tray: on unless chosen otherwise.
	if !uiGet[bool](t, vm.CloseToTray) {
		t.Error("close to tray off by default")
	}
	vm.SetCloseToTray(false)
	if r.prefs.BoolWithFallback(prefCloseToTray, true) || !slices.Equal(r.tray, []bool{false}) {
		t.Errorf("prefs %v, OnCloseToTray %v", r.prefs.Bool(prefCloseToTray), r.tray)
	}
	if uiGet[bool](t, newSettingsRig(t, c, r.prefs, "").vm.CloseToTray) {
		t.Error("close to tray not read back from prefs")
	}

	// Data: the directory, or the remote kernel.
	if got := vm.DataText(); got != "/home/owner/.local/share/hologram" {
		t.Errorf("data = %q", got)
	}
	if got := newSettingsRig(t, c, nil, "https://home.example:7878").vm.DataText(); !strings.Contains(got, "https://home.example:7878") {
		t.Errorf("remote data = %q", got)
	}
}

// settingsWindow shows the settings view in a test window once its first load is done.
func settingsWindow(t *testing.T, r *settingsRig) fyne.Window {
	t.Helper()
	w := test.NewTempWindow(t, nil)
	view := NewSettingsView(r.vm, w)
	r.vm.Wait()
	w.SetContent(view)
	w.Resize(fyne.NewSize(820, 2000))
	return w
}

// uiCheck returns the check box labelled text.
func uiCheck(t *testing.T, w fyne.Window, text string) *widget.Check {
	t.Helper()
	var found *widget.Check
	uiWalk(w.Content(), func(o fyne.CanvasObject) {
		if c, ok := o.(*widget.Check); ok && c.Text == text {
			found = c
		}
	})
	if found == nil {
		t.Fatalf("no check %q", text)
	}
	return found
}

func TestSettingsView(t *testing.T) {
	ctx := context.Background()
	c := uiModelsKernel(t, clienttest.NewModels(clienttest.New()))
	if _, err := c.AddProvider(ctx, client.ProviderConfig{Name: "deepseek", BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat", APIKey: "sk", Priority: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddProvider(ctx, client.ProviderConfig{Name: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen2.5:7b"}); err != nil {
		t.Fatal(err)
	}
	app := test.NewTempApp(t)
	app.Preferences().SetString(prefRemotes, `[{"url":"https://home.example:7878","token_file":"/home/owner/.config/hologram/home.token","fingerprint":"`+
		strings.ToLower(strings.ReplaceAll(uiPin, ":", ""))+`"}]`)
	r := newSettingsRig(t, c, app.Preferences(), "")
	w := settingsWindow(t, r)
	test.AssertRendersToMarkup(t, "settings.xml", w.Canvas())

	// Remove a provider: confirmed in a dialog.
	test.Tap(uiButtons(w, "Remove")[0])
	if !uiHasText(w, "Remove the provider ollama?") {
		t.Fatalf("no confirmation: %q", uiTexts(w))
	}
	test.Tap(uiButton(t, w, "Remove"))
	r.vm.Wait()
	if list := uiGet[[]client.Provider](t, r.vm.Providers); len(list) != 1 || list[0].Name != "deepseek" {
		t.Errorf("providers = %+v", list)
	}

	// Add one by typing.
	test.Type(uiEntry(t, w, "deepseek"), "kimi")
	test.Type(uiEntry(t, w, "https://api.deepseek.com/v1"), "https://api.moonshot.cn/v1")
	test.Type(uiEntry(t, w, "deepseek-chat"), "moonshot-v1-8k")
	test.Type(uiEntry(t, w, "Not needed for local servers"), "sk-kimi")
	test.Tap(uiButton(t, w, "Save provider"))
	r.vm.Wait()
	if !uiHasText(w, "kimi: moonshot-v1-8k at https://api.moonshot.cn/v1 · priority 0 · key stored encrypted") {
		t.Errorf("new provider not listed: %q", uiTexts(w))
	}

	// Start at login and close to tray through their check boxes.
	test.Tap(uiCheck(t, w, "Start HologramAgent when I log in"))
	if _, err := os.Stat(filepath.Join(r.xdg, "autostart", "hologram.desktop")); err != nil {
		t.Errorf("autostart entry: %v", err)
	}
	test.Tap(uiCheck(t, w, "Keep running in the tray when the window is closed"))
	if !slices.Equal(r.tray, []bool{false}) {
		t.Errorf("OnCloseToTray = %v", r.tray)
	}

	// The insecure box shows its warning; Connect and Forget act on the saved connection.
	test.Tap(uiCheck(t, w, "Insecure: allow plain http:// to another machine"))
	if !uiHasText(w, "Warning: plain HTTP to another machine") {
		t.Errorf("no warning: %q", uiTexts(w))
	}
	test.Tap(uiButton(t, w, "Connect"))
	r.vm.Wait()
	if len(r.connects) != 1 || r.connects[0][0] != "https://home.example:7878" {
		t.Errorf("connects = %q", r.connects)
	}
	test.Tap(uiButton(t, w, "Forget"))
	if !uiHasText(w, "No saved connections.") {
		t.Errorf("connection still listed: %q", uiTexts(w))
	}
}

func TestSettingsViewChinese(t *testing.T) {
	if err := SetLanguage("zh"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = SetLanguage("en") })
	_, c := uiKernel(t)
	r := newSettingsRig(t, c, nil, "")
	w := settingsWindow(t, r)
	for _, s := range []string{"还没有模型服务商：聊天至少需要一个。", "没有已保存的连接。"} {
		if !uiHasText(w, s) {
			t.Errorf("no %q in %q", s, uiTexts(w))
		}
	}
	uiCheck(t, w, "登录时启动 HologramAgent")
}

// TestSettingsMemoryExportImport: the memory section exports through the real HTTP client and
// imports a file, showing the outcome; a second transfer while one runs is refused.
func TestSettingsMemoryExportImport(t *testing.T) {
	f, c := uiKernel(t)
	f.SetExport(client.FormatJSONL, []byte(`{"type":"entity","name":"Porto","entityType":"place","observations":[]}`+"\n"))
	vm := newSettingsRig(t, c, nil, "").vm
	ctx := context.Background()
	var out bytes.Buffer
	if err := vm.ExportMemory(ctx, client.FormatJSONL, false, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Porto") {
		t.Fatalf("exported %q", out.String())
	}
	if got := uiGet[string](t, vm.Memory.Status.Text); got != "The memory was exported." {
		t.Errorf("status after export = %q", got)
	}
	if _, err := vm.ImportMemory(ctx, client.FormatJSONL, strings.NewReader(out.String())); err != nil {
		t.Fatal(err)
	}
	if got := uiGet[string](t, vm.Memory.Status.Text); !strings.HasPrefix(got, "Imported ") {
		t.Errorf("status after import = %q", got)
	}
	if _, err := vm.ImportMemory(ctx, "csv", strings.NewReader("x")); err == nil {
		t.Fatal("an unknown format was accepted")
	} else if got := uiGet[string](t, vm.Memory.Status.Text); !strings.HasPrefix(got, "The import failed") {
		t.Errorf("status after a failed import = %q", got)
	}
	_ = vm.Memory.Running.Set(true)
	if err := vm.ExportMemory(ctx, client.FormatJSON, false, io.Discard); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("a second transfer = %v; want a refusal", err)
	}
}

// TestSettingsMemoryExportIsPrivate: the export written through a file dialog's writer (Fyne's
// file storage, which creates files 0644) ends 0600, its content in full.
func TestSettingsMemoryExportIsPrivate(t *testing.T) {
	f, c := uiKernel(t)
	f.SetExport(client.FormatJSON, []byte(`{"version":1,"events":[{"content":"my secret plans"}]}`))
	vm := newSettingsRig(t, c, nil, "").vm
	path := filepath.Join(t.TempDir(), "hologram-backup.json")
	wc, err := storage.Writer(storage.NewFileURI(path))
	if err != nil {
		t.Fatal(err)
	}
	if err := vm.ExportMemory(context.Background(), client.FormatJSON, false, wc); err != nil {
		t.Fatal(err)
	}
	if err := wc.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("export file mode %v, want 0600", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "my secret plans") {
		t.Errorf("export file holds %q", b)
	}
}
