package gui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/data/binding"

	"github.com/hologramagent/hologram/kernel/client"
)

// Preference keys the settings view writes (the App reads them at start).
const (
	// prefLanguage holds the chosen UI language tag ("en", "zh"); unset: follow the locale.
	prefLanguage = "language"
	// prefCloseToTray says whether closing the main window keeps the app in the tray
	// (default true).
	prefCloseToTray = "close_to_tray"
	// prefRemotes holds the saved remote connections as a JSON array of RemoteConn.
	prefRemotes = "remote_connections"
)

// closeToTrayDefault is close-to-tray when the owner never chose.
const closeToTrayDefault = true

// SettingsEnv is what the settings view needs besides the kernel.
type SettingsEnv struct {
	// Prefs stores the owner's choices (language, close to tray, remote connections); required.
	Prefs fyne.Preferences
	// Getenv reads the environment (XDG_CONFIG_HOME, HOME); nil means os.Getenv.
	Getenv func(string) string
	// Executable is the absolute path of the hologram binary, the autostart entry's Exec=.
	Executable string
	// DataDir is the in-process kernel's data directory; Remote is the remote kernel's URL
	// ("" when the kernel runs in-process).
	DataDir string
	Remote  string
	// OnLanguage runs after the owner picks a language (stored in Prefs "language"): the App
	// switches (SetLanguage) and rebuilds its windows. Nil: SetLanguage only.
	OnLanguage func(tag string)
	// OnCloseToTray runs after the owner changes close-to-tray (stored in Prefs).
	OnCloseToTray func(bool)
	// OnConnect connects the app to a saved remote kernel. The settings view calls it only
	// with a URL that passed its checks: a plain http:// URL off loopback reaches it only when
	// the owner ticked "insecure" for it, so the callee dials http URLs with Insecure set.
	// Nil: connecting is not offered.
	OnConnect func(url, tokenFile, fingerprint string) error
}

// RemoteConn is a saved connection to a remote kernel (homed). The token itself is never
// stored: only the path of the file that holds it.
type RemoteConn struct {
	URL         string `json:"url"`
	TokenFile   string `json:"token_file"`
	Fingerprint string `json:"fingerprint,omitempty"` // SHA-256 pin of the server's certificate, hex
	Insecure    bool   `json:"insecure,omitempty"`    // plain http:// off loopback, allowed by the owner
}

// SettingsStatus is the outcome of the last action in one section of the settings.
type SettingsStatus struct {
	Text   binding.String
	Failed binding.Bool
}

func newSettingsStatus() SettingsStatus {
	return SettingsStatus{Text: binding.NewString(), Failed: binding.NewBool()}
}

func (s SettingsStatus) set(msg string, failed bool) {
	_ = s.Failed.Set(failed)
	_ = s.Text.Set(msg)
}

// SettingsVM is the settings view's state: providers, data, remote connections, start at
// login, language and close-to-tray. Kernel calls block; the view runs them off the UI
// goroutine. It is safe for concurrent use.
type SettingsVM struct {
	vmTasks
	svc client.Service
	env SettingsEnv

	// Providers lists the kernel's providers in fallback order.
	Providers binding.Item[[]client.Provider]
	// ProvName, ProvURL, ProvModel, ProvKey and ProvPriority are the add-or-replace form; the
	// key only passes through to the kernel, which seals it, and is cleared once sent.
	ProvName, ProvURL, ProvModel, ProvKey, ProvPriority binding.String
	// ProvVision is whether the model takes images: VisionAuto (ask the server), VisionYes or
	// VisionNo.
	ProvVision binding.String
	ProvStatus SettingsStatus
	// Busy is true while a provider call runs.
	Busy binding.Bool

	// Remotes are the saved remote connections; RemoteURL, RemoteToken, RemoteFingerprint and
	// RemoteInsecure are the form to add one. RemoteWarning is the warning to show while
	// "insecure" is ticked.
	Remotes                                   binding.Item[[]RemoteConn]
	RemoteURL, RemoteToken, RemoteFingerprint binding.String
	RemoteInsecure                            binding.Bool
	RemoteWarning                             binding.String
	RemoteStatus                              SettingsStatus

	// Autostart, LanguageTag and CloseToTray mirror the stored choices; change them with
	// SetAutostart, SetLanguageTag and SetCloseToTray. General is their status line.
	Autostart   binding.Bool
	LanguageTag binding.String
	CloseToTray binding.Bool
	General     SettingsStatus

	// Memory is the state of a memory export or import (settings_memory.go).
	Memory MemoryTransfer
	// Models is the dense embedding models' state (settings_models.go).
	Models *SettingsModels
	// Prompt is the base system prompt (settings_prompt.go).
	Prompt SettingsPrompt
	// Pair is Settings → Pair a phone (settings_pair.go).
	Pair SettingsPair

	mu sync.Mutex // serialises the read-modify-write of the saved remotes
}

// NewSettingsVM returns the settings view's view-model over svc, reading the stored choices
// from env.Prefs and the autostart entry from the disk.
func NewSettingsVM(svc client.Service, env SettingsEnv) *SettingsVM {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	vm := &SettingsVM{
		svc: svc, env: env,
		Providers: newSliceBinding[client.Provider](),
		ProvName:  binding.NewString(), ProvURL: binding.NewString(), ProvModel: binding.NewString(),
		ProvKey: binding.NewString(), ProvPriority: binding.NewString(), ProvVision: binding.NewString(), ProvStatus: newSettingsStatus(),
		Busy:    binding.NewBool(),
		Remotes: newSliceBinding[RemoteConn](), RemoteURL: binding.NewString(), RemoteToken: binding.NewString(),
		RemoteFingerprint: binding.NewString(), RemoteInsecure: binding.NewBool(), RemoteWarning: binding.NewString(),
		RemoteStatus: newSettingsStatus(),
		Autostart:    binding.NewBool(), LanguageTag: binding.NewString(), CloseToTray: binding.NewBool(),
		General: newSettingsStatus(), Memory: newMemoryTransfer(), Models: newSettingsModels(), Prompt: newSettingsPrompt(),
		Pair: newSettingsPair(),
	}
	remotes, err := vm.loadRemotes()
	if err != nil {
		vm.RemoteStatus.set(err.Error(), true)
	}
	_ = vm.Remotes.Set(remotes)
	on, err := autostartEnabled(env.Getenv)
	if err != nil {
		vm.General.set(Tf("Cannot read the start-at-login setting: %v", err), true)
	}
	_ = vm.Autostart.Set(on)
	tag := env.Prefs.StringWithFallback(prefLanguage, Language())
	_ = vm.LanguageTag.Set(tag)
	_ = vm.CloseToTray.Set(env.Prefs.BoolWithFallback(prefCloseToTray, closeToTrayDefault))
	warn := binding.NewDataListener(vm.updateRemoteWarning)
	vm.RemoteInsecure.AddListener(warn)
	vm.RemoteURL.AddListener(warn)
	return vm
}

// Providers.

// RefreshProviders reads the provider list from the kernel.
func (vm *SettingsVM) RefreshProviders(ctx context.Context) error {
	list, err := vm.svc.Providers(ctx)
	if err != nil {
		vm.ProvStatus.set(Tf("Could not list the providers: %v", err), true)
		return fmt.Errorf("list providers: %w", err)
	}
	_ = vm.Providers.Set(list)
	return nil
}

// EditProvider fills the form from a listed provider, to replace it (its key is not known to
// the app: an empty key field keeps the stored one, a typed one replaces it).
func (vm *SettingsVM) EditProvider(p client.Provider) {
	_ = vm.ProvName.Set(p.Name)
	_ = vm.ProvURL.Set(p.BaseURL)
	_ = vm.ProvModel.Set(p.Model)
	_ = vm.ProvKey.Set("")
	_ = vm.ProvPriority.Set(strconv.Itoa(p.Priority))
	_ = vm.ProvVision.Set(visionChoice(p.Vision))
	msg := Tf("Editing %s: saving replaces it.", p.Name)
	if p.HasKey {
		msg = Tf("Editing %s: saving replaces it. Its key is stored encrypted and never shown: leave the key empty to keep it, or type a new one.", p.Name)
	}
	vm.ProvStatus.set(msg, false)
}

// providerForm checks the form.
func (vm *SettingsVM) providerForm() (client.ProviderConfig, error) {
	name, _ := vm.ProvName.Get()
	u, _ := vm.ProvURL.Get()
	m, _ := vm.ProvModel.Get()
	k, _ := vm.ProvKey.Get()
	prio, _ := vm.ProvPriority.Get()
	if strings.TrimSpace(name) == "" {
		return client.ProviderConfig{}, errors.New(T("Enter a name for the provider, e.g. openai or deepseek."))
	}
	in := providerInput{Name: name, BaseURL: u, Model: m, APIKey: k}
	if s := strings.TrimSpace(prio); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return client.ProviderConfig{}, errors.New(T("The priority must be a whole number (lower is tried first)."))
		}
		in.Priority = n
	}
	p, err := in.config()
	if err != nil {
		return client.ProviderConfig{}, err
	}
	switch v, _ := vm.ProvVision.Get(); v {
	case VisionYes:
		p.Vision = new(true)
	case VisionNo:
		p.Vision = new(false)
	}
	list, _ := vm.Providers.Get()
	for _, old := range list {
		if old.Name == p.Name && old.HasKey && p.APIKey == "" {
			p.KeepKey = true // the kernel keeps the sealed key
		}
	}
	return p, nil
}

// SaveProvider checks the form and adds (or replaces) the provider in the kernel, which seals
// its key; the form is then cleared.
func (vm *SettingsVM) SaveProvider(ctx context.Context) (client.Provider, error) {
	p, err := vm.providerForm()
	if err != nil {
		vm.ProvStatus.set(err.Error(), true)
		return client.Provider{}, err
	}
	_ = vm.Busy.Set(true)
	defer vm.Busy.Set(false)
	saved, err := vm.svc.AddProvider(ctx, p)
	if err != nil {
		vm.ProvStatus.set(Tf("Could not save the provider: %v", err), true)
		return client.Provider{}, fmt.Errorf("add provider %s: %w", p.Name, err)
	}
	for _, b := range []binding.String{vm.ProvName, vm.ProvURL, vm.ProvModel, vm.ProvKey, vm.ProvPriority, vm.ProvVision} {
		_ = b.Set("")
	}
	if err := vm.RefreshProviders(ctx); err != nil {
		return saved, err
	}
	vm.ProvStatus.set(Tf("Saved provider %s.", saved.Name), false)
	return saved, nil
}

// RemoveProvider deletes a provider from the kernel (the view confirms first).
func (vm *SettingsVM) RemoveProvider(ctx context.Context, name string) error {
	_ = vm.Busy.Set(true)
	defer vm.Busy.Set(false)
	if err := vm.svc.RemoveProvider(ctx, name); err != nil {
		vm.ProvStatus.set(Tf("Could not remove %s: %v", name, err), true)
		return fmt.Errorf("remove provider %s: %w", name, err)
	}
	if err := vm.RefreshProviders(ctx); err != nil {
		return err
	}
	vm.ProvStatus.set(Tf("Removed provider %s.", name), false)
	return nil
}

// Data.

// DataText says where the data lives: the data directory, or the remote kernel.
func (vm *SettingsVM) DataText() string {
	if vm.env.Remote != "" {
		return Tf("Connected to the kernel at %s: the data lives on that machine.", vm.env.Remote)
	}
	if vm.env.DataDir == "" {
		return T("The data directory is not known.")
	}
	return vm.env.DataDir
}

// Remote connections.

func (vm *SettingsVM) loadRemotes() ([]RemoteConn, error) {
	raw := vm.env.Prefs.String(prefRemotes)
	if raw == "" {
		return nil, nil
	}
	var list []RemoteConn
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		return nil, errors.New(Tf("The saved remote connections cannot be read (%v); they start empty.", err))
	}
	return list, nil
}

func (vm *SettingsVM) storeRemotes(list []RemoteConn) {
	if len(list) == 0 {
		vm.env.Prefs.RemoveValue(prefRemotes)
	} else {
		b, _ := json.Marshal(list) // strings and bools only
		vm.env.Prefs.SetString(prefRemotes, string(b))
	}
	_ = vm.Remotes.Set(list)
}

// isLoopbackHost reports whether host is localhost or a loopback address.
func isLoopbackHost(host string) bool {
	h := strings.ToLower(host)
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// plainOffLoopback reports whether u is http:// to a host that is not loopback.
func plainOffLoopback(u *url.URL) bool {
	return u.Scheme == "http" && !isLoopbackHost(u.Hostname())
}

func (vm *SettingsVM) updateRemoteWarning() {
	insecure, _ := vm.RemoteInsecure.Get()
	msg := ""
	if insecure {
		msg = T("Warning: plain HTTP to another machine sends your token and your conversations unencrypted; anyone on the network can read or change them. Prefer https with a pinned fingerprint.")
	}
	_ = vm.RemoteWarning.Set(msg)
}

// checkRemote validates a connection; its errors are the messages to show.
func checkRemote(c RemoteConn) (RemoteConn, error) {
	c.URL = strings.TrimRight(strings.TrimSpace(c.URL), "/")
	c.TokenFile = strings.TrimSpace(c.TokenFile)
	c.Fingerprint = strings.TrimSpace(c.Fingerprint)
	if c.URL == "" {
		return c, errors.New(T("Enter the remote kernel's URL, e.g. https://host:7878."))
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return c, errors.New(T("The URL must start with https:// (or http:// on this machine)."))
	}
	if u.Hostname() == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return c, errors.New(T("The URL must be scheme://host:port, with nothing after the port."))
	}
	if plainOffLoopback(u) && !c.Insecure {
		return c, errors.New(T("Plain http:// to another machine is refused: use https, or tick \"insecure\" if you accept the risk."))
	}
	if !plainOffLoopback(u) {
		c.Insecure = false
	}
	if c.TokenFile == "" {
		return c, errors.New(T("Enter the path of the file that holds the token (the token itself is never stored)."))
	}
	if c.Fingerprint != "" {
		if u.Scheme != "https" {
			return c, errors.New(T("A certificate fingerprint needs an https:// URL."))
		}
		f, err := client.NormalizeFingerprint(c.Fingerprint)
		if err != nil {
			return c, errors.New(T("The fingerprint must be the certificate's SHA-256: 64 hex digits (colons allowed)."))
		}
		c.Fingerprint = f
	}
	return c, nil
}

// AddRemote checks the remote form and saves the connection in Prefs (replacing one with the
// same URL); the form is then cleared.
func (vm *SettingsVM) AddRemote() (RemoteConn, error) {
	var c RemoteConn
	c.URL, _ = vm.RemoteURL.Get()
	c.TokenFile, _ = vm.RemoteToken.Get()
	c.Fingerprint, _ = vm.RemoteFingerprint.Get()
	c.Insecure, _ = vm.RemoteInsecure.Get()
	c, err := checkRemote(c)
	if err != nil {
		vm.RemoteStatus.set(err.Error(), true)
		return RemoteConn{}, err
	}
	vm.mu.Lock()
	old, _ := vm.Remotes.Get()
	list := make([]RemoteConn, 0, len(old)+1)
	for _, o := range old {
		if o.URL != c.URL {
			list = append(list, o)
		}
	}
	list = append(list, c)
	vm.storeRemotes(list)
	vm.mu.Unlock()
	for _, b := range []binding.String{vm.RemoteURL, vm.RemoteToken, vm.RemoteFingerprint} {
		_ = b.Set("")
	}
	_ = vm.RemoteInsecure.Set(false)
	vm.RemoteStatus.set(Tf("Saved the connection to %s.", c.URL), false)
	return c, nil
}

// RemoveRemote forgets a saved connection.
func (vm *SettingsVM) RemoveRemote(rawURL string) {
	vm.mu.Lock()
	old, _ := vm.Remotes.Get()
	list := make([]RemoteConn, 0, len(old))
	for _, o := range old {
		if o.URL != rawURL {
			list = append(list, o)
		}
	}
	vm.storeRemotes(list)
	vm.mu.Unlock()
	vm.RemoteStatus.set(Tf("Forgot the connection to %s.", rawURL), false)
}

// CanConnect says whether the app offers connecting to a saved remote.
func (vm *SettingsVM) CanConnect() bool { return vm.env.OnConnect != nil }

// Connect checks a saved connection again and hands it to env.OnConnect.
func (vm *SettingsVM) Connect(c RemoteConn) error {
	if vm.env.OnConnect == nil {
		err := errors.New(T("Connecting to another kernel is not available here."))
		vm.RemoteStatus.set(err.Error(), true)
		return err
	}
	c, err := checkRemote(c)
	if err != nil {
		vm.RemoteStatus.set(err.Error(), true)
		return err
	}
	if err := vm.env.OnConnect(c.URL, c.TokenFile, c.Fingerprint); err != nil {
		vm.RemoteStatus.set(Tf("Could not connect to %s: %v", c.URL, err), true)
		return fmt.Errorf("connect to %s: %w", c.URL, err)
	}
	vm.RemoteStatus.set(Tf("Connected to %s.", c.URL), false)
	return nil
}

// Start at login, language, close to tray.

// SetAutostart writes or removes the XDG autostart entry that starts hologram at login.
func (vm *SettingsVM) SetAutostart(on bool) error {
	err := setAutostart(vm.env.Getenv, vm.env.Executable, on)
	actual, rerr := autostartEnabled(vm.env.Getenv)
	if rerr == nil {
		_ = vm.Autostart.Set(actual)
	}
	switch {
	case err != nil && on:
		vm.General.set(Tf("Could not turn on start at login: %v", err), true)
	case err != nil:
		vm.General.set(Tf("Could not turn off start at login: %v", err), true)
	case on:
		vm.General.set(T("HologramAgent starts when you log in."), false)
	default:
		vm.General.set(T("HologramAgent no longer starts when you log in."), false)
	}
	return err
}

// languageName is how a language is offered: its own name, followed by its name in the
// current language when that differs (so a person who cannot read the current language still
// finds theirs).
func languageName(tag, own string) string {
	var local string
	switch tag {
	case "en":
		local = T("English")
	case "zh":
		local = T("Simplified Chinese")
	}
	if local == "" || local == own {
		return own
	}
	return own + " (" + local + ")"
}

// LanguageNames returns the offered languages' names, in the order of Languages.
func (vm *SettingsVM) LanguageNames() []string {
	out := make([]string, len(Languages))
	for i, l := range Languages {
		out[i] = languageName(l.Tag, l.Name)
	}
	return out
}

// SetLanguageTag stores the chosen UI language and tells the App.
func (vm *SettingsVM) SetLanguageTag(tag string) error {
	known := false
	for _, l := range Languages {
		known = known || l.Tag == tag
	}
	if !known {
		return fmt.Errorf("unknown language %q", tag)
	}
	vm.env.Prefs.SetString(prefLanguage, tag)
	_ = vm.LanguageTag.Set(tag)
	if vm.env.OnLanguage != nil {
		vm.env.OnLanguage(tag)
	} else if err := SetLanguage(tag); err != nil {
		return fmt.Errorf("set language %s: %w", tag, err)
	}
	return nil
}

// SetCloseToTray stores whether closing the window keeps the app in the tray and tells the App.
func (vm *SettingsVM) SetCloseToTray(on bool) {
	vm.env.Prefs.SetBool(prefCloseToTray, on)
	_ = vm.CloseToTray.Set(on)
	if vm.env.OnCloseToTray != nil {
		vm.env.OnCloseToTray(on)
	}
}

// The choices of the provider form's "Images" field.
const (
	VisionAuto = "auto" // ask the server whether the model takes images
	VisionYes  = "yes"
	VisionNo   = "no"
)

// visionChoice is a provider's vision setting as the form's choice.
func visionChoice(v *bool) string {
	switch {
	case v == nil:
		return VisionAuto
	case *v:
		return VisionYes
	}
	return VisionNo
}
