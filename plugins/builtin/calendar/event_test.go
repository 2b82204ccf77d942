package main

import (
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
)

func mustLoc(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestParseOffset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    time.Duration
		str     string
		wantErr string
	}{
		{"15m", 15 * time.Minute, "15m", ""},
		{"1h30m", 90 * time.Minute, "1h30m", ""},
		{"2h", 2 * time.Hour, "2h", ""},
		{"0", 0, "0m", ""},
		{"2d", 48 * time.Hour, "2d", ""},
		{"1w", 7 * 24 * time.Hour, "1w", ""},
		{" 45s ", 45 * time.Second, "45s", ""},
		{"", 0, "", "an empty reminder offset"},
		{"-5m", 0, "", "from 0 to 28 days"},
		{"29d", 0, "", "from 0 to 28 days"},
		{"5w", 0, "", "from 0 to 28 days"},
		{"xd", 0, "", "want a whole number"},
		{"soon", 0, "", "use e.g. 15m"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseOffset(tt.in)
			if plugintest.WantErr(t, err, tt.wantErr) {
				return
			}
			if err != nil || time.Duration(got) != tt.want || got.String() != tt.str {
				t.Fatalf("got %v (%s) %v, want %v (%s)", time.Duration(got), got, err, tt.want, tt.str)
			}
			back, err := ParseOffset(got.String())
			if err != nil || back != got {
				t.Fatalf("round trip of %s: %v %v", got, back, err)
			}
		})
	}
}

func TestParseWhen(t *testing.T) {
	t.Parallel()
	sh := mustLoc(t, "Asia/Shanghai")
	tests := []struct {
		in       string
		want     time.Time
		dateOnly bool
		wantErr  string
	}{
		{"2026-05-01T09:00", time.Date(2026, 5, 1, 9, 0, 0, 0, sh), false, ""},
		{"2026-05-01 09:00:30", time.Date(2026, 5, 1, 9, 0, 30, 0, sh), false, ""},
		{"2026-05-01T09:00:00Z", time.Date(2026, 5, 1, 17, 0, 0, 0, sh), false, ""},
		{"2026-05-01T09:00:00+02:00", time.Date(2026, 5, 1, 15, 0, 0, 0, sh), false, ""},
		{"2026-05-01", time.Date(2026, 5, 1, 0, 0, 0, 0, sh), true, ""},
		{"tomorrow at nine", time.Time{}, false, `start "tomorrow at nine": use 2006-01-02T15:04 (local time in Asia/Shanghai)`},
		{"2026-13-01", time.Time{}, false, "use 2006-01-02T15:04"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, dateOnly, err := ParseWhen("start", tt.in, sh)
			if plugintest.WantErr(t, err, tt.wantErr) {
				return
			}
			if err != nil || !got.Equal(tt.want) || dateOnly != tt.dateOnly || got.Location() != sh {
				t.Fatalf("got %v %v %v, want %v %v", got, dateOnly, err, tt.want, tt.dateOnly)
			}
		})
	}
}

func TestParseRRule(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want, wantErr string }{
		{"FREQ=WEEKLY;BYDAY=MO;COUNT=3", "FREQ=WEEKLY;BYDAY=MO;COUNT=3", ""},
		{"RRULE:freq=daily;interval=2", "FREQ=DAILY;INTERVAL=2", ""},
		{"", "", ""},
		{"FREQ=MINUTELY", "", "at most hourly"},
		{"FREQ=SECONDLY;COUNT=2", "", "at most hourly"},
		{"FREQ=FORTNIGHTLY", "", `rrule "FREQ=FORTNIGHTLY"`},
		{"FREQ=WEEKLY;BYDAY", "", "wrong format"},
		{"DTSTART:20260101T000000Z\nFREQ=DAILY", "", "one line"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRRule(tt.in, time.UTC)
			if plugintest.WantErr(t, err, tt.wantErr) {
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q %v, want %q", got, err, tt.want)
			}
		})
	}
}

func TestPrepareRefusesBadEntries(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	good := func() *Event { return &Event{ID: "a", Kind: KindEvent, Title: "Dentist", Start: start} }
	tests := []struct {
		name    string
		edit    func(e *Event)
		wantErr string
	}{
		{"empty title", func(e *Event) { e.Title = "  " }, "the title is empty"},
		{"long title", func(e *Event) { e.Title = strings.Repeat("长", maxTitle+1) }, "the title has 201 characters, at most 200"},
		{"no start", func(e *Event) { e.Start = time.Time{} }, "the start is missing"},
		{"end before start", func(e *Event) { e.End = start.Add(-time.Hour) }, "is before the start"},
		{"bad kind", func(e *Event) { e.Kind = "todo" }, `kind "todo"`},
		{"bad id", func(e *Event) { e.ID = "a\nb" }, "without control characters"},
		{"bad zone", func(e *Event) { e.TZ = "Mars/Olympus" }, `time zone "Mars/Olympus"`},
		{"too many reminders", func(e *Event) { e.Remind = make([]Offset, 6) }, "6 reminders, at most 5"},
		{"bad rrule", func(e *Event) { e.RRule = "FREQ=SECONDLY" }, "at most hourly"},
		{"long notes", func(e *Event) { e.Notes = strings.Repeat("x", maxNotes+1) }, "the notes have 4001 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := good()
			tt.edit(e)
			err := e.prepare(time.UTC)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
	if err := good().prepare(time.UTC); err != nil {
		t.Fatalf("a good entry: %v", err)
	}
}

// TestRecurrenceKeepsWallClockAcrossDST: a weekly 09:00 in Berlin stays at 09:00 local time
// when daylight saving time starts (29 March 2026), so its UTC time moves by an hour; a
// cancelled occurrence is skipped.
func TestRecurrenceKeepsWallClockAcrossDST(t *testing.T) {
	t.Parallel()
	berlin := mustLoc(t, "Europe/Berlin")
	e := &Event{ID: "w", Kind: KindEvent, Title: "Standup", Start: time.Date(2026, 3, 16, 9, 0, 0, 0, berlin),
		End: time.Date(2026, 3, 16, 9, 15, 0, 0, berlin), TZ: "Europe/Berlin", RRule: "FREQ=WEEKLY;COUNT=5",
		Except: []time.Time{time.Date(2026, 4, 6, 9, 0, 0, 0, berlin)}}
	if err := e.prepare(time.UTC); err != nil {
		t.Fatal(err)
	}
	got := e.startsIn(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), 100)
	var utc []string
	for _, s := range got {
		if s.Hour() != 9 || s.Location().String() != "Europe/Berlin" {
			t.Errorf("occurrence %v is not at 09:00 Berlin time", s)
		}
		utc = append(utc, s.UTC().Format("01-02 15:04"))
	}
	want := "03-16 08:00,03-23 08:00,03-30 07:00,04-13 07:00"
	if strings.Join(utc, ",") != want {
		t.Fatalf("occurrences (UTC) %v, want %s", utc, want)
	}
	if next, ok := e.firstStartAfter(time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)); !ok || !next.Equal(time.Date(2026, 4, 13, 9, 0, 0, 0, berlin)) {
		t.Fatalf("first start after 1 April: %v %v (6 April is cancelled)", next, ok)
	}
	if _, ok := e.firstStartAfter(time.Date(2026, 4, 14, 0, 0, 0, 0, time.UTC)); ok {
		t.Fatal("a start after the last occurrence")
	}
}

func TestAllDayEntriesSpanWholeDays(t *testing.T) {
	t.Parallel()
	sh := mustLoc(t, "Asia/Shanghai")
	e := &Event{ID: "d", Kind: KindEvent, Title: "Holiday", Start: time.Date(2026, 10, 1, 15, 30, 0, 0, sh), AllDay: true}
	if err := e.prepare(sh); err != nil {
		t.Fatal(err)
	}
	if !e.Start.Equal(time.Date(2026, 10, 1, 0, 0, 0, 0, sh)) || !e.End.Equal(time.Date(2026, 10, 2, 0, 0, 0, 0, sh)) || e.TZ != "Asia/Shanghai" {
		t.Fatalf("all-day entry %v – %v (%s)", e.Start, e.End, e.TZ)
	}
}
