package main

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func readSample(t *testing.T, loc *time.Location) Imported {
	t.Helper()
	f, err := os.Open("testdata/sample.ics")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	imp, err := ReadICS(f, loc, time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return imp
}

func TestReadICS(t *testing.T) {
	t.Parallel()
	sh := mustLoc(t, "Asia/Shanghai")
	berlin := mustLoc(t, "Europe/Berlin")
	imp := readSample(t, sh)
	byID := map[string]*Event{}
	for _, e := range imp.Events {
		byID[e.ID] = e
	}
	if len(imp.Events) != 4 {
		t.Fatalf("%d events, want 4: %v", len(imp.Events), imp.Warnings)
	}
	d := byID["dentist-1@example.org"]
	if d == nil || d.Title != "Dentist" || !d.Start.Equal(time.Date(2026, 5, 5, 9, 0, 0, 0, berlin)) || d.TZ != "Europe/Berlin" ||
		!d.End.Equal(time.Date(2026, 5, 5, 10, 0, 0, 0, berlin)) || d.Location != "Hauptstraße 1, Berlin" ||
		d.Notes != "Bring the insurance card.\nAsk about the crown." {
		t.Fatalf("dentist %+v", d)
	}
	// TRIGGER:-PT15M, and TRIGGER;RELATED=END:-PT1H30M of a one-hour event: 30 minutes before the start.
	if !slices.Equal(d.Remind, []Offset{Offset(15 * time.Minute), Offset(30 * time.Minute)}) {
		t.Fatalf("dentist reminders %v", d.Remind)
	}
	s := byID["standup@example.org"]
	if s == nil || s.RRule != "FREQ=WEEKLY;BYDAY=MO,WE;COUNT=6" || s.End.Sub(s.Start) != 15*time.Minute || len(s.Except) != 1 ||
		!slices.Equal(s.Remind, []Offset{Offset(5 * time.Minute)}) || s.TZ != "Asia/Shanghai" {
		t.Fatalf("standup %+v", s)
	}
	h := byID["holiday@example.org"]
	if h == nil || !h.AllDay || h.Title != "国庆节" || h.End.Sub(h.Start) != 7*24*time.Hour {
		t.Fatalf("holiday %+v", h)
	}
	warnings := strings.Join(imp.Warnings, "\n")
	for _, w := range []string{`event 4 ("Cancelled lunch") skipped: it is cancelled`, `event 5 ("No start") skipped: no DTSTART`,
		`event 6 ("Alarm after the start"): an alarm was ignored: TRIGGER "PT5M": only alarms from 0 to 28 days before the start`} {
		if !strings.Contains(warnings, w) {
			t.Errorf("warnings lack %q:\n%s", w, warnings)
		}
	}
}

// TestICSRoundTrip: what WriteICS writes, ReadICS reads back unchanged.
func TestICSRoundTrip(t *testing.T) {
	t.Parallel()
	sh := mustLoc(t, "Asia/Shanghai")
	in := readSample(t, sh).Events
	in = append(in, &Event{ID: "r1", Kind: KindReminder, Title: "Call the bank", Start: time.Date(2026, 5, 6, 15, 0, 0, 0, sh),
		TZ: "Asia/Shanghai", Remind: []Offset{0}})
	for _, e := range in {
		if err := e.prepare(sh); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := WriteICS(&b, in, time.Date(2026, 4, 2, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"PRODID:" + prodID, "DTSTART;TZID=Europe/Berlin:20260505T090000", "DTSTART;VALUE=DATE:20261001",
		"TRIGGER:-PT900S", "X-HOLOGRAM-KIND:reminder", "RRULE:FREQ=WEEKLY;BYDAY=MO,WE;COUNT=6"} {
		if !strings.Contains(text, want) {
			t.Errorf("export lacks %q:\n%s", want, text)
		}
	}
	back, err := ReadICS(strings.NewReader(text), sh, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Events) != len(in) || len(back.Warnings) != 0 {
		t.Fatalf("read back %d events, %v", len(back.Events), back.Warnings)
	}
	for i, e := range back.Events {
		w := in[i]
		if e.ID != w.ID || e.Kind != w.Kind || e.Title != w.Title || !e.Start.Equal(w.Start) || !e.End.Equal(w.End) || e.AllDay != w.AllDay ||
			e.TZ != w.TZ || e.Location != w.Location || e.Notes != w.Notes || e.RRule != w.RRule || !slices.Equal(e.Remind, w.Remind) ||
			len(e.Except) != len(w.Except) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, e, w)
		}
	}
}

func TestReadICSRefusesMalformedDocuments(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, wantErr string }{
		{"plain text", "hello, this is not a calendar", "not a valid iCalendar (ICS) document"},
		{"empty", "", "no VCALENDAR"},
		{"unterminated", "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:x\r\n", "not a valid iCalendar (ICS) document"},
		{"not a calendar", "BEGIN:VEVENT\r\nUID:x\r\nEND:VEVENT\r\n", "invalid toplevel component"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadICS(strings.NewReader(tt.in), time.UTC, time.Now())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
	if err := WriteICS(&bytes.Buffer{}, nil, time.Now()); err == nil || !strings.Contains(err.Error(), "no entries to export") {
		t.Fatalf("empty export: %v", err)
	}
}
