package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/hologramagent/hologram/kernel/client"
)

// pair runs `waiter pair`: a single-use pairing of a phone with the web UI (docs/web.md). It
// prints the link, its QR code (half blocks), the short code, the expiry and the TLS
// fingerprint; --png FILE also writes the QR code as a PNG, --json prints the pairing only.
func (a *app) pair(ctx context.Context, args []string) error {
	fs := newFlags("pair")
	asJSON := fs.Bool("json", false, "print JSON")
	png := fs.String("png", "", "also write the QR code as a PNG to `FILE`")
	host := fs.String("host", "", "the kernel's host name or address in the link (default: its listener's, or this machine's LAN address)")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("usage: waiter pair [--host H] [--png FILE] [--json]")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	ps, ok := svc.(client.PairingService)
	if !ok {
		return fmt.Errorf("this kernel client cannot pair devices")
	}
	p, err := ps.NewPairing(ctx, *host)
	if errors.Is(err, client.ErrNotFound) {
		return fmt.Errorf("the kernel serves no web UI to pair with: it listens on TCP only with homed --listen (or the desktop app's \"Use from other devices\"): %w", err)
	}
	if err != nil {
		return err
	}
	if *png != "" {
		if err := writeQRPNG(p.URL, *png); err != nil {
			return err
		}
	}
	if *asJSON {
		return a.writeJSON(p)
	}
	qr, err := qrcode.New(p.URL, qrcode.Medium)
	if err != nil {
		return fmt.Errorf("QR code: %w", err)
	}
	writeQR(a.stdout, qr.Bitmap(), isTerminal(a.stdout))
	fmt.Fprintf(a.stdout, "Scan this with the phone's camera, or open:\n  %s\n", p.URL)
	fmt.Fprintf(a.stdout, "or type the code %s in \"Pairing code\" on the sign-in page.\n", p.Short)
	fmt.Fprintf(a.stdout, "Single use; expires at %s (in %s).\n", p.Expires.Local().Format("15:04:05"), time.Until(p.Expires).Round(time.Second))
	if p.Fingerprint != "" {
		fmt.Fprintf(a.stdout, "If the browser warns about the certificate, compare its SHA-256 fingerprint with\n  %s\n", fingerprintGroups(p.Fingerprint))
	}
	if *png != "" {
		fmt.Fprintf(a.stdout, "QR code written to %s\n", *png)
	}
	return nil
}

// writeQRPNG writes url's QR code as a PNG file (0600: it signs a device in while it lives).
func writeQRPNG(url, path string) error {
	img, err := qrcode.Encode(url, qrcode.Medium, 512)
	if err != nil {
		return fmt.Errorf("QR code: %w", err)
	}
	if err := os.WriteFile(path, img, 0o600); err != nil {
		return fmt.Errorf("--png: %w", err)
	}
	return nil
}

// writeQR draws a QR bitmap (true: dark, quiet zone included) two rows a line with half blocks.
// On a terminal it sets black on white, so it scans whatever the terminal's colours; otherwise
// the blocks are the dark modules.
func writeQR(w io.Writer, bm [][]bool, colour bool) {
	var b strings.Builder
	for y := 0; y < len(bm); y += 2 {
		if colour {
			b.WriteString("\x1b[30;107m")
		}
		for x := range bm[y] {
			top, bottom := bm[y][x], y+1 < len(bm) && bm[y+1][x]
			switch {
			case top && bottom:
				b.WriteString("█")
			case top:
				b.WriteString("▀")
			case bottom:
				b.WriteString("▄")
			default:
				b.WriteByte(' ')
			}
		}
		if colour {
			b.WriteString("\x1b[0m")
		}
		b.WriteByte('\n')
	}
	_, _ = io.WriteString(w, b.String())
}

// fingerprintGroups writes a hex fingerprint in groups of four, easier to compare by eye.
func fingerprintGroups(fp string) string {
	var parts []string
	for len(fp) > 4 {
		parts = append(parts, fp[:4])
		fp = fp[4:]
	}
	return strings.Join(append(parts, fp), " ")
}
