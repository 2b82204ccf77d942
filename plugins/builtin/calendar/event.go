package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/teambition/rrule-go"
)

// Kinds of calendar entries.
const (
	// KindEvent is an appointment with a start (and usually an end).
	KindEvent = "event"
	// KindReminder is a point in time the owner wants to be reminded at ("call the bank at 3").
	KindReminder = "reminder"
)

// Bounds of an entry's fields.
const (
	maxTitle     = 200  // runes
	maxLocation  = 200  // runes
	maxNotes     = 4000 // runes
	maxReminders = 5
	maxOffset    = 28 * 24 * time.Hour
	maxIDLen     = 255
)

// Event is one calendar entry: an event or a reminder, possibly recurring. Start, End and the
// recurrence are in the entry's time zone TZ, so a weekly 9:00 stays at 9:00 across daylight
// saving changes.
type Event struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind"`
	Title    string    `json:"title"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end,omitzero"` // zero: a point in time (reminders) or open
	AllDay   bool      `json:"all_day,omitempty"`
	TZ       string    `json:"tz"`
	Location string    `json:"location,omitempty"`
	Notes    string    `json:"notes,omitempty"`
	// RRule is an RFC 5545 recurrence rule without DTSTART, e.g. "FREQ=WEEKLY;BYDAY=MO;COUNT=10".
	RRule string `json:"rrule,omitempty"`
	// Except are the starts of occurrences of a recurring entry that were cancelled.
	Except []time.Time `json:"except,omitempty"`
	// Remind are the reminder offsets before each occurrence's start (0: at the start).
	Remind  []Offset  `json:"remind,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`

	rule *rrule.Set // parsed RRule and Except, set by prepare
}

// Offset is how long before an occurrence's start a reminder fires. It reads and writes Go
// durations ("15m", "1h30m") and whole days or weeks ("2d", "1w").
type Offset time.Duration

// ParseOffset parses an offset: a Go duration ("90m", "1h30m"), or a whole number of days
// ("2d") or weeks ("1w"); from 0 to 28 days.
func ParseOffset(s string) (Offset, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	switch {
	case s == "":
		return 0, errors.New("an empty reminder offset (use e.g. 15m, 1h, 2d)")
	case strings.HasSuffix(s, "d") || strings.HasSuffix(s, "w"):
		n, err := strconv.Atoi(s[:len(s)-1])
		if err != nil {
			return 0, fmt.Errorf("reminder offset %q: want a whole number before %q (e.g. 2d, 1w)", s, s[len(s)-1:])
		}
		unit := 24 * time.Hour
		if strings.HasSuffix(s, "w") {
			unit *= 7
		}
		if n < 0 || n > int(maxOffset/unit) {
			return 0, fmt.Errorf("reminder offset %q: from 0 to 28 days before the start", s)
		}
		d = time.Duration(n) * unit
	default:
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("reminder offset %q: use e.g. 15m, 1h30m, 2d", s)
		}
	}
	if d < 0 || d > maxOffset {
		return 0, fmt.Errorf("reminder offset %q: from 0 to 28 days before the start", s)
	}
	return Offset(d), nil
}

// String formats o the way ParseOffset reads it.
func (o Offset) String() string {
	d := time.Duration(o)
	switch {
	case d == 0:
		return "0m"
	case d%(7*24*time.Hour) == 0:
		return strconv.Itoa(int(d/(7*24*time.Hour))) + "w"
	case d%(24*time.Hour) == 0:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	s := d.String()
	s = strings.TrimSuffix(s, "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// MarshalText implements encoding.TextMarshaler.
func (o Offset) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (o *Offset) UnmarshalText(b []byte) error {
	v, err := ParseOffset(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}

// Human describes o for a notification ("15 minutes before", "at the start").
func (o Offset) Human() string {
	d := time.Duration(o)
	if d == 0 {
		return "at the start"
	}
	return humanDuration(d) + " before"
}

// humanDuration writes d in words: "1 hour 30 minutes", "2 days".
func humanDuration(d time.Duration) string {
	if d < time.Minute {
		return "less than a minute"
	}
	parts := []string{}
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}} {
		if n := d / u.d; n > 0 {
			p := strconv.Itoa(int(n)) + " " + u.name
			if n > 1 {
				p += "s"
			}
			parts = append(parts, p)
			d -= n * u.d
		}
	}
	return strings.Join(parts, " ")
}

// newID returns a fresh random entry id.
func newID() string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b[:])
}

// Time layouts accepted for start and end, besides RFC 3339.
var localLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"}

// ParseWhen parses a start or end given by the model or the owner: RFC 3339 with an offset,
// a local date and time (in loc), or a date alone (dateOnly; midnight in loc).
func ParseWhen(field, s string, loc *time.Location) (t time.Time, dateOnly bool, err error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.In(loc), false, nil
	}
	for _, l := range localLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, false, nil
		}
	}
	if t, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
		return t, true, nil
	}
	return time.Time{}, false, fmt.Errorf("%s %q: use 2006-01-02T15:04 (local time in %s), 2006-01-02T15:04:05+08:00 or a date 2006-01-02",
		field, s, loc)
}

// ParseRRule checks an RFC 5545 recurrence rule (an optional "RRULE:" prefix, no DTSTART) and
// returns it normalised. Rules more frequent than hourly are refused.
func ParseRRule(s string, loc *time.Location) (string, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "RRULE:"), "rrule:")
	if s == "" {
		return "", nil
	}
	if strings.ContainsAny(s, "\r\n") {
		return "", fmt.Errorf("rrule %q: one line, without DTSTART", s)
	}
	s = strings.ToUpper(s)
	opt, err := rrule.StrToROptionInLocation(s, loc)
	if err != nil {
		return "", fmt.Errorf("rrule %q: %w (e.g. FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10)", s, err)
	}
	if opt.Freq == rrule.SECONDLY || opt.Freq == rrule.MINUTELY {
		return "", fmt.Errorf("rrule %q: at most hourly recurrence is supported", s)
	}
	if _, err := rrule.NewRRule(*opt); err != nil {
		return "", fmt.Errorf("rrule %q: %w", s, err)
	}
	return s, nil
}

// prepare validates e (after a create, an update or an import), fills Kind and TZ defaults,
// puts Start and End in the zone and parses the recurrence.
func (e *Event) prepare(defaultLoc *time.Location) error {
	e.Title = strings.TrimSpace(e.Title)
	e.Location = strings.TrimSpace(e.Location)
	e.Notes = strings.TrimSpace(e.Notes)
	switch {
	case e.ID == "" || len(e.ID) > maxIDLen || strings.ContainsFunc(e.ID, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("id %q: 1 to %d bytes without control characters", e.ID, maxIDLen)
	case e.Kind != KindEvent && e.Kind != KindReminder:
		return fmt.Errorf("kind %q: %s or %s", e.Kind, KindEvent, KindReminder)
	case e.Title == "":
		return errors.New("the title is empty")
	case utf8.RuneCountInString(e.Title) > maxTitle:
		return fmt.Errorf("the title has %d characters, at most %d", utf8.RuneCountInString(e.Title), maxTitle)
	case utf8.RuneCountInString(e.Location) > maxLocation:
		return fmt.Errorf("the location has %d characters, at most %d", utf8.RuneCountInString(e.Location), maxLocation)
	case utf8.RuneCountInString(e.Notes) > maxNotes:
		return fmt.Errorf("the notes have %d characters, at most %d", utf8.RuneCountInString(e.Notes), maxNotes)
	case e.Start.IsZero():
		return errors.New("the start is missing")
	case len(e.Remind) > maxReminders:
		return fmt.Errorf("%d reminders, at most %d", len(e.Remind), maxReminders)
	}
	loc := defaultLoc
	if e.TZ != "" {
		l, err := time.LoadLocation(e.TZ)
		if err != nil {
			return fmt.Errorf("time zone %q: %w", e.TZ, err)
		}
		loc = l
	}
	e.TZ = loc.String()
	e.Start = e.Start.In(loc)
	if !e.End.IsZero() {
		e.End = e.End.In(loc)
		if e.End.Before(e.Start) {
			return fmt.Errorf("the end %s is before the start %s", e.End.Format(time.RFC3339), e.Start.Format(time.RFC3339))
		}
	}
	if e.AllDay {
		y, m, d := e.Start.Date()
		e.Start = time.Date(y, m, d, 0, 0, 0, 0, loc)
		if !e.End.IsZero() {
			y, m, d := e.End.Date()
			e.End = time.Date(y, m, d, 0, 0, 0, 0, loc)
		}
		if e.End.IsZero() || !e.End.After(e.Start) {
			e.End = e.Start.AddDate(0, 0, 1)
		}
	}
	for _, o := range e.Remind {
		if o < 0 || time.Duration(o) > maxOffset {
			return fmt.Errorf("reminder offset %s: from 0 to 28 days before the start", o)
		}
	}
	slices.Sort(e.Remind)
	e.Remind = slices.Compact(e.Remind)
	e.rule = nil
	if e.RRule != "" {
		norm, err := ParseRRule(e.RRule, loc)
		if err != nil {
			return err
		}
		opt, _ := rrule.StrToROptionInLocation(norm, loc)
		opt.Dtstart = e.Start
		r, err := rrule.NewRRule(*opt)
		if err != nil {
			return fmt.Errorf("rrule %q: %w", norm, err)
		}
		set := &rrule.Set{}
		set.RRule(r)
		for i, x := range e.Except {
			e.Except[i] = x.In(loc)
			set.ExDate(e.Except[i])
		}
		e.RRule, e.rule = norm, set
	} else {
		e.Except = nil
	}
	return nil
}

// duration is the length of each occurrence (0 for a point in time).
func (e *Event) duration() time.Duration {
	if e.End.IsZero() {
		return 0
	}
	return e.End.Sub(e.Start)
}

// startsIn returns the starts of e's occurrences in (after, upto], at most limit of them.
func (e *Event) startsIn(after, upto time.Time, limit int) []time.Time {
	if !upto.After(after) {
		return nil
	}
	if e.rule == nil {
		if e.Start.After(after) && !e.Start.After(upto) {
			return []time.Time{e.Start}
		}
		return nil
	}
	var out []time.Time
	next := e.rule.Iterator()
	for len(out) < limit {
		t, ok := next()
		if !ok || t.After(upto) {
			break
		}
		if t.After(after) {
			out = append(out, t)
		}
	}
	return out
}

// firstStartAfter returns the start of e's first occurrence after t.
func (e *Event) firstStartAfter(t time.Time) (time.Time, bool) {
	if e.rule == nil {
		return e.Start, e.Start.After(t)
	}
	s := e.rule.After(t, false)
	return s, !s.IsZero()
}

// clone returns a copy of e that shares nothing mutable with it.
func (e *Event) clone() *Event {
	c := *e
	c.Remind = slices.Clone(e.Remind)
	c.Except = slices.Clone(e.Except)
	return &c
}
