//go:build integration

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/kerneltest"
)

// TestServiceSuiteAgainstHomedOverTCP runs the Service conformance suite against real homed
// processes serving TCP on loopback with a token, through the HTTP client the desktop app's
// remote mode uses: the same results as in-process (kernel.TestServiceInProcess).
func TestServiceSuiteAgainstHomedOverTCP(t *testing.T) {
	kerneltest.Run(t, func(t *testing.T) client.Service {
		e := newEnv(t)
		tokFile := filepath.Join(e.root, "token")
		h := e.start("--listen", "127.0.0.1:0", "--token-file", tokFile)
		addr, _ := h.listening(t)
		tok, err := os.ReadFile(tokFile)
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.Dial(client.Options{URL: "http://" + addr, Token: strings.TrimSpace(string(tok))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	})
}
