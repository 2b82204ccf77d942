package kernel

import (
	"context"
	"time"

	"github.com/hologramagent/hologram/plugins/host"
	"github.com/hologramagent/hologram/plugins/protocol"
)

// pluginStopTimeout bounds the plugins' stop ladder in Close.
const pluginStopTimeout = 15 * time.Second

// newPluginHost builds the plugin supervisor with its default timings (handshake 10 s, ping
// every 30 s, restarts after 1 s, 2 s, 3 s, the 4th crash in 5 minutes trips the breaker, hooks
// answer within 2 s unless they declare otherwise, at most 30 s) and the native extensions:
// the kernel's services, the turn of each tool call, and a shared-memory region per native
// plugin (32 MiB arenas).
func (k *Kernel) newPluginHost(reg host.Registry, pub host.Publisher, svc host.Services) pluginHost {
	return host.New(host.Options{
		Registry:   reg,
		Publisher:  pub,
		Services:   svc,
		TurnOf:     turnOf,
		ImageText:  func(ctx context.Context, _ string, data []byte) (string, error) { return k.ocr.ImageText(ctx, data) },
		Shm:        &host.ShmOptions{},
		Logger:     k.log,
		Clock:      k.clock,
		ClientInfo: protocol.Implementation{Name: "hologram", Version: Version},
	})
}
