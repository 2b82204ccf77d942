// Command echo is HologramAgent's example native plugin, built on plugins/sdk. It exercises the
// whole plugin surface (docs/plugins.md): tools (echo, a large result through shared memory,
// memory, notifications, LLM completions, channel input), stage hooks (a short-circuit reply, a
// denial, a slow hook, an output signature), a channel named "echo", kernel events and the
// kernel's pause. Its plugin.json, beside this file, declares every capability.
package main

import (
	"context"
	"log/slog"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugmain"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() {
	plugmain.Main("echo", func(ctx context.Context, _ *slog.Logger) error { return sdk.Serve(ctx, newEcho().plugin()) })
}
