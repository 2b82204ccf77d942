// Command qq is HologramAgent's QQ channel plugin (a native plugin on plugins/sdk): it speaks
// OneBot v11 over WebSocket to a QQ bridge such as NapCat, forward (the plugin dials the
// bridge) or reverse (the bridge dials the plugin; the access token is checked). Private
// messages become channel input with the sender's number as the partner; group messages that
// @-mention the bot (or contain a configured keyword) become input of partner group_<number>
// in the declared scene chan:qq/peer:group_<number>. Replies go back with send_private_msg or
// send_group_msg. Messages are rate-limited per partner, and the owner-only tools refuse turns
// that are not the owner's. It is configured through the environment (README.md).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugmain"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() { plugmain.Main("qq", run) }

// run loads the configuration, listens for the bridge in reverse mode and serves the plugin
// until the kernel stops it.
func run(ctx context.Context, log *slog.Logger) error {
	cfg, _, err := confine(log, os.Getenv)
	if err != nil {
		return err
	}
	var ln net.Listener
	if cfg.Listen != "" {
		if ln, err = ListenReverse(ctx, cfg.Listen); err != nil {
			return err
		}
	}
	p := newQQ(cfg, NewBridge(log), ln, time.Now).plugin()
	p.Logger = log
	return sdk.Serve(ctx, p)
}

// confine reads the configuration (the token file included) and confines the process with
// Landlock to the system list: from then on it talks only to the bridge and the kernel.
func confine(log *slog.Logger, getenv func(string) string) (Config, sandbox.Status, error) {
	cfg, err := LoadConfig(getenv, readTokenFile)
	if err != nil {
		return Config{}, "", fmt.Errorf("configuration: %w", err)
	}
	st, err := sandbox.Apply(log, getenv, sandbox.Permissions{Network: true})
	return cfg, st, err
}
