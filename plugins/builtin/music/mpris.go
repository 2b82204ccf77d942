package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/godbus/dbus/v5"
)

// MPRIS names (https://specifications.freedesktop.org/mpris-spec/latest/).
const (
	mprisPrefix    = "org.mpris.MediaPlayer2."
	mprisPath      = dbus.ObjectPath("/org/mpris/MediaPlayer2")
	mprisRoot      = "org.mpris.MediaPlayer2"
	mprisPlayer    = "org.mpris.MediaPlayer2.Player"
	mprisTrackList = "org.mpris.MediaPlayer2.TrackList"
	noTrack        = dbus.ObjectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack")
)

// players follows the MPRIS players on the session bus: it lists them once and then follows
// NameOwnerChanged as they appear and leave. It is safe for concurrent use.
type players struct {
	conn *dbus.Conn
	log  *slog.Logger

	mu    sync.Mutex
	names []string // bus names (org.mpris.MediaPlayer2.vlc), the newest last
}

// followPlayers connects to the session bus at addr and follows its players until ctx ends.
func followPlayers(ctx context.Context, log *slog.Logger, addr string) (*players, error) {
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("the session bus (%s): %w", addr, err)
	}
	p := &players{conn: conn, log: log}
	if err := conn.AddMatchSignal(dbus.WithMatchSender("org.freedesktop.DBus"), dbus.WithMatchInterface("org.freedesktop.DBus"),
		dbus.WithMatchMember("NameOwnerChanged"), dbus.WithMatchArg0Namespace(strings.TrimSuffix(mprisPrefix, "."))); err != nil {
		conn.Close()
		return nil, fmt.Errorf("the session bus: watching players: %w", err)
	}
	signals := make(chan *dbus.Signal, 16)
	conn.Signal(signals)
	var names []string
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.ListNames", 0).Store(&names); err != nil {
		conn.Close()
		return nil, fmt.Errorf("the session bus: listing names: %w", err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, mprisPrefix) {
			p.names = append(p.names, n)
		}
	}
	slices.Sort(p.names)
	go func() {
		for {
			select {
			case <-ctx.Done():
				conn.Close()
				return
			case s, ok := <-signals:
				if !ok {
					return
				}
				p.signal(s)
			}
		}
	}()
	return p, nil
}

// signal applies one NameOwnerChanged: a player appeared (new owner) or left (none).
func (p *players) signal(s *dbus.Signal) {
	if s.Name != "org.freedesktop.DBus.NameOwnerChanged" || len(s.Body) != 3 {
		return
	}
	name, _ := s.Body[0].(string)
	owner, _ := s.Body[2].(string)
	if !strings.HasPrefix(name, mprisPrefix) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.names = slices.DeleteFunc(p.names, func(n string) bool { return n == name })
	if owner != "" {
		p.names = append(p.names, name)
		p.log.Info("MPRIS player appeared", "player", name)
	} else {
		p.log.Info("MPRIS player left", "player", name)
	}
}

// list returns the players' bus names, the newest last.
func (p *players) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.names)
}

// player is one MPRIS player, the backend for it.
type player struct {
	conn *dbus.Conn
	bus  string
}

func (p *player) obj() dbus.BusObject { return p.conn.Object(p.bus, mprisPath) }

func (p *player) name() string {
	var id string
	if v, err := p.obj().GetProperty(mprisRoot + ".Identity"); err == nil {
		id, _ = v.Value().(string)
	}
	short := strings.TrimPrefix(p.bus, mprisPrefix)
	if id == "" || strings.EqualFold(id, short) {
		return "MPRIS player " + short
	}
	return fmt.Sprintf("MPRIS player %s (%s)", id, short)
}

// call calls a method of the Player interface.
func (p *player) call(ctx context.Context, method string, args ...any) error {
	if err := p.obj().CallWithContext(ctx, mprisPlayer+"."+method, 0, args...).Err; err != nil {
		return fmt.Errorf("%s: %s: %w", p.name(), method, err)
	}
	return nil
}

func (p *player) status(ctx context.Context) (playerStatus, error) {
	var props map[string]dbus.Variant
	if err := p.obj().CallWithContext(ctx, "org.freedesktop.DBus.Properties.GetAll", 0, mprisPlayer).Store(&props); err != nil {
		return playerStatus{}, fmt.Errorf("%s: %w", p.name(), err)
	}
	st := playerStatus{Volume: -1}
	switch s, _ := props["PlaybackStatus"].Value().(string); s {
	case "Playing":
		st.State = statePlaying
	case "Paused":
		st.State = statePaused
	default:
		st.State = stateStopped
	}
	if v, ok := props["Volume"].Value().(float64); ok {
		st.Volume = int(v*100 + 0.5)
	}
	if pos, ok := props["Position"].Value().(int64); ok {
		st.Position = float64(pos) / 1e6
	}
	meta, _ := props["Metadata"].Value().(map[string]dbus.Variant)
	st.Title, _ = meta["xesam:title"].Value().(string)
	st.Album, _ = meta["xesam:album"].Value().(string)
	if as, ok := meta["xesam:artist"].Value().([]string); ok {
		st.Artist = strings.Join(as, ", ")
	}
	switch l := meta["mpris:length"].Value().(type) {
	case int64:
		st.Length = float64(l) / 1e6
	case uint64:
		st.Length = float64(l) / 1e6
	}
	return st, nil
}

func (p *player) play(ctx context.Context) error     { return p.call(ctx, "Play") }
func (p *player) pause(ctx context.Context) error    { return p.call(ctx, "Pause") }
func (p *player) next(ctx context.Context) error     { return p.call(ctx, "Next") }
func (p *player) previous(ctx context.Context) error { return p.call(ctx, "Previous") }

func (p *player) setVolume(ctx context.Context, percent int) error {
	err := p.obj().CallWithContext(ctx, "org.freedesktop.DBus.Properties.Set", 0, mprisPlayer, "Volume", dbus.MakeVariant(float64(percent)/100)).Err
	if err != nil {
		return fmt.Errorf("%s: setting the volume: %w", p.name(), err)
	}
	return nil
}

// enqueue opens the first track (OpenUri) when start is set; the others, or all of them when
// start is not set, go to the player's track list when it has one.
func (p *player) enqueue(ctx context.Context, tracks []track, replace, start bool) (int, error) {
	if len(tracks) == 0 {
		return 0, nil
	}
	added := 0
	rest := tracks
	if start || replace {
		if err := p.call(ctx, "OpenUri", fileURI(tracks[0].abs)); err != nil {
			return 0, err
		}
		added, rest = 1, tracks[1:]
	}
	if len(rest) == 0 {
		return added, nil
	}
	var has bool
	if v, err := p.obj().GetProperty(mprisRoot + ".HasTrackList"); err == nil {
		has, _ = v.Value().(bool)
	}
	if !has {
		if added > 0 {
			return added, nil // the player plays one at a time
		}
		return 0, fmt.Errorf("%s cannot queue tracks: it has no MPRIS track list (play them instead, or use mpd)", p.name())
	}
	for _, t := range rest {
		if err := p.obj().CallWithContext(ctx, mprisTrackList+".AddTrack", 0, fileURI(t.abs), noTrack, false).Err; err != nil {
			return added, fmt.Errorf("%s: AddTrack: %w", p.name(), err)
		}
		added++
	}
	return added, nil
}

// fileURI is the file:// URI of an absolute path, its bytes escaped as RFC 3986 requires.
func fileURI(path string) string {
	var b strings.Builder
	b.WriteString("file://")
	for _, c := range []byte(path) {
		if c == '/' || c == '-' || c == '.' || c == '_' || c == '~' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// errNoBus is the players' error when there is no session bus to look on.
var errNoBus = errors.New("no session bus (DBUS_SESSION_BUS_ADDRESS is not set), so no MPRIS player")
