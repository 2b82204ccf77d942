// Package gui is the desktop app's user interface (ARCHITECTURE.md §8): Fyne views over
// view-models that talk to a kernel only through kernel/client.Service, so the same code runs
// with the kernel in-process (cmd/hologram) or attached to a remote homed.
//
// Layout (each file pair is a view-model and its view; views stay thin, state lives in the
// view-models, which tests drive through fyne.io/fyne/v2/test):
//
//	app.go        App: the main window (tabs Chat, Plugins, Settings; the welcome screen on first
//	              run), the tray (Quick chat / Open / Pause / Quit), the quick-chat window,
//	              notifications while hidden, language switching (rebuilds the windows).
//	conn.go       Conn: the kernel connection's state (connected, wrong token, wrong fingerprint,
//	              server gone, server restarted) with retry and backoff, shown as a banner.
//	chat*.go      ChatVM and its view: sessions, instructions, streaming Markdown replies, tool
//	              calls, attachments, Stop, copy, Enter/Shift+Enter, drafts.
//	welcome*.go   WelcomeVM and its view: the first provider (test connection, local servers).
//	plugins*.go   PluginsVM and its view.
//	settings*.go  SettingsVM and its view: providers, data dir, remote connections, autostart,
//	              language, close-to-tray.
//	i18n.go       T: English and Simplified Chinese strings.
//
// The constructors other files rely on (signatures are the contract between them):
//
//	func NewChatVM(svc client.Service, o ChatOptions) *ChatVM
//	func NewChatView(vm *ChatVM, w fyne.Window) fyne.CanvasObject
//	func NewWelcomeVM(svc client.Service) *WelcomeVM
//	func NewWelcomeView(vm *WelcomeVM, done func()) fyne.CanvasObject
//	func NewPluginsVM(svc client.Service) *PluginsVM
//	func NewPluginsView(vm *PluginsVM, w fyne.Window) fyne.CanvasObject
//	func NewSettingsVM(svc client.Service, env SettingsEnv) *SettingsVM
//	func NewSettingsView(vm *SettingsVM, w fyne.Window) fyne.CanvasObject
//	func NewApp(fa fyne.App, o Options) *App
//
// Rules: gui imports kernel/client, starmap and fyne only (never kernel/* or memory/*); UI
// changes from goroutines go through fyne.Do; every error a user can cause is shown, never lost.
package gui
