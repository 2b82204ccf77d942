package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/plugins/builtin/internal/toolargs"
	"github.com/hologramagent/hologram/plugins/sdk"
)

// Player states.
const (
	statePlaying = "playing"
	statePaused  = "paused"
	stateStopped = "stopped"
)

// playerStatus is what a backend says of itself.
type playerStatus struct {
	State                string
	Title, Artist, Album string
	Position, Length     float64 // seconds (0: unknown)
	Volume               int     // percent; -1: unknown
	Queue                int     // tracks in the queue (MPD)
}

// backend is a player the tools control: MPD or one MPRIS player.
type backend interface {
	name() string
	status(ctx context.Context) (playerStatus, error)
	play(ctx context.Context) error
	pause(ctx context.Context) error
	next(ctx context.Context) error
	previous(ctx context.Context) error
	setVolume(ctx context.Context, percent int) error
	// enqueue adds tracks to the player's queue (replacing it when replace is set) and starts
	// the first of them when start is set; it returns how many it added.
	enqueue(ctx context.Context, tracks []track, replace, start bool) (int, error)
}

var (
	_ backend = (*mpd)(nil)
	_ backend = (*player)(nil)
)

// music is the plugin: the library, MPD and the MPRIS players.
type music struct {
	log     *slog.Logger
	lib     *library
	mpd     *mpd
	players *players // nil without a session bus
	busErr  error    // why players is nil
}

// maxResults bounds what music_search lists and music_play / music_queue add.
const (
	maxListed = 25
	maxQueued = 500
)

func (m *music) plugin() sdk.Plugin {
	obj := func(props string, required ...string) json.RawMessage {
		req := ""
		if len(required) > 0 {
			b, _ := json.Marshal(required)
			req = `,"required":` + string(b)
		}
		return json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{` + props + `}` + req + `}`)
	}
	query := `"query":{"type":"string","description":"Words of the title, artist or album; \"something by Artist\" picks the artist."}`
	return sdk.Plugin{
		Name: "music", Version: "1.0.0",
		Instructions: "Controls the owner's music: mpd, or a desktop player over MPRIS (Spotify, VLC, mpv, a browser), and plays the owner's music folder.",
		Tools: []sdk.Tool{
			{Name: "music_status", Title: "What is playing", ReadOnly: true, InputSchema: obj(""),
				Description: "What the players are playing (title, artist, album, position, volume) and how big the owner's music library is.",
				Run:         m.runStatus},
			{Name: "music_play", Title: "Play", InputSchema: obj(query),
				Description: "Play the library's tracks matching query (replacing mpd's queue), or, without a query, resume the active player.",
				Run:         m.runPlay},
			{Name: "music_pause", Title: "Pause", InputSchema: obj(""), Description: "Pause the active player.", Run: m.control("paused", backend.pause)},
			{Name: "music_next", Title: "Next track", InputSchema: obj(""), Description: "Skip to the next track.", Run: m.control("skipped to the next track", backend.next)},
			{Name: "music_previous", Title: "Previous track", InputSchema: obj(""), Description: "Go back to the previous track.", Run: m.control("back to the previous track", backend.previous)},
			{Name: "music_volume", Title: "Volume", InputSchema: obj(`"percent":{"type":"string","description":"0 to 100, or relative: +10, -10.","pattern":"^[+-]?[0-9]{1,3}%?$"}`, "percent"),
				Description: "Set the active player's volume: a percentage, or a change such as +10 or -10.", Run: m.runVolume},
			{Name: "music_search", Title: "Search the music library", ReadOnly: true, InputSchema: obj(query, "query"),
				Description: "Search the owner's music library by title, artist or album.", Run: m.runSearch},
			{Name: "music_queue", Title: "Queue tracks", InputSchema: obj(query+`,"replace":{"type":"boolean","description":"Replace the queue instead of adding to it."}`, "query"),
				Description: "Add the library's tracks matching query to the player's queue (after what plays).", Run: m.runQueue},
		},
		Start: func(ctx context.Context, _ *sdk.Kernel) error {
			m.lib.watch(ctx, libraryInterval)
			return nil
		},
	}
}

// mpdUp reports whether MPD answers (and why not).
func (m *music) mpdUp(ctx context.Context) error {
	c, err := m.mpd.conn(ctx)
	if err == nil {
		c.Close()
	}
	return err
}

// candidate is a backend with its status.
type candidate struct {
	b  backend
	st playerStatus
}

// active picks the player the controls act on: one that is playing (MPD first), else one that
// is paused, else MPD when it answers, else the newest MPRIS player. With none it returns an
// error that says what was looked for.
func (m *music) active(ctx context.Context) (backend, playerStatus, error) {
	all, mpdErr := m.candidates(ctx)
	for _, want := range []string{statePlaying, statePaused} {
		for _, c := range all {
			if c.st.State == want {
				return c.b, c.st, nil
			}
		}
	}
	if len(all) > 0 {
		if mpdErr == nil {
			return all[0].b, all[0].st, nil
		}
		last := all[len(all)-1]
		return last.b, last.st, nil
	}
	return nil, playerStatus{}, m.noPlayer(mpdErr)
}

// candidates returns MPD (first, when it answers) and the MPRIS players (oldest first) with
// their status, and MPD's error when it does not answer.
func (m *music) candidates(ctx context.Context) ([]candidate, error) {
	var out []candidate
	st, mpdErr := m.mpd.status(ctx)
	if mpdErr == nil {
		out = append(out, candidate{m.mpd, st})
	}
	if m.players != nil {
		for _, name := range m.players.list() {
			p := &player{conn: m.players.conn, bus: name}
			if st, err := p.status(ctx); err == nil {
				out = append(out, candidate{p, st})
			} else {
				m.log.Debug("MPRIS player unreadable", "player", name, "err", err)
			}
		}
	}
	return out, mpdErr
}

// noPlayer is the error of a call that found no player.
func (m *music) noPlayer(mpdErr error) error {
	mpris := "no MPRIS player is on the session bus (start one: Spotify, VLC, mpv with mpv-mpris, a browser playing)"
	if m.players == nil {
		mpris = m.busErr.Error()
	}
	return fmt.Errorf("no music player: mpd is not answering at %s (%v; set MPD_HOST / MPD_PORT, or start mpd), and %s",
		m.mpd.addr, mpdErr, mpris)
}

// forLibrary picks the player that plays library tracks: MPD when it answers, else the active
// MPRIS player.
func (m *music) forLibrary(ctx context.Context) (backend, error) {
	mpdErr := m.mpdUp(ctx)
	if mpdErr == nil {
		return m.mpd, nil
	}
	b, _, err := m.active(ctx)
	if err != nil {
		return nil, m.noPlayer(mpdErr)
	}
	return b, nil
}

func (m *music) runStatus(ctx context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	if err := toolargs.Decode(args, &struct{}{}); err != nil {
		return sdk.Result{}, err
	}
	_ = m.lib.refresh(ctx, false)
	all, mpdErr := m.candidates(ctx)
	var b strings.Builder
	if len(all) == 0 {
		b.WriteString(m.noPlayer(mpdErr).Error() + ".\n")
	}
	for _, c := range all {
		fmt.Fprintf(&b, "%s: %s\n", c.b.name(), describe(c.st))
	}
	if mpdErr != nil && len(all) > 0 {
		fmt.Fprintf(&b, "mpd at %s: not answering (%v)\n", m.mpd.addr, mpdErr)
	}
	b.WriteString(m.lib.describe())
	return sdk.Text(b.String()), nil
}

// describe says what a player does: "playing Title by Artist (Album), 0:12 / 1:01, volume 50%".
func describe(st playerStatus) string {
	s := st.State
	if st.Title != "" && st.State != stateStopped {
		s += " " + st.Title
		if st.Artist != "" {
			s += " by " + st.Artist
		}
		if st.Album != "" {
			s += " (" + st.Album + ")"
		}
		if st.Length > 0 {
			s += fmt.Sprintf(", %s / %s", clock(st.Position), clock(st.Length))
		}
	}
	if st.Volume >= 0 {
		s += fmt.Sprintf(", volume %d%%", st.Volume)
	}
	if st.Queue > 0 {
		s += fmt.Sprintf(", %d in the queue", st.Queue)
	}
	return s
}

// clock formats seconds as m:ss.
func clock(sec float64) string {
	n := int(sec)
	return fmt.Sprintf("%d:%02d", n/60, n%60)
}

// queryArgs are the arguments of music_play, music_search and music_queue.
type queryArgs struct {
	Query   string `json:"query"`
	Replace bool   `json:"replace"`
}

func (m *music) runPlay(ctx context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a queryArgs
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	if strings.TrimSpace(a.Query) == "" {
		b, _, err := m.active(ctx)
		if err != nil {
			return sdk.Result{}, err
		}
		if err := b.play(ctx); err != nil {
			return sdk.Result{}, err
		}
		m.pauseOthers(ctx, b)
		return m.after(ctx, b, "playing")
	}
	return m.enqueue(ctx, a.Query, true, true)
}

func (m *music) runQueue(ctx context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a queryArgs
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	if strings.TrimSpace(a.Query) == "" {
		return sdk.Result{}, errors.New("query is empty: say what to queue (a title, an artist, an album)")
	}
	return m.enqueue(ctx, a.Query, a.Replace, false)
}

// enqueue resolves query through the library and hands the tracks to the player for library
// tracks; with nothing in the library MPD's own database is searched.
func (m *music) enqueue(ctx context.Context, query string, replace, start bool) (sdk.Result, error) {
	libErr := m.lib.refresh(ctx, false)
	found := m.lib.search(query)
	b, err := m.forLibrary(ctx)
	if err != nil {
		return sdk.Result{}, err
	}
	if len(found) > maxQueued {
		found = found[:maxQueued]
	}
	n := 0
	if len(found) > 0 {
		n, err = b.enqueue(ctx, found, replace, start)
	} else if mp, ok := b.(*mpd); ok {
		n, err = mp.searchAdd(ctx, query, replace, start)
	}
	if err != nil {
		return sdk.Result{}, err
	}
	if n == 0 {
		msg := fmt.Sprintf("nothing in the music library matches %q", query)
		if libErr != nil {
			msg += " (" + libErr.Error() + ")"
		}
		return sdk.Result{Content: []sdk.Content{{Type: "text", Text: msg}}, IsError: true}, nil
	}
	verb := fmt.Sprintf("queued %d track%s", n, plural(n))
	if start {
		verb = fmt.Sprintf("playing %d track%s", n, plural(n))
		m.pauseOthers(ctx, b)
	}
	return m.after(ctx, b, verb+" matching "+strconv.Quote(query))
}

// pauseOthers pauses the players other than b that are playing, so that what the owner asked
// for is the only thing heard. A failure is logged: the asked-for playback goes on.
func (m *music) pauseOthers(ctx context.Context, b backend) {
	all, _ := m.candidates(ctx)
	for _, c := range all {
		if c.st.State == statePlaying && !sameBackend(c.b, b) {
			if err := c.b.pause(ctx); err != nil {
				m.log.Warn("another player keeps playing", "player", c.b.name(), "err", err)
			}
		}
	}
}

// sameBackend reports whether a and b are the same player (MPRIS players by bus name).
func sameBackend(a, b backend) bool {
	pa, okA := a.(*player)
	pb, okB := b.(*player)
	if okA && okB {
		return pa.bus == pb.bus
	}
	return a == b
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// after reports what a control did and what the player now says.
func (m *music) after(ctx context.Context, b backend, did string) (sdk.Result, error) {
	st, err := b.status(ctx)
	if err != nil {
		return sdk.Text(fmt.Sprintf("%s: %s", b.name(), did)), nil
	}
	return sdk.Text(fmt.Sprintf("%s: %s; now %s", b.name(), did, describe(st))), nil
}

// control is a tool that calls one method of the active player.
func (m *music) control(did string, f func(backend, context.Context) error) func(context.Context, *sdk.Kernel, json.RawMessage) (sdk.Result, error) {
	return func(ctx context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
		if err := toolargs.Decode(args, &struct{}{}); err != nil {
			return sdk.Result{}, err
		}
		b, _, err := m.active(ctx)
		if err != nil {
			return sdk.Result{}, err
		}
		if err := f(b, ctx); err != nil {
			return sdk.Result{}, err
		}
		return m.after(ctx, b, did)
	}
}

func (m *music) runVolume(ctx context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct {
		Percent json.RawMessage `json:"percent"`
	}
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	spec := strings.Trim(string(a.Percent), `"`) // a string ("+10"), or a model's bare number
	b, st, err := m.active(ctx)
	if err != nil {
		return sdk.Result{}, err
	}
	want, err := volumeTarget(spec, st.Volume)
	if err != nil {
		return sdk.Result{}, err
	}
	if err := b.setVolume(ctx, want); err != nil {
		return sdk.Result{}, err
	}
	return m.after(ctx, b, fmt.Sprintf("volume set to %d%%", want))
}

// volumeTarget reads "50", "50%", "+10" or "-10" against the current volume (-1: unknown),
// clamped to 0–100.
func volumeTarget(spec string, current int) (int, error) {
	spec = strings.TrimSuffix(strings.TrimSpace(spec), "%")
	n, err := strconv.Atoi(strings.TrimPrefix(spec, "+"))
	if spec == "" || err != nil {
		return 0, fmt.Errorf("percent %q: give 0 to 100, or a change such as +10 or -10", spec)
	}
	if spec[0] == '+' || spec[0] == '-' {
		if current < 0 {
			return 0, errors.New("the player does not report its volume, so it cannot be changed relatively: give a percentage")
		}
		n += current
	} else if n > 100 {
		return 0, fmt.Errorf("percent %d: the volume is 0 to 100", n)
	}
	return max(0, min(100, n)), nil
}

func (m *music) runSearch(ctx context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a queryArgs
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	if err := m.lib.refresh(ctx, false); err != nil {
		return sdk.Result{}, err
	}
	found := m.lib.search(a.Query)
	if len(found) == 0 {
		return sdk.Text(fmt.Sprintf("nothing in the music library (%d tracks) matches %q", m.lib.size(), a.Query)), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d track%s match %q:\n", len(found), plural(len(found)), a.Query)
	for i, t := range found {
		if i == maxListed {
			fmt.Fprintf(&b, "… and %d more\n", len(found)-maxListed)
			break
		}
		fmt.Fprintf(&b, "- %s — %s — %s (%s)\n", t.Title, t.Artist, t.Album, t.Path)
	}
	return sdk.Text(strings.TrimSuffix(b.String(), "\n")), nil
}
