package clienttest

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// fakeDesktop is the fake kernel's pause state and its answers to provider tests and detection.
type fakeDesktop struct {
	paused   bool
	check    func(client.ProviderConfig) client.ProviderCheck
	detected []client.ProviderConfig
}

// Paused reports whether a client has paused the fake kernel.
func (f *Fake) Paused() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.desktop.paused
}

// SetProviderCheck sets what POST /api/v1/providers/test answers for a valid configuration; nil
// restores the default: OK, the configured model answering "OK" in 42 ms, which is also the only
// model listed. The configuration's key is passed along, so a check can fail for a wrong one.
func (f *Fake) SetProviderCheck(fn func(client.ProviderConfig) client.ProviderCheck) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.desktop.check = fn
}

// SetDetected sets the local servers GET /api/v1/providers/detect offers (none by default).
func (f *Fake) SetDetected(ps ...client.ProviderConfig) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.desktop.detected = append([]client.ProviderConfig(nil), ps...)
}

// setPaused serves POST /api/v1/pause.
func (f *Fake) setPaused(w http.ResponseWriter, body []byte) {
	var in struct {
		Paused *bool `json:"paused"`
	}
	if !decode(w, body, &in) {
		return
	}
	if in.Paused == nil {
		WriteError(w, http.StatusBadRequest, `field "paused" (true or false) is required`)
		return
	}
	f.mu.Lock()
	f.desktop.paused = *in.Paused
	f.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// refusePaused answers 503 and true for a chat on a channel session while the fake is paused.
func (f *Fake) refusePaused(w http.ResponseWriter, session string) bool {
	f.mu.Lock()
	s, ok := f.sessions[session]
	paused := f.desktop.paused
	f.mu.Unlock()
	if !ok || !paused || s.Channel == "" {
		return false
	}
	WriteError(w, http.StatusServiceUnavailable, "unavailable: the kernel is paused: input from channel "+s.Channel+
		" is stopped until the owner resumes it (`waiter resume`)")
	return true
}

// testProvider serves POST /api/v1/providers/test, validating like the kernel.
func (f *Fake) testProvider(w http.ResponseWriter, body []byte) {
	var p client.ProviderConfig
	if !decode(w, body, &p) {
		return
	}
	p.BaseURL = strings.TrimRight(strings.TrimSpace(p.BaseURL), "/")
	p.Model = strings.TrimSpace(p.Model)
	if u, err := url.Parse(p.BaseURL); p.Name == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || p.Model == "" {
		WriteError(w, http.StatusBadRequest, "invalid request: provider "+strconv.Quote(p.Name)+" needs a name, an http(s) base_url and a model")
		return
	}
	f.mu.Lock()
	check := f.desktop.check
	f.mu.Unlock()
	if check == nil {
		check = func(p client.ProviderConfig) client.ProviderCheck {
			return client.ProviderCheck{OK: true, Latency: 42 * time.Millisecond, Model: p.Model, Models: []string{p.Model}, Reply: "OK"}
		}
	}
	writeJSON(w, http.StatusOK, check(p))
}

// detectProviders serves GET /api/v1/providers/detect.
func (f *Fake) detectProviders(w http.ResponseWriter) {
	f.mu.Lock()
	out := append([]client.ProviderConfig{}, f.desktop.detected...)
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"providers": out})
}
