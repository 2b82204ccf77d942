package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/clock"
	"github.com/hologramagent/hologram/plugins/builtin/internal/toolargs"
	"github.com/hologramagent/hologram/plugins/sdk"
)

// Bounds of the tools.
const (
	defaultRange = 7 * 24 * time.Hour
	maxRange     = 400 * 24 * time.Hour
	maxList      = 200
	maxICS       = 4 << 20 // bytes of an imported document
)

// calendar is the plugin: its store, its reminder scheduler and the kernel handle reminders
// are delivered through.
type calendar struct {
	store  *Store
	sched  *Scheduler
	clock  clock.Clock
	loc    *time.Location
	kernel atomic.Pointer[sdk.Kernel]
}

// newCalendar opens the calendar of cfg. log receives the scheduler's log until the plugin
// starts (then the kernel's logger is used).
func newCalendar(cfg Config, clk clock.Clock, log *slog.Logger) (*calendar, error) {
	store, err := OpenStore(cfg.Dir, cfg.Loc)
	if err != nil {
		return nil, err
	}
	if store.Reminders().DeliveredThrough.IsZero() {
		// A new calendar: reminders are due from now on, also those that fall due while the
		// kernel is paused before the scheduler first runs.
		if err := store.SetReminders(ReminderState{DeliveredThrough: clk.Now()}); err != nil {
			return nil, err
		}
	}
	c := &calendar{store: store, clock: clk, loc: cfg.Loc}
	c.sched = NewScheduler(store, clk, c.notify, log)
	return c, nil
}

// notify delivers a reminder through owner/notify.
func (c *calendar) notify(ctx context.Context, title, body string) error {
	k := c.kernel.Load()
	if k == nil {
		return errors.New("not connected to the kernel yet")
	}
	_, err := k.Notify(ctx, title, body)
	return err
}

// schema is a JSON Schema object; props maps a property to its schema, required lists the
// required ones.
func schema(props map[string]string, required ...string) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","additionalProperties":false,"properties":{`)
	first := true
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		fmt.Fprintf(&b, "%q:%s", name, props[name])
	}
	b.WriteString(`}`)
	if len(required) > 0 {
		r, _ := json.Marshal(required)
		b.WriteString(`,"required":` + string(r))
	}
	b.WriteString("}")
	return json.RawMessage(b.String())
}

// Property schemas shared by the tools.
const (
	strSchema  = `{"type":"string"}`
	whenSchema = `{"type":"string","description":"2006-01-02T15:04 (local time), 2006-01-02T15:04:05+08:00, or a date 2006-01-02"}`
	remSchema  = `{"type":"array","items":{"type":"string"},"description":"reminders before the start, e.g. [\"15m\",\"1d\"]"}`
	ruleSchema = `{"type":"string","description":"RFC 5545 recurrence rule, e.g. FREQ=WEEKLY;BYDAY=MO;COUNT=10"}`
)

// plugin is the calendar's definition.
func (c *calendar) plugin() sdk.Plugin {
	return sdk.Plugin{
		Name:    "calendar",
		Version: "1.0.0",
		Instructions: "The calendar plugin keeps the owner's events and reminders and notifies the owner when a reminder " +
			"is due. Times without an offset are in " + c.loc.String() + ".",
		Tools: []sdk.Tool{
			{Name: "calendar_add", Description: "Adds an event to the owner's calendar, with optional reminders and recurrence.",
				InputSchema: schema(map[string]string{"title": strSchema, "start": whenSchema, "end": whenSchema,
					"all_day": `{"type":"boolean"}`, "location": strSchema, "notes": strSchema, "rrule": ruleSchema,
					"remind": remSchema, "tz": `{"type":"string","description":"IANA time zone, e.g. Asia/Shanghai"}`}, "title", "start"),
				Run: c.add},
			{Name: "calendar_remind", Description: "Sets a reminder: the owner is notified at the given time.",
				InputSchema: schema(map[string]string{"text": strSchema, "at": whenSchema, "notes": strSchema, "rrule": ruleSchema},
					"text", "at"),
				Run: c.remind},
			{Name: "calendar_list", Description: "Lists the events and reminders in a time range (default: the next 7 days), optionally only those matching a text.",
				InputSchema: schema(map[string]string{"from": whenSchema, "to": whenSchema, "query": strSchema}),
				ReadOnly:    true, Run: c.list},
			{Name: "calendar_update", Description: "Changes an event or reminder; only the given fields change (an empty end, rrule or location clears it).",
				InputSchema: schema(map[string]string{"id": strSchema, "title": strSchema, "start": whenSchema, "end": whenSchema,
					"all_day": `{"type":"boolean"}`, "location": strSchema, "notes": strSchema, "rrule": ruleSchema,
					"remind": remSchema, "tz": strSchema}, "id"),
				Run: c.update},
			{Name: "calendar_delete", Description: "Deletes an event or reminder, or with occurrence (its start) one occurrence of a recurring one.",
				InputSchema: schema(map[string]string{"id": strSchema, "occurrence": whenSchema}, "id"), Run: c.delete},
			{Name: "calendar_import", Description: "Imports events from an iCalendar (ICS) text; entries with a known UID are replaced.",
				InputSchema: schema(map[string]string{"ics": strSchema}, "ics"), Run: c.importICS},
			{Name: "calendar_export", Description: "Exports the calendar (or the entries with an occurrence in a range) as iCalendar (ICS) text.",
				InputSchema: schema(map[string]string{"from": whenSchema, "to": whenSchema}), ReadOnly: true, Run: c.exportICS},
		},
		OnPause: func(_ context.Context, k *sdk.Kernel, paused bool) {
			c.sched.SetPaused(paused)
			k.Logger().Info("reminders "+map[bool]string{true: "paused", false: "resumed"}[paused], "paused", paused)
		},
		Start: func(ctx context.Context, k *sdk.Kernel) error {
			c.kernel.Store(k)
			c.sched.log = k.Logger()
			if k.Paused() {
				c.sched.SetPaused(true)
			}
			k.Logger().Info("calendar started", "dir", c.store.file.Path(), "tz", c.loc.String(), "entries", len(c.store.All()),
				"paused", k.Paused())
			c.sched.Run(ctx)
			return nil
		},
	}
}

// zoneOf returns the zone named tz, or the default one.
func (c *calendar) zoneOf(tz string) (*time.Location, error) {
	if strings.TrimSpace(tz) == "" {
		return c.loc, nil
	}
	loc, err := time.LoadLocation(strings.TrimSpace(tz))
	if err != nil {
		return nil, fmt.Errorf("time zone %q: %w", tz, err)
	}
	return loc, nil
}

// parseOffsets reads reminder offsets.
func parseOffsets(in []string) ([]Offset, error) {
	out := make([]Offset, 0, len(in))
	for _, s := range in {
		o, err := ParseOffset(s)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

type addArgs struct {
	Title    string   `json:"title"`
	Start    string   `json:"start"`
	End      string   `json:"end"`
	AllDay   bool     `json:"all_day"`
	Location string   `json:"location"`
	Notes    string   `json:"notes"`
	RRule    string   `json:"rrule"`
	Remind   []string `json:"remind"`
	TZ       string   `json:"tz"`
}

func (c *calendar) add(_ context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a addArgs
	if err := toolargs.DecodeWhole(args, &a); err != nil {
		return sdk.Result{}, err
	}
	loc, err := c.zoneOf(a.TZ)
	if err != nil {
		return sdk.Result{}, err
	}
	if strings.TrimSpace(a.Start) == "" {
		return sdk.Result{}, errors.New("start is required")
	}
	start, dateOnly, err := ParseWhen("start", a.Start, loc)
	if err != nil {
		return sdk.Result{}, err
	}
	now := c.clock.Now()
	e := &Event{ID: newID(), Kind: KindEvent, Title: a.Title, Start: start, AllDay: a.AllDay || dateOnly, TZ: loc.String(),
		Location: a.Location, Notes: a.Notes, RRule: a.RRule, Created: now, Updated: now}
	if strings.TrimSpace(a.End) != "" {
		if e.End, _, err = ParseWhen("end", a.End, loc); err != nil {
			return sdk.Result{}, err
		}
	}
	if e.Remind, err = parseOffsets(a.Remind); err != nil {
		return sdk.Result{}, err
	}
	return c.put(e, "added")
}

type remindArgs struct {
	Text  string `json:"text"`
	At    string `json:"at"`
	Notes string `json:"notes"`
	RRule string `json:"rrule"`
}

func (c *calendar) remind(_ context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a remindArgs
	if err := toolargs.DecodeWhole(args, &a); err != nil {
		return sdk.Result{}, err
	}
	if strings.TrimSpace(a.At) == "" {
		return sdk.Result{}, errors.New("at is required")
	}
	at, dateOnly, err := ParseWhen("at", a.At, c.loc)
	if err != nil {
		return sdk.Result{}, err
	}
	if dateOnly {
		return sdk.Result{}, fmt.Errorf("at %q: a reminder needs a time of day, e.g. %sT09:00", a.At, strings.TrimSpace(a.At))
	}
	now := c.clock.Now()
	if at.Before(now) && a.RRule == "" {
		return sdk.Result{}, fmt.Errorf("at %s is in the past (now is %s)", at.Format("2006-01-02 15:04"), now.In(c.loc).Format("2006-01-02 15:04"))
	}
	e := &Event{ID: newID(), Kind: KindReminder, Title: a.Text, Start: at, TZ: c.loc.String(), Notes: a.Notes, RRule: a.RRule,
		Remind: []Offset{0}, Created: now, Updated: now}
	return c.put(e, "reminder set")
}

// put stores e and describes it; verb says what happened.
func (c *calendar) put(e *Event, verb string) (sdk.Result, error) {
	stored, err := c.store.Put(e)
	if err != nil {
		return sdk.Result{}, err
	}
	c.sched.Poke()
	return sdk.Text(verb + ": " + c.describe(stored) + c.pastNote(stored)), nil
}

// pastNote warns when every reminder of e is already in the past.
func (c *calendar) pastNote(e *Event) string {
	if len(e.Remind) == 0 {
		return ""
	}
	now := c.clock.Now()
	for _, o := range e.Remind {
		if _, ok := e.firstStartAfter(now.Add(time.Duration(o))); ok {
			return "" // this reminder is still ahead
		}
	}
	return "\nNote: its reminders are all in the past; none will be delivered."
}

// describe is one line about an entry.
func (c *calendar) describe(e *Event) string {
	var b strings.Builder
	b.WriteString(c.when(e, e.Start))
	b.WriteString(" " + e.Title)
	if e.Kind == KindReminder {
		b.WriteString(" [reminder]")
	}
	if e.Location != "" {
		b.WriteString(" @ " + e.Location)
	}
	fmt.Fprintf(&b, " (id %s", e.ID)
	if e.RRule != "" {
		b.WriteString("; repeats " + e.RRule)
	}
	if len(e.Remind) > 0 && e.Kind == KindEvent {
		rs := make([]string, len(e.Remind))
		for i, o := range e.Remind {
			rs[i] = o.String()
		}
		b.WriteString("; reminders " + strings.Join(rs, ", ") + " before")
	}
	b.WriteString(")")
	return b.String()
}

// when formats an occurrence of e starting at start.
func (c *calendar) when(e *Event, start time.Time) string {
	if e.AllDay {
		s := start.Format("Mon 2006-01-02")
		if days := int(e.duration() / (24 * time.Hour)); days > 1 {
			s += fmt.Sprintf(" (%d days)", days)
		}
		return s + " all day"
	}
	s := start.Format("Mon 2006-01-02 15:04")
	if d := e.duration(); d > 0 {
		end := start.Add(d)
		if end.YearDay() == start.YearDay() && end.Year() == start.Year() {
			s += "–" + end.Format("15:04")
		} else {
			s += " – " + end.Format("Mon 2006-01-02 15:04")
		}
	}
	if start.Location().String() != c.loc.String() {
		s += " " + start.Location().String()
	}
	return s
}

type rangeArgs struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Query string `json:"query"`
}

// parseRange reads from and to: default now and 7 days on; at most 400 days.
func (c *calendar) parseRange(a rangeArgs) (from, to time.Time, err error) {
	from = c.clock.Now().In(c.loc)
	if strings.TrimSpace(a.From) != "" {
		if from, _, err = ParseWhen("from", a.From, c.loc); err != nil {
			return
		}
	}
	to = from.Add(defaultRange)
	if strings.TrimSpace(a.To) != "" {
		var dateOnly bool
		if to, dateOnly, err = ParseWhen("to", a.To, c.loc); err != nil {
			return
		}
		if dateOnly {
			to = to.AddDate(0, 0, 1) // a date "to" includes that day
		}
	}
	switch {
	case !to.After(from):
		err = fmt.Errorf("to %s is not after from %s", to.Format(time.RFC3339), from.Format(time.RFC3339))
	case to.Sub(from) > maxRange:
		err = fmt.Errorf("the range %s to %s is longer than 400 days", from.Format("2006-01-02"), to.Format("2006-01-02"))
	}
	return
}

func (c *calendar) list(_ context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a rangeArgs
	if err := toolargs.DecodeWhole(args, &a); err != nil {
		return sdk.Result{}, err
	}
	from, to, err := c.parseRange(a)
	if err != nil {
		return sdk.Result{}, err
	}
	occ, more := c.store.Between(from, to, maxList)
	q := strings.ToLower(strings.TrimSpace(a.Query))
	var b strings.Builder
	n := 0
	for _, o := range occ {
		e := o.Event
		if q != "" && !strings.Contains(strings.ToLower(e.Title+"\n"+e.Location+"\n"+e.Notes), q) {
			continue
		}
		n++
		b.WriteString("\n- " + c.when(e, o.Start) + " " + e.Title)
		if e.Kind == KindReminder {
			b.WriteString(" [reminder]")
		}
		if e.Location != "" {
			b.WriteString(" @ " + e.Location)
		}
		b.WriteString(" (id " + e.ID)
		if e.RRule != "" {
			b.WriteString(", recurring")
		}
		b.WriteString(")")
	}
	head := fmt.Sprintf("%d entries from %s to %s", n, from.Format("2006-01-02 15:04"), to.Format("2006-01-02 15:04"))
	if more {
		head += fmt.Sprintf(" (only the first %d occurrences; narrow the range)", maxList)
	}
	return sdk.Text(head + b.String()), nil
}

type updateArgs struct {
	ID       string    `json:"id"`
	Title    *string   `json:"title"`
	Start    *string   `json:"start"`
	End      *string   `json:"end"`
	AllDay   *bool     `json:"all_day"`
	Location *string   `json:"location"`
	Notes    *string   `json:"notes"`
	RRule    *string   `json:"rrule"`
	Remind   *[]string `json:"remind"`
	TZ       *string   `json:"tz"`
}

func (c *calendar) update(_ context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a updateArgs
	if err := toolargs.DecodeWhole(args, &a); err != nil {
		return sdk.Result{}, err
	}
	e, err := c.store.Get(strings.TrimSpace(a.ID))
	if err != nil {
		return sdk.Result{}, err
	}
	loc := e.Start.Location()
	if a.TZ != nil {
		if loc, err = c.zoneOf(*a.TZ); err != nil {
			return sdk.Result{}, err
		}
		e.TZ = loc.String()
		// The wall-clock times stay; they now mean that zone.
		e.Start = sameWallClock(e.Start, loc)
		if !e.End.IsZero() {
			e.End = sameWallClock(e.End, loc)
		}
	}
	if a.Title != nil {
		e.Title = *a.Title
	}
	if a.Start != nil {
		d := e.duration()
		start, dateOnly, err := ParseWhen("start", *a.Start, loc)
		if err != nil {
			return sdk.Result{}, err
		}
		e.Start = start
		if dateOnly {
			e.AllDay = true
		}
		if d > 0 && a.End == nil { // moving the start keeps the length
			e.End = start.Add(d)
		}
	}
	if a.End != nil {
		e.End = time.Time{}
		if strings.TrimSpace(*a.End) != "" {
			if e.End, _, err = ParseWhen("end", *a.End, loc); err != nil {
				return sdk.Result{}, err
			}
		}
	}
	if a.AllDay != nil {
		e.AllDay = *a.AllDay
	}
	if a.Location != nil {
		e.Location = *a.Location
	}
	if a.Notes != nil {
		e.Notes = *a.Notes
	}
	if a.RRule != nil {
		e.RRule = *a.RRule
	}
	if a.Remind != nil {
		if e.Remind, err = parseOffsets(*a.Remind); err != nil {
			return sdk.Result{}, err
		}
	}
	e.Updated = c.clock.Now()
	return c.put(e, "updated")
}

// sameWallClock returns the time in loc with t's date and clock reading.
func sameWallClock(t time.Time, loc *time.Location) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc)
}

type deleteArgs struct {
	ID         string `json:"id"`
	Occurrence string `json:"occurrence"`
}

func (c *calendar) delete(_ context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a deleteArgs
	if err := toolargs.DecodeWhole(args, &a); err != nil {
		return sdk.Result{}, err
	}
	id := strings.TrimSpace(a.ID)
	if strings.TrimSpace(a.Occurrence) == "" {
		e, err := c.store.Delete(id)
		if err != nil {
			return sdk.Result{}, err
		}
		c.sched.Poke()
		return sdk.Text("deleted: " + c.describe(e)), nil
	}
	e, err := c.store.Get(id)
	if err != nil {
		return sdk.Result{}, err
	}
	if e.RRule == "" {
		return sdk.Result{}, fmt.Errorf("%q does not repeat: delete it without occurrence", e.Title)
	}
	at, _, err := ParseWhen("occurrence", a.Occurrence, e.Start.Location())
	if err != nil {
		return sdk.Result{}, err
	}
	if starts := e.startsIn(at.Add(-time.Nanosecond), at, 1); len(starts) == 0 {
		return sdk.Result{}, fmt.Errorf("%q has no occurrence starting at %s (calendar_list shows them)", e.Title, at.Format("2006-01-02 15:04"))
	}
	e.Except = append(e.Except, at)
	e.Updated = c.clock.Now()
	if _, err := c.store.Put(e); err != nil {
		return sdk.Result{}, err
	}
	c.sched.Poke()
	return sdk.Text(fmt.Sprintf("cancelled the occurrence of %q at %s; the others stay", e.Title, at.Format("Mon 2006-01-02 15:04"))), nil
}

type importArgs struct {
	ICS string `json:"ics"`
}

func (c *calendar) importICS(_ context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a importArgs
	if err := toolargs.DecodeWhole(args, &a); err != nil {
		return sdk.Result{}, err
	}
	if strings.TrimSpace(a.ICS) == "" {
		return sdk.Result{}, errors.New("ics is empty: pass the text of an .ics file")
	}
	if len(a.ICS) > maxICS {
		return sdk.Result{}, fmt.Errorf("the ICS text has %d bytes, at most %d", len(a.ICS), maxICS)
	}
	imp, err := ReadICS(strings.NewReader(a.ICS), c.loc, c.clock.Now())
	if err != nil {
		return sdk.Result{}, err
	}
	if len(imp.Events) == 0 {
		return sdk.Result{}, fmt.Errorf("no event could be imported:\n%s", strings.Join(imp.Warnings, "\n"))
	}
	added, updated := 0, 0
	for _, e := range imp.Events {
		if old, err := c.store.Get(e.ID); err == nil {
			e.Created = old.Created
			updated++
		} else {
			added++
		}
		if _, err := c.store.Put(e); err != nil {
			return sdk.Result{}, fmt.Errorf("importing %q: %w", e.Title, err)
		}
	}
	c.sched.Poke()
	msg := fmt.Sprintf("imported %d entries (%d new, %d replaced)", added+updated, added, updated)
	if len(imp.Warnings) > 0 {
		msg += "\n" + strings.Join(imp.Warnings, "\n")
	}
	return sdk.Text(msg), nil
}

func (c *calendar) exportICS(_ context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a rangeArgs
	if err := toolargs.DecodeWhole(args, &a); err != nil {
		return sdk.Result{}, err
	}
	if a.Query != "" {
		return sdk.Result{}, errors.New("bad arguments: calendar_export takes from and to only")
	}
	events := c.store.All()
	if a.From != "" || a.To != "" {
		from, to, err := c.parseRange(a)
		if err != nil {
			return sdk.Result{}, err
		}
		occ, _ := c.store.Between(from, to, maxImport)
		seen := map[string]bool{}
		events = events[:0]
		for _, o := range occ {
			if !seen[o.Event.ID] {
				seen[o.Event.ID] = true
				events = append(events, o.Event)
			}
		}
	}
	var b bytes.Buffer
	if err := WriteICS(&b, events, c.clock.Now()); err != nil {
		return sdk.Result{}, err
	}
	return sdk.Text(b.String()), nil
}
