package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// Pairing is a single-use link that signs a phone's browser in to the web UI (docs/web.md):
// URL, https://HOST:PORT/#pair=CODE, is for a QR code; Short is its typed form for the sign-in
// page's "Pairing code" field (at most 5 wrong tries in all). It expires at Expires (5 minutes).
type Pairing struct {
	URL     string    `json:"url"`
	Code    string    `json:"code"`
	Short   string    `json:"short"`
	Expires time.Time `json:"expires"`
	// Fingerprint is the SHA-256 fingerprint of the listener's TLS certificate, when it has TLS:
	// the phone's browser shows it when it warns about a self-signed certificate.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// PairingService makes web UI pairings. It is served by the kernel's HTTP API when the kernel
// listens on TCP (otherwise ErrNotFound: there is no web UI to pair with).
type PairingService interface {
	// NewPairing makes a pairing; host, when set, names the kernel in its URL instead of the
	// listener's address (or this machine's first LAN address when it listens on all).
	NewPairing(ctx context.Context, host string) (Pairing, error)
	// WebUI reports whether the kernel serves the web UI (it listens on TCP), so a pairing can
	// be made.
	WebUI(ctx context.Context) (bool, error)
}

// NewPairing makes a web UI pairing (POST /api/v1/web/pairings).
func (c *HTTP) NewPairing(ctx context.Context, host string) (Pairing, error) {
	var out Pairing
	err := c.do(ctx, http.MethodPost, "/api/v1/web/pairings", struct {
		Host string `json:"host,omitempty"`
	}{host}, &out)
	return out, err
}

// WebUI reports whether the kernel serves the web UI: its device list
// (GET /api/v1/web/devices) answers, where a kernel without a TCP listener answers 404.
func (c *HTTP) WebUI(ctx context.Context) (bool, error) {
	var out struct {
		Devices []json.RawMessage `json:"devices"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/web/devices", nil, &out)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

var _ PairingService = (*HTTP)(nil)
