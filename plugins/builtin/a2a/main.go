// Command a2a is HologramAgent's A2A client plugin, built on plugins/sdk: the owner's sessions
// delegate to other agents over A2A 1.0 with the official Go SDK's client
// (github.com/a2aproject/a2a-go/v2/a2aclient). The peers come from the kernel's config
// ([[a2a.peers]]: name, url, token_file), which the kernel passes in HOLOGRAM_A2A_PEERS; the
// tools (a2a_send, a2a_get_task) are owner-only. README.md beside this file documents them.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugmain"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() { plugmain.Main("a2a", run) }

func run(ctx context.Context, log *slog.Logger) error {
	peers, err := PeersFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	return sdk.Serve(ctx, newA2A(peers, log).plugin())
}
