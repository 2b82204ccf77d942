package main

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/jsonfile"
)

// fileVersion is the version of calendar.json this plugin writes and reads.
const fileVersion = 1

// ErrNotFound is wrapped by the errors of operations on an entry that does not exist.
var ErrNotFound = errors.New("no such calendar entry")

// ReminderState is what the scheduler has delivered: every reminder due at or before
// DeliveredThrough, and those in Sent after it (delivered in a batch that did not finish).
type ReminderState struct {
	DeliveredThrough time.Time `json:"delivered_through,omitzero"`
	Sent             []string  `json:"sent,omitempty"`
}

// diskFile is calendar.json.
type diskFile struct {
	Version   int           `json:"version"`
	Events    []*Event      `json:"events"`
	Reminders ReminderState `json:"reminders"`
}

// Store holds the calendar's entries in memory and in DIR/calendar.json, rewritten atomically
// (a temporary file renamed over it) after every change. Safe for concurrent use.
type Store struct {
	file *jsonfile.File
	loc  *time.Location

	mu     sync.Mutex
	events map[string]*Event
	state  ReminderState
}

// OpenStore reads dir/calendar.json (creating dir, 0700, if needed); a missing file is an empty
// calendar. loc is the zone of entries given without one.
func OpenStore(dir string, loc *time.Location) (*Store, error) {
	file, err := jsonfile.Open(dir, "calendar.json", jsonfile.Spec{Plugin: "calendar", What: "the calendar", Version: fileVersion})
	if err != nil {
		return nil, err
	}
	s := &Store{file: file, loc: loc, events: map[string]*Event{}}
	var f diskFile
	if found, err := file.Load(&f); err != nil || !found {
		return s, err
	}
	for i, e := range f.Events {
		if e == nil {
			return nil, fmt.Errorf("%s: entry %d is null", file.Path(), i+1)
		}
		if err := e.prepare(loc); err != nil {
			return nil, fmt.Errorf("%s: entry %q: %w", file.Path(), e.ID, err)
		}
		s.events[e.ID] = e
	}
	s.state = f.Reminders
	return s, nil
}

// saveLocked writes the calendar to disk; s.mu is held.
func (s *Store) saveLocked() error {
	return s.file.Save(diskFile{Version: fileVersion, Events: s.sortedLocked(), Reminders: s.state})
}

// sortedLocked returns the entries by start, then id; s.mu is held.
func (s *Store) sortedLocked() []*Event {
	out := make([]*Event, 0, len(s.events))
	for _, e := range s.events {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.Before(out[j].Start)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Put validates e and adds it, or replaces the entry with its id; it returns the stored copy.
func (s *Store) Put(e *Event) (*Event, error) {
	e = e.clone()
	if err := e.prepare(s.loc); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := jsonfile.Put(s.events, e.ID, e, s.saveLocked); err != nil {
		return nil, err
	}
	return e.clone(), nil
}

// Get returns a copy of the entry with id.
func (s *Store) Get(id string) (*Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.events[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q (calendar_list shows the ids)", ErrNotFound, id)
	}
	return e.clone(), nil
}

// Delete removes the entry with id and returns it.
func (s *Store) Delete(id string) (*Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.events[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q (calendar_list shows the ids)", ErrNotFound, id)
	}
	if err := jsonfile.Delete(s.events, id, s.saveLocked); err != nil {
		return nil, err
	}
	return e, nil
}

// All returns copies of every entry, by start.
func (s *Store) All() []*Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	es := s.sortedLocked()
	for i := range es {
		es[i] = es[i].clone()
	}
	return es
}

// Occurrence is one occurrence of an entry: a recurring entry has many.
type Occurrence struct {
	Event *Event
	Start time.Time
	End   time.Time // zero for a point in time
}

// Between returns the occurrences that overlap [from, to) (a point in time: that start in it),
// by start, at most limit of them; more reports whether some were left out.
func (s *Store) Between(from, to time.Time, limit int) (occ []Occurrence, more bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.sortedLocked() {
		d := e.duration()
		// An occurrence overlaps [from, to) when start < to and (start+d > from, or start >= from).
		after := from.Add(-d)
		if d == 0 {
			after = from.Add(-time.Nanosecond)
		}
		for _, st := range e.startsIn(after, to.Add(-time.Nanosecond), limit+1) {
			o := Occurrence{Event: e.clone(), Start: st}
			if d > 0 {
				o.End = st.Add(d)
			}
			occ = append(occ, o)
		}
	}
	sort.SliceStable(occ, func(i, j int) bool { return occ[i].Start.Before(occ[j].Start) })
	if len(occ) > limit {
		return occ[:limit], true
	}
	return occ, false
}

// Due is one reminder to deliver.
type Due struct {
	Event  *Event
	Start  time.Time // the occurrence's start
	Offset Offset
	At     time.Time // when the reminder is due: Start - Offset
}

// Key identifies a due reminder across restarts.
func (d Due) Key() string {
	return d.Event.ID + "@" + d.Start.UTC().Format(time.RFC3339) + "-" + d.Offset.String()
}

// DueBetween returns the reminders due in (after, upto], by due time then title, at most limit
// (and whether more were due).
func (s *Store) DueBetween(after, upto time.Time, limit int) ([]Due, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Due
	for _, e := range s.sortedLocked() {
		for _, o := range e.Remind {
			off := time.Duration(o)
			for _, st := range e.startsIn(after.Add(off), upto.Add(off), limit+1) {
				out = append(out, Due{Event: e.clone(), Start: st, Offset: o, At: st.Add(-off)})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.Before(out[j].At)
		}
		return out[i].Event.Title < out[j].Event.Title
	})
	if len(out) > limit {
		return out[:limit], true
	}
	return out, false
}

// NextDue returns the due time of the first reminder due after t.
func (s *Store) NextDue(t time.Time) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best time.Time
	for _, e := range s.events {
		for _, o := range e.Remind {
			off := time.Duration(o)
			st, ok := e.firstStartAfter(t.Add(off))
			if ok && (best.IsZero() || st.Add(-off).Before(best)) {
				best = st.Add(-off)
			}
		}
	}
	return best, !best.IsZero()
}

// Reminders returns the scheduler's state.
func (s *Store) Reminders() ReminderState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ReminderState{DeliveredThrough: s.state.DeliveredThrough, Sent: slices.Clone(s.state.Sent)}
}

// SetReminders saves the scheduler's state.
func (s *Store) SetReminders(st ReminderState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.state
	s.state = ReminderState{DeliveredThrough: st.DeliveredThrough, Sent: slices.Clone(st.Sent)}
	if err := s.saveLocked(); err != nil {
		s.state = old
		return err
	}
	return nil
}
