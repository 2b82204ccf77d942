package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/emersion/go-ical"
)

// ICS (RFC 5545) import and export, with github.com/emersion/go-ical.

// Identity of the exported calendars.
const (
	prodID = "-//HologramAgent//calendar plugin 1.0//EN"
	// propKind marks reminders (X-HOLOGRAM-KIND:reminder) so they survive a round trip.
	propKind = "X-HOLOGRAM-KIND"
	// maxImport bounds the entries of one import.
	maxImport = 5000
)

// Imported is the outcome of reading an ICS document.
type Imported struct {
	Events   []*Event
	Warnings []string // entries skipped or simplified, and why
}

// ReadICS reads the VEVENTs of an ICS document (one or more VCALENDARs): their UID, SUMMARY,
// DESCRIPTION, LOCATION, DTSTART, DTEND or DURATION, RRULE, EXDATE and display alarms (VALARM
// TRIGGERs before the start or end). Times without a zone are in loc. An entry that cannot be
// read is skipped with a warning naming it; a document that is not iCalendar is an error.
func ReadICS(r io.Reader, loc *time.Location, now time.Time) (_ Imported, err error) {
	// go-ical panics on some malformed content lines (a parameter at the end of a line, as in
	// the 4 bytes "0;0=": decodeParam peeks past the end; reported upstream with a fix). A panic
	// in the decoder is a malformed document, not a crash.
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("not a valid iCalendar (ICS) document: %v", v)
		}
	}()
	var out Imported
	dec := ical.NewDecoder(r)
	ncal := 0
	for {
		cal, err := dec.Decode()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Imported{}, fmt.Errorf("not a valid iCalendar (ICS) document: %w", err)
		}
		ncal++
		for i, ev := range cal.Events() {
			if len(out.Events) == maxImport {
				return Imported{}, fmt.Errorf("more than %d events in one import", maxImport)
			}
			e, warn, err := fromVEvent(ev, loc, now)
			name := eventName(ev, i)
			if err != nil {
				out.Warnings = append(out.Warnings, fmt.Sprintf("%s skipped: %v", name, err))
				continue
			}
			for _, w := range warn {
				out.Warnings = append(out.Warnings, name+": "+w)
			}
			out.Events = append(out.Events, e)
		}
	}
	if ncal == 0 {
		return Imported{}, errors.New("not a valid iCalendar (ICS) document: no VCALENDAR")
	}
	return out, nil
}

// eventName names a VEVENT in a warning.
func eventName(ev ical.Event, i int) string {
	if s, _ := ev.Props.Text(ical.PropSummary); s != "" {
		return fmt.Sprintf("event %d (%q)", i+1, s)
	}
	return fmt.Sprintf("event %d", i+1)
}

// fromVEvent converts one VEVENT.
func fromVEvent(ev ical.Event, loc *time.Location, now time.Time) (*Event, []string, error) {
	var warn []string
	text := func(name string) string {
		s, _ := ev.Props.Text(name)
		return strings.TrimSpace(s)
	}
	if st, _ := ev.Status(); st == ical.EventCancelled {
		return nil, nil, errors.New("it is cancelled")
	}
	e := &Event{ID: text(ical.PropUID), Kind: KindEvent, Title: text(ical.PropSummary), Location: text(ical.PropLocation),
		Notes: text(ical.PropDescription), Created: now, Updated: now}
	if e.ID == "" {
		e.ID = newID()
	}
	if strings.EqualFold(text(propKind), KindReminder) {
		e.Kind = KindReminder
	}
	if e.Title == "" {
		e.Title = "(no title)"
	}
	startProp := ev.Props.Get(ical.PropDateTimeStart)
	if startProp == nil {
		return nil, nil, errors.New("no DTSTART")
	}
	start, err := startProp.DateTime(loc)
	if err != nil {
		return nil, nil, fmt.Errorf("DTSTART %q: %w", startProp.Value, err)
	}
	e.Start = start
	e.AllDay = startProp.ValueType() == ical.ValueDate || len(startProp.Value) == len("20060102")
	e.TZ = loc.String()
	if tzid := startProp.Params.Get(ical.PropTimezoneID); tzid != "" {
		e.TZ = start.Location().String()
	}
	end, err := ev.DateTimeEnd(loc)
	if err != nil {
		return nil, nil, fmt.Errorf("DTEND or DURATION: %w", err)
	}
	if end.After(start) {
		e.End = end
	}
	if p := ev.Props.Get(ical.PropRecurrenceRule); p != nil {
		e.RRule = p.Value
		for _, x := range ev.Props.Values(ical.PropExceptionDates) {
			for _, v := range strings.Split(x.Value, ",") {
				one := x
				one.Value = v
				t, err := one.DateTime(start.Location())
				if err != nil {
					return nil, nil, fmt.Errorf("EXDATE %q: %w", v, err)
				}
				e.Except = append(e.Except, t)
			}
		}
		if len(ev.Props.Values(ical.PropRecurrenceDates)) > 0 {
			warn = append(warn, "RDATE (extra occurrences) is not supported and was ignored")
		}
	}
	for _, a := range ev.Children {
		if a.Name != ical.CompAlarm {
			continue
		}
		off, err := alarmOffset(a, e)
		if err != nil {
			warn = append(warn, "an alarm was ignored: "+err.Error())
			continue
		}
		if len(e.Remind) == maxReminders {
			warn = append(warn, fmt.Sprintf("only the first %d alarms were kept", maxReminders))
			break
		}
		e.Remind = append(e.Remind, off)
	}
	if err := e.clone().prepare(loc); err != nil {
		return nil, nil, err
	}
	return e, warn, nil
}

// alarmOffset returns how long before e's start the VALARM a fires.
func alarmOffset(a *ical.Component, e *Event) (Offset, error) {
	trig := a.Props.Get(ical.PropTrigger)
	if trig == nil {
		return 0, errors.New("no TRIGGER")
	}
	var before time.Duration
	if trig.ValueType() == ical.ValueDateTime {
		t, err := trig.DateTime(e.Start.Location())
		if err != nil {
			return 0, fmt.Errorf("TRIGGER %q: %w", trig.Value, err)
		}
		before = e.Start.Sub(t)
	} else {
		d, err := trig.Duration()
		if err != nil {
			return 0, fmt.Errorf("TRIGGER %q: %w", trig.Value, err)
		}
		before = -d
		if strings.EqualFold(trig.Params.Get(ical.ParamRelated), "END") {
			end := e.End
			if end.IsZero() {
				end = e.Start
			}
			before -= end.Sub(e.Start)
		}
	}
	if before < 0 || before > maxOffset {
		return 0, fmt.Errorf("TRIGGER %q: only alarms from 0 to 28 days before the start are supported", trig.Value)
	}
	return Offset(before.Round(time.Second)), nil
}

// WriteICS writes events as one VCALENDAR, stamped now. Times in a named zone carry a TZID;
// others are written in UTC.
func WriteICS(w io.Writer, events []*Event, now time.Time) error {
	if len(events) == 0 {
		return errors.New("there are no entries to export")
	}
	cal := ical.NewCalendar()
	cal.Props.SetText(ical.PropVersion, "2.0")
	cal.Props.SetText(ical.PropProductID, prodID)
	cal.Props.SetText(ical.PropCalendarScale, "GREGORIAN")
	for _, e := range events {
		cal.Children = append(cal.Children, toVEvent(e, now).Component)
	}
	if err := ical.NewEncoder(w).Encode(cal); err != nil {
		return fmt.Errorf("writing ICS: %w", err)
	}
	return nil
}

// icsTime sets prop to t: a date for all-day entries, else a date-time in t's named zone
// (TZID) or UTC.
func icsTime(prop *ical.Prop, t time.Time, allDay bool) {
	switch {
	case allDay:
		prop.SetDate(t)
	case t.Location() == time.Local || t.Location().String() == "UTC" || t.Location().String() == "Local":
		prop.SetDateTime(t.UTC())
	default:
		prop.SetDateTime(t)
	}
}

// toVEvent converts an entry.
func toVEvent(e *Event, now time.Time) *ical.Event {
	ev := ical.NewEvent()
	ev.Props.SetText(ical.PropUID, e.ID)
	ev.Props.SetDateTime(ical.PropDateTimeStamp, now.UTC())
	if !e.Updated.IsZero() {
		ev.Props.SetDateTime(ical.PropLastModified, e.Updated.UTC())
	}
	ev.Props.SetText(ical.PropSummary, e.Title)
	start := ical.NewProp(ical.PropDateTimeStart)
	icsTime(start, e.Start, e.AllDay)
	ev.Props.Set(start)
	if !e.End.IsZero() {
		end := ical.NewProp(ical.PropDateTimeEnd)
		icsTime(end, e.End, e.AllDay)
		ev.Props.Set(end)
	}
	if e.Location != "" {
		ev.Props.SetText(ical.PropLocation, e.Location)
	}
	if e.Notes != "" {
		ev.Props.SetText(ical.PropDescription, e.Notes)
	}
	if e.Kind == KindReminder {
		kind := ical.NewProp(propKind)
		kind.Value = KindReminder
		ev.Props.Set(kind)
	}
	if e.RRule != "" {
		r := ical.NewProp(ical.PropRecurrenceRule)
		r.Value = e.RRule
		ev.Props.Set(r)
		for _, x := range e.Except {
			p := ical.NewProp(ical.PropExceptionDates)
			icsTime(p, x, e.AllDay)
			ev.Props.Add(p)
		}
	}
	for _, o := range e.Remind {
		a := ical.NewComponent(ical.CompAlarm)
		a.Props.SetText(ical.PropAction, "DISPLAY")
		a.Props.SetText(ical.PropDescription, e.Title)
		trig := ical.NewProp(ical.PropTrigger)
		trig.SetDuration(-time.Duration(o))
		a.Props.Set(trig)
		ev.Children = append(ev.Children, a)
	}
	return ev
}
