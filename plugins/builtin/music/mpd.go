package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// mpdAddr is where MPD listens, found as mpc finds it: MPD_HOST (default localhost; an
// absolute path or "@name" is a unix socket, "password@host" carries the password) and
// MPD_PORT (default 6600).
type mpdAddr struct {
	network, addr, password string
}

// mpdAddress reads MPD_HOST and MPD_PORT.
func mpdAddress(getenv func(string) string) mpdAddr {
	host, port := getenv("MPD_HOST"), getenv("MPD_PORT")
	var a mpdAddr
	// "pw@host"; but "@name" alone is an abstract socket, as in mpc.
	if i := strings.LastIndex(host, "@"); i > 0 {
		a.password, host = host[:i], host[i+1:]
	}
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "6600"
	}
	switch {
	case strings.HasPrefix(host, "/"):
		a.network, a.addr = "unix", host
	case strings.HasPrefix(host, "@"):
		a.network, a.addr = "unix", "\x00"+host[1:]
	default:
		a.network, a.addr = "tcp", net.JoinHostPort(host, port)
	}
	return a
}

// String names the address in messages (never the password).
func (a mpdAddr) String() string {
	if a.network == "unix" {
		return strings.Replace(a.addr, "\x00", "@", 1)
	}
	return a.addr
}

// mpdTimeout bounds one connection's dial and each command when the call's context has no
// sooner deadline.
const mpdTimeout = 5 * time.Second

// mpdConn is one connection to MPD; it is not safe for concurrent use. Each tool call opens
// its own (MPD closes idle connections after its connection_timeout, 60 s by default).
type mpdConn struct {
	c net.Conn
	r *bufio.Reader
}

// mpdError is MPD's answer "ACK [code@index] {command} message".
type mpdError struct{ line string }

func (e *mpdError) Error() string { return "mpd: " + strings.TrimPrefix(e.line, "ACK ") }

// dialMPD connects to a, reads MPD's greeting and sends the password when a has one.
func dialMPD(ctx context.Context, a mpdAddr) (*mpdConn, error) {
	d := net.Dialer{Timeout: mpdTimeout}
	c, err := d.DialContext(ctx, a.network, a.addr)
	if err != nil {
		return nil, err
	}
	m := &mpdConn{c: c, r: bufio.NewReader(c)}
	m.deadline(ctx)
	greet, err := m.r.ReadString('\n')
	if err != nil || !strings.HasPrefix(greet, "OK MPD ") {
		c.Close()
		if err == nil {
			err = fmt.Errorf("greeting %q", strings.TrimSpace(greet))
		}
		return nil, fmt.Errorf("%s does not speak the MPD protocol: %w", a, err)
	}
	if a.password != "" {
		if _, err := m.run(ctx, "password", a.password); err != nil {
			c.Close()
			return nil, fmt.Errorf("the password of MPD_HOST: %w", err)
		}
	}
	return m, nil
}

// Close closes the connection.
func (m *mpdConn) Close() error { return m.c.Close() }

// deadline sets the connection's deadline for the next exchange.
func (m *mpdConn) deadline(ctx context.Context) {
	dl := time.Now().Add(mpdTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	m.c.SetDeadline(dl)
}

// pair is one "key: value" line of an answer.
type pair struct{ k, v string }

// run sends one command with its arguments (quoted) and returns the answer's lines up to OK;
// an ACK is an *mpdError.
func (m *mpdConn) run(ctx context.Context, cmd string, args ...string) ([]pair, error) {
	var b strings.Builder
	b.WriteString(cmd)
	for _, a := range args {
		b.WriteString(" ")
		b.WriteString(mpdQuote(a))
	}
	b.WriteString("\n")
	m.deadline(ctx)
	if _, err := m.c.Write([]byte(b.String())); err != nil {
		return nil, fmt.Errorf("mpd %s: %w", cmd, err)
	}
	var out []pair
	for {
		line, err := m.r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("mpd %s: %w", cmd, err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "OK":
			return out, nil
		case strings.HasPrefix(line, "ACK "):
			return nil, &mpdError{line}
		}
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			return nil, fmt.Errorf("mpd %s: unexpected line %q", cmd, line)
		}
		out = append(out, pair{k, v})
	}
}

// mpdQuote quotes an argument: backslashes and double quotes escaped, in double quotes.
func mpdQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// get returns the value of key in ps ("" when absent).
func get(ps []pair, key string) string {
	for _, p := range ps {
		if p.k == key {
			return p.v
		}
	}
	return ""
}

// mpd is the MPD backend.
type mpd struct{ addr mpdAddr }

// conn opens a connection, with the address in the error.
func (b *mpd) conn(ctx context.Context) (*mpdConn, error) {
	c, err := dialMPD(ctx, b.addr)
	if err != nil {
		return nil, fmt.Errorf("mpd at %s: %w", b.addr, err)
	}
	return c, nil
}

func (b *mpd) name() string { return "mpd at " + b.addr.String() }

// do opens a connection, runs f and closes it.
func (b *mpd) do(ctx context.Context, f func(c *mpdConn) error) error {
	c, err := b.conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return f(c)
}

// simple runs one command.
func (b *mpd) simple(ctx context.Context, cmd string, args ...string) error {
	return b.do(ctx, func(c *mpdConn) error {
		_, err := c.run(ctx, cmd, args...)
		return err
	})
}

func (b *mpd) status(ctx context.Context) (playerStatus, error) {
	var st playerStatus
	err := b.do(ctx, func(c *mpdConn) error {
		s, err := c.run(ctx, "status")
		if err != nil {
			return err
		}
		song, err := c.run(ctx, "currentsong")
		if err != nil {
			return err
		}
		st = playerStatus{State: map[string]string{"play": statePlaying, "pause": statePaused, "stop": stateStopped}[get(s, "state")],
			Title: get(song, "Title"), Artist: get(song, "Artist"), Album: get(song, "Album"), Volume: -1}
		if st.Title == "" && get(song, "file") != "" {
			st.Title = get(song, "file")
		}
		if v, err := strconv.Atoi(get(s, "volume")); err == nil && v >= 0 {
			st.Volume = v
		}
		st.Position, _ = strconv.ParseFloat(get(s, "elapsed"), 64)
		st.Length, _ = strconv.ParseFloat(get(s, "duration"), 64)
		st.Queue, _ = strconv.Atoi(get(s, "playlistlength"))
		return nil
	})
	return st, err
}

func (b *mpd) play(ctx context.Context) error     { return b.simple(ctx, "play") }
func (b *mpd) pause(ctx context.Context) error    { return b.simple(ctx, "pause", "1") }
func (b *mpd) next(ctx context.Context) error     { return b.simple(ctx, "next") }
func (b *mpd) previous(ctx context.Context) error { return b.simple(ctx, "previous") }

func (b *mpd) setVolume(ctx context.Context, percent int) error {
	err := b.simple(ctx, "setvol", strconv.Itoa(percent))
	if me := (*mpdError)(nil); errors.As(err, &me) && strings.Contains(me.line, "No mixer") {
		return fmt.Errorf("%w (its audio output has no mixer: add mixer_type \"software\" to the output in mpd.conf)", err)
	}
	return err
}

// enqueue adds the tracks (paths relative to the library, which is MPD's music_directory when
// both are the owner's music folder) to the queue, after clearing it when replace is set, and
// starts the first of them when start is set. A path MPD does not know is looked up in MPD's
// own database by its tags instead. It returns how many were added.
func (b *mpd) enqueue(ctx context.Context, tracks []track, replace, start bool) (int, error) {
	added := 0
	err := b.do(ctx, func(c *mpdConn) error {
		if replace {
			if _, err := c.run(ctx, "clear"); err != nil {
				return err
			}
		}
		first := ""
		for _, t := range tracks {
			id, err := c.run(ctx, "addid", t.Path)
			if me := (*mpdError)(nil); errors.As(err, &me) && t.Title != "" {
				// Not under MPD's music_directory: the same song in MPD's database, by its tags.
				var found []pair
				found, err = c.run(ctx, "find", "title", t.Title, "artist", t.Artist)
				if err == nil && get(found, "file") != "" {
					id, err = c.run(ctx, "addid", get(found, "file"))
				} else if err == nil {
					continue
				}
			}
			if err != nil {
				return err
			}
			if first == "" {
				first = get(id, "Id")
			}
			added++
		}
		if start && first != "" {
			_, err := c.run(ctx, "playid", first)
			return err
		}
		return nil
	})
	return added, err
}

// searchAdd is enqueue for MPD's own database: the songs any of whose tags contain query.
func (b *mpd) searchAdd(ctx context.Context, query string, replace, start bool) (int, error) {
	var files []track
	err := b.do(ctx, func(c *mpdConn) error {
		found, err := c.run(ctx, "search", "any", query)
		for _, p := range found {
			if p.k == "file" {
				files = append(files, track{Path: p.v})
			}
		}
		return err
	})
	if err != nil || len(files) == 0 {
		return 0, err
	}
	return b.enqueue(ctx, files, replace, start)
}
