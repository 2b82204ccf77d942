package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/plugins/builtin/internal/clock"
)

// Scheduling constants.
const (
	// lateAfter is how long after its due time a reminder counts as late.
	lateAfter = time.Minute
	// maxWait bounds one wait of the scheduler, so a jump of the wall clock (a suspended
	// laptop) is noticed within it.
	maxWait = time.Minute
	// retryAfter is the wait after a failed delivery.
	retryAfter = 30 * time.Second
	// maxLate is how many late reminders one catch-up delivers one by one; the rest are
	// summarised in one notification.
	maxLate = 10
	// maxBatch bounds the reminders one tick considers.
	maxBatch = 1000
	// notification limits of the kernel (owner/notify).
	maxNotifyTitle = 200
	maxNotifyBody  = 4000
)

// errPaused stops a delivery batch when the kernel pauses in its middle.
var errPaused = errors.New("paused")

// Notifier delivers a notification to the owner (owner/notify).
type Notifier func(ctx context.Context, title, body string) error

// Scheduler delivers reminders at their time through a [Notifier]. It stops while the kernel is
// paused: reminders that fall due while paused (or while the plugin was not running) are
// delivered on resume (or start), marked late, the first [maxLate] one by one and the rest in
// one summary. Safe for concurrent use.
type Scheduler struct {
	store  *Store
	clock  clock.Clock
	notify Notifier
	log    *slog.Logger
	wake   clock.Wake

	mu          sync.Mutex
	paused      bool
	pausedFrom  time.Time // start of the current or last pause
	pausedUntil time.Time // end of the last pause (zero while paused)
}

// NewScheduler returns a scheduler of store's reminders.
func NewScheduler(store *Store, clk clock.Clock, notify Notifier, log *slog.Logger) *Scheduler {
	return &Scheduler{store: store, clock: clk, notify: notify, log: log, wake: clock.NewWake()}
}

// SetPaused stops (true) or resumes (false) the delivery of reminders.
func (s *Scheduler) SetPaused(paused bool) {
	s.mu.Lock()
	if paused != s.paused {
		s.paused = paused
		if paused {
			s.pausedFrom, s.pausedUntil = s.clock.Now(), time.Time{}
		} else {
			s.pausedUntil = s.clock.Now()
		}
	}
	s.mu.Unlock()
	s.Poke()
}

// Paused reports whether delivery is stopped.
func (s *Scheduler) Paused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused
}

// Poke makes the scheduler look at the calendar again (after a change).
func (s *Scheduler) Poke() { s.wake.Poke() }

// Run delivers reminders until ctx ends.
func (s *Scheduler) Run(ctx context.Context) { clock.Loop(ctx, s.clock, s.wake, s.Tick) }

// Tick delivers what is due now and returns when to look again (zero: only when poked, i.e.
// while paused).
func (s *Scheduler) Tick(ctx context.Context) time.Time {
	if s.Paused() {
		return time.Time{}
	}
	now := s.clock.Now()
	st := s.store.Reminders()
	if st.DeliveredThrough.IsZero() {
		// First start: nothing from before the calendar existed is due.
		st.DeliveredThrough = now
		if err := s.store.SetReminders(st); err != nil {
			s.log.Error("saving the reminder state", "err", err)
			return now.Add(retryAfter)
		}
	}
	err := s.deliver(ctx, now, st)
	if errors.Is(err, errPaused) {
		return time.Time{}
	}
	if err != nil {
		s.log.Warn("reminders not delivered; retrying", "err", err, "retry_in", retryAfter.String())
		return now.Add(retryAfter)
	}
	next := now.Add(maxWait)
	if d, ok := s.store.NextDue(now); ok && d.Before(next) {
		next = d
	}
	return next
}

// deliver sends the reminders due in (st.DeliveredThrough, now] that st.Sent does not list.
func (s *Scheduler) deliver(ctx context.Context, now time.Time, st ReminderState) error {
	if !now.After(st.DeliveredThrough) {
		return nil
	}
	due, more := s.store.DueBetween(st.DeliveredThrough, now, maxBatch)
	var pending []Due
	for _, d := range due {
		if !slices.Contains(st.Sent, d.Key()) {
			pending = append(pending, d)
		}
	}
	var rest []Due // late reminders beyond maxLate, summarised
	nlate := 0
	for _, d := range pending {
		if now.Sub(d.At) > lateAfter {
			if nlate == maxLate {
				rest = append(rest, d)
				continue
			}
			nlate++
		}
		if err := s.send(ctx, d, now, st); err != nil {
			return err
		}
		st.Sent = append(st.Sent, d.Key())
	}
	if len(rest) > 0 || more {
		if err := s.summary(ctx, rest, more, now); err != nil {
			return err
		}
	}
	return s.store.SetReminders(ReminderState{DeliveredThrough: now})
}

// send delivers one reminder and records it in st's Sent (saved).
func (s *Scheduler) send(ctx context.Context, d Due, now time.Time, st ReminderState) error {
	if s.Paused() {
		return errPaused
	}
	title, body := s.message(d, now)
	if err := s.notify(ctx, title, body); err != nil {
		return fmt.Errorf("reminder %q: %w", d.Event.Title, err)
	}
	s.log.Info("reminder delivered", "id", d.Event.ID, "title", d.Event.Title, "due", d.At.Format(time.RFC3339),
		"late", now.Sub(d.At) > lateAfter)
	return s.store.SetReminders(ReminderState{DeliveredThrough: st.DeliveredThrough, Sent: append(slices.Clone(st.Sent), d.Key())})
}

// whyLate says why a reminder due at t was not delivered on time.
func (s *Scheduler) whyLate(t time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.pausedFrom.IsZero() && !t.Before(s.pausedFrom) && (s.pausedUntil.IsZero() || !t.After(s.pausedUntil)) {
		return "the agent was paused"
	}
	return "the agent was not running"
}

// message is the notification of a reminder delivered at now.
func (s *Scheduler) message(d Due, now time.Time) (title, body string) {
	e := d.Event
	late := now.Sub(d.At) > lateAfter
	prefix := "Reminder: "
	if late {
		prefix = "Late reminder: "
	}
	var b strings.Builder
	when := d.Start.Format("Mon 2 Jan 15:04")
	if e.AllDay {
		when = d.Start.Format("Mon 2 Jan") + " (all day)"
	}
	switch {
	case e.Kind == KindReminder:
		fmt.Fprintf(&b, "Due at %s.", when)
	case d.Start.After(now):
		fmt.Fprintf(&b, "Starts %s (in %s).", when, humanDuration(d.Start.Sub(now).Round(time.Minute)))
	default:
		fmt.Fprintf(&b, "Started %s.", when)
	}
	if !e.End.IsZero() && !e.AllDay {
		fmt.Fprintf(&b, " Ends %s.", d.Start.Add(e.duration()).Format("15:04"))
	}
	if late {
		fmt.Fprintf(&b, "\nThis reminder (%s) was due at %s and is delivered late: %s.", d.Offset.Human(),
			d.At.Format("Mon 2 Jan 15:04"), s.whyLate(d.At))
	}
	if e.Location != "" {
		b.WriteString("\nLocation: " + e.Location)
	}
	if e.Notes != "" {
		b.WriteString("\n" + e.Notes)
	}
	return truncate(prefix+e.Title, maxNotifyTitle), truncate(b.String(), maxNotifyBody)
}

// summary delivers one notification for the late reminders rest; more says that even more
// were due than one tick considers.
func (s *Scheduler) summary(ctx context.Context, rest []Due, more bool, now time.Time) error {
	var b strings.Builder
	if len(rest) > 0 {
		fmt.Fprintf(&b, "%d more reminders fell due while they could not be delivered (%s):", len(rest), s.whyLate(rest[0].At))
		for _, d := range rest {
			fmt.Fprintf(&b, "\n- %s: %s", d.At.Format("Mon 2 Jan 15:04"), d.Event.Title)
		}
	}
	if more {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "More than %d reminders fell due at once; those after the first %d are not delivered (calendar_list shows the entries).", maxBatch, maxBatch)
	}
	if s.Paused() {
		return errPaused
	}
	if err := s.notify(ctx, "Missed reminders", truncate(b.String(), maxNotifyBody)); err != nil {
		return fmt.Errorf("missed-reminders summary: %w", err)
	}
	s.log.Info("missed reminders summarised", "count", len(rest), "more", more, "at", now.Format(time.RFC3339))
	return nil
}

// truncate cuts s to at most n runes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
