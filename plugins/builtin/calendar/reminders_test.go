package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/clock/clocktest"
)

// note is a delivered notification.
type note struct{ title, body string }

// recorder is a Notifier that records what it delivers; fail, when set, decides per call
// whether it fails.
type recorder struct {
	mu    sync.Mutex
	notes []note
	calls int
	fail  func(call int) error
	ch    chan note
}

func (r *recorder) notify(_ context.Context, title, body string) error {
	r.mu.Lock()
	r.calls++
	if r.fail != nil {
		if err := r.fail(r.calls); err != nil {
			r.mu.Unlock()
			return err
		}
	}
	r.notes = append(r.notes, note{title, body})
	ch := r.ch
	r.mu.Unlock()
	if ch != nil {
		ch <- note{title, body}
	}
	return nil
}

func (r *recorder) got() []note {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]note(nil), r.notes...)
}

func (r *recorder) titles() string {
	var ts []string
	for _, n := range r.got() {
		ts = append(ts, n.title)
	}
	return strings.Join(ts, " | ")
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// t0 is the tests' start: Tuesday 5 May 2026, 08:00 UTC.
var t0 = time.Date(2026, 5, 5, 8, 0, 0, 0, time.UTC)

func newSchedFixture(t *testing.T, dir string) (*Store, *clocktest.Fake, *recorder, *Scheduler) {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	s, err := OpenStore(dir, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktest.New(t0)
	rec := &recorder{}
	return s, clk, rec, NewScheduler(s, clk, rec.notify, quiet)
}

func mustPut(t *testing.T, s *Store, e *Event) {
	t.Helper()
	if _, err := s.Put(e); err != nil {
		t.Fatal(err)
	}
}

func dentist() *Event {
	return &Event{ID: "d", Kind: KindEvent, Title: "Dentist", Start: t0.Add(time.Hour), End: t0.Add(2 * time.Hour),
		Location: "Main St 1", Remind: []Offset{Offset(15 * time.Minute)}}
}

func TestReminderOnTimeOnce(t *testing.T) {
	t.Parallel()
	s, clk, rec, sch := newSchedFixture(t, "")
	ctx := context.Background()
	sch.Tick(ctx) // first start: the calendar's history begins now
	mustPut(t, s, dentist())
	clk.Advance(44 * time.Minute)
	if next := sch.Tick(ctx); !next.Equal(t0.Add(45*time.Minute)) || len(rec.got()) != 0 {
		t.Fatalf("at 08:44: next %v, delivered %v", next, rec.got())
	}
	clk.Advance(time.Minute)
	sch.Tick(ctx)
	sch.Tick(ctx)
	got := rec.got()
	if len(got) != 1 || got[0].title != "Reminder: Dentist" ||
		got[0].body != "Starts Tue 5 May 09:00 (in 15 minutes). Ends 10:00.\nLocation: Main St 1" {
		t.Fatalf("delivered %+v", got)
	}
	// The next Tick looks again within a minute (a wall-clock jump is noticed).
	if next := sch.Tick(ctx); !next.Equal(clk.Now().Add(maxWait)) {
		t.Fatalf("next look %v", next)
	}
}

func TestFirstStartSkipsThePast(t *testing.T) {
	t.Parallel()
	s, clk, rec, sch := newSchedFixture(t, "")
	mustPut(t, s, &Event{ID: "old", Kind: KindReminder, Title: "Long ago", Start: t0.Add(-time.Hour), Remind: []Offset{0}})
	sch.Tick(context.Background())
	clk.Advance(time.Hour)
	sch.Tick(context.Background())
	if len(rec.got()) != 0 {
		t.Fatalf("a reminder from before the calendar's first start was delivered: %v", rec.got())
	}
}

func TestPausedRemindersAreDeliveredLateOnResume(t *testing.T) {
	t.Parallel()
	s, clk, rec, sch := newSchedFixture(t, "")
	ctx := context.Background()
	sch.Tick(ctx)
	mustPut(t, s, dentist())
	clk.Advance(30 * time.Minute)
	sch.SetPaused(true)
	clk.Advance(time.Hour) // 09:30: the reminder was due at 08:45
	if next := sch.Tick(ctx); !next.IsZero() || len(rec.got()) != 0 {
		t.Fatalf("while paused: next %v, delivered %v", next, rec.got())
	}
	sch.SetPaused(false)
	sch.Tick(ctx)
	got := rec.got()
	if len(got) != 1 || got[0].title != "Late reminder: Dentist" ||
		!strings.Contains(got[0].body, "Started Tue 5 May 09:00.") ||
		!strings.Contains(got[0].body, "This reminder (15 minutes before) was due at Tue 5 May 08:45 and is delivered late: the agent was paused.") {
		t.Fatalf("delivered %+v", got)
	}
}

func TestRestartDeliversMissedRemindersLate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _, _, sch := newSchedFixture(t, dir)
	sch.Tick(context.Background()) // the plugin ran at 08:00
	mustPut(t, s, dentist())
	// It is started again at 11:00 after being down.
	_, clk, rec, sch2 := newSchedFixture(t, dir)
	clk.Advance(3 * time.Hour)
	sch2.Tick(context.Background())
	got := rec.got()
	if len(got) != 1 || got[0].title != "Late reminder: Dentist" || !strings.Contains(got[0].body, "delivered late: the agent was not running.") {
		t.Fatalf("delivered %+v", got)
	}
}

func TestManyMissedRemindersAreSummarised(t *testing.T) {
	t.Parallel()
	s, clk, rec, sch := newSchedFixture(t, "")
	ctx := context.Background()
	sch.Tick(ctx)
	mustPut(t, s, &Event{ID: "h", Kind: KindReminder, Title: "Stretch", Start: t0.Add(time.Hour), RRule: "FREQ=HOURLY;COUNT=15",
		Remind: []Offset{0}})
	sch.SetPaused(true)
	clk.Advance(20 * time.Hour)
	sch.SetPaused(false)
	sch.Tick(ctx)
	got := rec.got()
	if len(got) != maxLate+1 {
		t.Fatalf("%d notifications, want %d: %s", len(got), maxLate+1, rec.titles())
	}
	for _, n := range got[:maxLate] {
		if n.title != "Late reminder: Stretch" {
			t.Fatalf("notification %+v", n)
		}
	}
	last := got[maxLate]
	if last.title != "Missed reminders" || !strings.HasPrefix(last.body, "5 more reminders fell due while they could not be delivered (the agent was paused):") ||
		strings.Count(last.body, "\n- ") != 5 {
		t.Fatalf("summary %+v", last)
	}
	sch.Tick(ctx)
	if len(rec.got()) != maxLate+1 {
		t.Fatal("a second tick delivered again")
	}
}

func TestFailedDeliveryIsRetriedWithoutDuplicates(t *testing.T) {
	t.Parallel()
	s, clk, rec, sch := newSchedFixture(t, "")
	ctx := context.Background()
	sch.Tick(ctx)
	mustPut(t, s, &Event{ID: "a", Kind: KindReminder, Title: "A", Start: t0.Add(10 * time.Minute), Remind: []Offset{0}})
	mustPut(t, s, &Event{ID: "b", Kind: KindReminder, Title: "B", Start: t0.Add(10 * time.Minute), Remind: []Offset{0}})
	rec.fail = func(call int) error {
		if call == 2 {
			return errors.New("kernel busy")
		}
		return nil
	}
	clk.Advance(10 * time.Minute)
	if next := sch.Tick(ctx); !next.Equal(clk.Now().Add(retryAfter)) {
		t.Fatalf("after a failure the next look is %v, want in %s", next, retryAfter)
	}
	if rec.titles() != "Reminder: A" {
		t.Fatalf("delivered %s", rec.titles())
	}
	// The plugin restarts before the retry: the state on disk still knows A was sent.
	_, _, rec2, sch2 := newSchedFixture(t, filepathDir(s))
	sch2.clock = clk
	clk.Advance(retryAfter)
	sch2.Tick(ctx)
	if rec2.titles() != "Reminder: B" {
		t.Fatalf("after the retry: %s", rec2.titles())
	}
	if st := s2state(t, s); len(st.Sent) != 0 || !st.DeliveredThrough.Equal(clk.Now()) {
		t.Fatalf("state after a full batch %+v", st)
	}
}

// filepathDir is the directory of s's file.
func filepathDir(s *Store) string { return filepath.Dir(s.file.Path()) }

// s2state reads the reminder state from s's file.
func s2state(t *testing.T, s *Store) ReminderState {
	t.Helper()
	re, err := OpenStore(filepathDir(s), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return re.Reminders()
}

// TestRunLoop runs the scheduler's loop with the fake clock: a reminder fires when the clock
// reaches it, nothing while paused, the missed one on resume, and the loop ends with ctx.
func TestRunLoop(t *testing.T) {
	t.Parallel()
	s, clk, rec, sch := newSchedFixture(t, "")
	rec.ch = make(chan note, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sch.Run(ctx)
	}()
	next := func() note {
		t.Helper()
		select {
		case n := <-rec.ch:
			return n
		case <-time.After(10 * time.Second):
			t.Fatal("no notification within 10 s")
		}
		return note{}
	}
	clk.WaitForWaiter(t)
	mustPut(t, s, &Event{ID: "tea", Kind: KindReminder, Title: "Tea", Start: t0.Add(3 * time.Minute), Remind: []Offset{0}})
	sch.Poke()
	for range 3 {
		clk.WaitForWaiter(t)
		clk.Advance(time.Minute)
	}
	if n := next(); n.title != "Reminder: Tea" {
		t.Fatalf("got %+v", n)
	}
	mustPut(t, s, &Event{ID: "cake", Kind: KindReminder, Title: "Cake", Start: t0.Add(10 * time.Minute), Remind: []Offset{0}})
	sch.SetPaused(true)
	clk.Advance(time.Hour)
	sch.SetPaused(false)
	if n := next(); n.title != "Late reminder: Cake" {
		t.Fatalf("got %+v", n)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if len(rec.got()) != 2 {
		t.Fatalf("delivered %s", rec.titles())
	}
}
