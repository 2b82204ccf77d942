package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStorePersistsAcrossReopen(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "calendar")
	sh := mustLoc(t, "Asia/Shanghai")
	s, err := OpenStore(dir, sh)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 5, 4, 9, 0, 0, 0, sh)
	e, err := s.Put(&Event{ID: "e1", Kind: KindEvent, Title: "周会", Start: start, End: start.Add(time.Hour),
		RRule: "FREQ=WEEKLY;COUNT=4", Remind: []Offset{Offset(15 * time.Minute)}, Except: []time.Time{start.AddDate(0, 0, 7)}})
	if err != nil {
		t.Fatal(err)
	}
	if e.TZ != "Asia/Shanghai" {
		t.Fatalf("zone %q", e.TZ)
	}
	if err := s.SetReminders(ReminderState{DeliveredThrough: start, Sent: []string{"k"}}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("calendar dir %v %v", fi, err)
	}
	s2, err := OpenStore(dir, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s2.Get("e1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "周会" || !got.Start.Equal(start) || got.Start.Location().String() != "Asia/Shanghai" || got.RRule != "FREQ=WEEKLY;COUNT=4" ||
		len(got.Remind) != 1 || len(got.Except) != 1 || got.rule == nil {
		t.Fatalf("reopened %+v", got)
	}
	if st := s2.Reminders(); !st.DeliveredThrough.Equal(start) || len(st.Sent) != 1 {
		t.Fatalf("reminder state %+v", st)
	}
	// Three occurrences remain of four (one cancelled).
	occ, more := s2.Between(start.Add(-time.Hour), start.AddDate(0, 1, 0), 10)
	if len(occ) != 3 || more {
		t.Fatalf("occurrences %d (more %v), want 3", len(occ), more)
	}
	if _, err := s2.Delete("e1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Delete("e1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	s3, err := OpenStore(dir, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(s3.All()) != 0 {
		t.Fatal("the deleted entry came back")
	}
}

func TestOpenStoreRefusesBadFiles(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, content, wantErr string }{
		{"newer version", `{"version":2,"events":[]}`, "has version 2; this calendar plugin reads version 1"},
		{"not json", `{"version":1,`, "reading"},
		{"bad entry", `{"version":1,"events":[{"id":"x","kind":"event","title":"","start":"2026-01-01T00:00:00Z"}]}`, `entry "x": the title is empty`},
		{"null entry", `{"version":1,"events":[null]}`, "entry 1 is null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "calendar.json"), []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := OpenStore(dir, time.UTC)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestBetweenFindsOverlappingOccurrences(t *testing.T) {
	t.Parallel()
	s, err := OpenStore(t.TempDir(), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 6, 10, 0, 0, 0, 0, time.UTC)
	put := func(e *Event) {
		t.Helper()
		if _, err := s.Put(e); err != nil {
			t.Fatal(err)
		}
	}
	put(&Event{ID: "overnight", Kind: KindEvent, Title: "Night train", Start: day.Add(-2 * time.Hour), End: day.Add(6 * time.Hour)})
	put(&Event{ID: "inside", Kind: KindEvent, Title: "Lunch", Start: day.Add(12 * time.Hour), End: day.Add(13 * time.Hour)})
	put(&Event{ID: "point", Kind: KindReminder, Title: "Call", Start: day, Remind: []Offset{0}})
	put(&Event{ID: "ended", Kind: KindEvent, Title: "Yesterday", Start: day.Add(-5 * time.Hour), End: day})
	put(&Event{ID: "next", Kind: KindEvent, Title: "Tomorrow", Start: day.Add(24 * time.Hour)})
	put(&Event{ID: "daily", Kind: KindEvent, Title: "Walk", Start: day.AddDate(0, 0, -3).Add(18 * time.Hour), End: day.AddDate(0, 0, -3).Add(19 * time.Hour),
		RRule: "FREQ=DAILY"})
	occ, more := s.Between(day, day.Add(24*time.Hour), 10)
	var got []string
	for _, o := range occ {
		got = append(got, o.Event.ID+"@"+o.Start.Format("02T15"))
	}
	want := "overnight@09T22,point@10T00,inside@10T12,daily@10T18"
	if strings.Join(got, ",") != want || more {
		t.Fatalf("occurrences %v (more %v), want %s", got, more, want)
	}
	if occ, more := s.Between(day, day.AddDate(0, 0, 30), 5); len(occ) != 5 || !more {
		t.Fatalf("limit: %d occurrences, more %v", len(occ), more)
	}
}
