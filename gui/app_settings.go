package gui

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"github.com/hologramagent/hologram/kernel/client"
)

// What the settings screen needs of the app: its environment, the language switch and
// connecting to a remote homed.

// settingsEnv is what the Settings view gets from the app.
func (a *App) settingsEnv() SettingsEnv {
	exe, err := os.Executable()
	if err != nil {
		a.log.Warn("finding the executable (start at login needs it)", "err", err)
	}
	return SettingsEnv{
		Prefs:      a.fa.Preferences(),
		Getenv:     a.o.Getenv,
		Executable: exe,
		DataDir:    a.o.DataDir,
		Remote:     a.o.Remote,
		OnLanguage: a.setLanguage,
		OnCloseToTray: func(on bool) {
			a.trace.emit("close_to_tray", map[string]any{"on": on, "effective": a.tray != nil && on})
		},
		OnConnect: a.connectRemote,
	}
}

// setLanguage switches the UI language and rebuilds the windows' contents and the tray menu
// (the view-models, with drafts and running turns, stay).
func (a *App) setLanguage(tag string) {
	if err := SetLanguage(tag); err != nil {
		a.showError(Tf("Could not switch the language: %v", err))
		return
	}
	a.trace.emit("language", map[string]any{"language": Language()})
	fyne.Do(func() {
		sel := tabSettings
		if a.tabs != nil {
			sel = a.tabs.SelectedIndex()
		}
		a.settings = NewSettingsVM(a.svc, a.settingsEnv())
		a.buildMain()
		a.selectTab(sel)
		if a.quick != nil {
			a.quick.SetTitle(T("Quick chat") + " · HologramAgent")
			a.quick.SetContent(NewChatView(a.quickVM, a.quick))
		}
		if a.tray != nil {
			a.tray.build()
		}
	})
}

// connectRemote checks a remote kernel, then restarts the app attached to it: Run returns and
// RestartArgs gives the new command line (the token stays in its file, never in argv).
func (a *App) connectRemote(rawURL, tokenFile, fingerprint string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("remote URL: %w", err)
	}
	// Plain HTTP reaches a loopback kernel as it is; anywhere else only because the owner
	// allowed it for this connection (Settings checked that before calling).
	insecure := u.Scheme == "http" && !loopbackHost(u.Hostname())
	token, err := client.ReadTokenFile(tokenFile)
	if err != nil {
		return err
	}
	c, err := client.Dial(client.Options{URL: rawURL, Token: token, Fingerprint: fingerprint, Insecure: insecure, Timeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Status(a.ctx); err != nil {
		return err
	}
	args := []string{"--remote", rawURL, "--token-file", tokenFile}
	if fingerprint != "" {
		args = append(args, "--fingerprint", fingerprint)
	}
	if insecure {
		args = append(args, "--insecure")
	}
	a.mu.Lock()
	a.restartArgs = args
	a.mu.Unlock()
	a.trace.emit("restart", map[string]any{"remote": rawURL})
	fyne.Do(a.fa.Quit)
	return nil
}

// loopbackHost says whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
