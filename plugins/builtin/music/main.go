// Command music is HologramAgent's built-in music plugin: it controls what plays — mpd over its
// TCP protocol (found through MPD_HOST / MPD_PORT as mpc finds it) and any desktop player over
// MPRIS on the session bus (Spotify, VLC, mpv with mpv-mpris, browsers), followed as they
// appear and leave — and plays the owner's music folder (XDG_MUSIC_DIR, else
// ~/.config/user-dirs.dirs, else ~/Music), indexed by its tags in <data dir>/music/library.json
// and rescanned when files change. Its tools are the owner's only.
//
// It is configured by its environment (README.md); its manifest passes it only the variables
// it declares (env_only) and lets it read the music folder and write its index.
package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugconf"
	"github.com/hologramagent/hologram/plugins/builtin/internal/plugmain"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() { plugmain.Main("music", run) }

// libraryInterval is how often the music folder is rescanned while nobody asks (every search
// and play rescans first when the index is older than [rescanAfter]).
const libraryInterval = time.Minute

// run finds the library, MPD and the session bus, confines the process and serves the plugin
// until the kernel stops it.
func run(ctx context.Context, log *slog.Logger) error {
	m, err := setup(ctx, log, os.Getenv)
	if err != nil {
		return err
	}
	return sdk.Serve(ctx, m.plugin())
}

// setup builds the plugin from its environment and confines the process with Landlock: it may
// read the music folder, write its own data directory and connect (mpd over TCP; the session
// bus is a unix socket).
func setup(ctx context.Context, log *slog.Logger, getenv func(string) string) (*music, error) {
	dir, err := plugconf.StateDir(getenv, "HOLOGRAM_MUSIC_STATE", "music")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	root := protocol.UserDir(getenv, "MUSIC", "Music")
	if root == "" {
		root = filepath.Join(dir, "no-music-folder") // no HOME: nothing to index
	}
	if _, err := sandbox.Apply(log, getenv, sandbox.Permissions{Read: []string{root}, Write: []string{dir}, Network: true}); err != nil {
		return nil, err
	}
	lib, err := openLibrary(log, root, dir, time.Now)
	if err != nil {
		return nil, err
	}
	m := &music{log: log, lib: lib, mpd: &mpd{addr: mpdAddress(getenv)}}
	if addr := getenv("DBUS_SESSION_BUS_ADDRESS"); addr == "" {
		m.busErr = errNoBus
	} else if m.players, err = followPlayers(ctx, log, addr); err != nil {
		log.Warn("no MPRIS players", "err", err)
		m.busErr = err
	}
	log.Info("music started", "library", root, "mpd", m.mpd.addr.String(), "mpris", m.players != nil)
	return m, nil
}
