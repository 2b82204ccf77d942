package memtest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// RunStoreTests runs the [memory.Store] conformance suite. open must return a new, empty store for
// each call (it may register t.Cleanup to release it; the suite also closes it) whose clock reads
// later than the year 2001. Subtests cover sessions, events, settings, concurrency and Close.
func RunStoreTests(t *testing.T, open func(t *testing.T) memory.Store) {
	t.Helper()
	newStore := func(t *testing.T) memory.Store {
		t.Helper()
		s := open(t)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	t.Run("Sessions", func(t *testing.T) { testSessions(t, newStore) })
	t.Run("Events", func(t *testing.T) { testEvents(t, newStore) })
	t.Run("Settings", func(t *testing.T) { testSettings(t, newStore) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, newStore) })
	t.Run("CloseTwice", func(t *testing.T) {
		s := open(t)
		if err := s.Close(); err != nil {
			t.Fatalf("first Close: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})
}

// base is a fixed time well before any store clock, in a non-UTC zone with nanoseconds.
var base = time.Date(2001, 2, 3, 4, 5, 6, 789012345, time.FixedZone("UTC+8", 8*3600))

func mustCreate(t *testing.T, s memory.Store, sess memory.Session) memory.Session {
	t.Helper()
	got, err := s.CreateSession(context.Background(), sess)
	if err != nil {
		t.Fatalf("CreateSession(%q): %v", sess.ID, err)
	}
	return got
}

func mustAppend(t *testing.T, s memory.Store, evs ...memory.Event) []memory.Event {
	t.Helper()
	got, err := s.AppendEvents(context.Background(), evs)
	if err != nil {
		t.Fatalf("AppendEvents: %v", err)
	}
	if len(got) != len(evs) {
		t.Fatalf("AppendEvents returned %d events, want %d", len(got), len(evs))
	}
	return got
}

func mustHistory(t *testing.T, s memory.Store, session string, limit int) []memory.Event {
	t.Helper()
	got, err := s.History(context.Background(), session, limit)
	if err != nil {
		t.Fatalf("History(%q, %d): %v", session, limit, err)
	}
	return got
}

func wantErr(t *testing.T, what string, err, target error, mentions string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want one wrapping %q", what, err, target)
	}
	if mentions != "" && !strings.Contains(err.Error(), mentions) {
		t.Fatalf("%s: error %q does not mention %q", what, err, mentions)
	}
}

func isUTC(t time.Time) bool { return t.Location() == time.UTC }

func testSessions(t *testing.T, open func(*testing.T) memory.Store) {
	ctx := context.Background()

	t.Run("CreateGet", func(t *testing.T) {
		s := open(t)
		got := mustCreate(t, s, memory.Session{ID: "a", Title: "T", SystemPrompt: "be brief", Model: "m1",
			Channel: "qq", Partner: "group_1", Scope: memory.Scope{Kind: memory.ScopeGroup, Group: "g1"}})
		if got.Channel != "qq" || got.Partner != "group_1" || got.Scope != (memory.Scope{Kind: memory.ScopeGroup, Group: "g1"}) {
			t.Fatalf("CreateSession lost channel, partner or scope: %+v", got)
		}
		if got.Created.IsZero() || got.Updated.IsZero() || !isUTC(got.Created) || !isUTC(got.Updated) {
			t.Fatalf("Created/Updated not set to a UTC now: %+v", got)
		}
		if got.Created.Before(base) {
			t.Fatalf("Created %v is before 2001; is the clock wired?", got.Created)
		}
		back, err := s.GetSession(ctx, "a")
		if err != nil {
			t.Fatalf("GetSession: %v", err)
		}
		if !reflect.DeepEqual(back, got) {
			t.Fatalf("GetSession = %+v, want %+v", back, got)
		}
	})

	t.Run("ExplicitTimesRoundTrip", func(t *testing.T) {
		s := open(t)
		got := mustCreate(t, s, memory.Session{ID: "a", Created: base, Updated: base.Add(time.Nanosecond)})
		back, err := s.GetSession(ctx, "a")
		if err != nil {
			t.Fatalf("GetSession: %v", err)
		}
		for _, c := range []struct {
			name      string
			got, want time.Time
		}{
			{"created", back.Created, base},
			{"updated", back.Updated, base.Add(time.Nanosecond)},
			{"returned created", got.Created, base},
		} {
			if !c.got.Equal(c.want) || !isUTC(c.got) {
				t.Errorf("%s = %v, want %v in UTC", c.name, c.got, c.want.UTC())
			}
		}
	})

	t.Run("Errors", func(t *testing.T) {
		s := open(t)
		mustCreate(t, s, memory.Session{ID: "a"})
		tests := []struct {
			name     string
			call     func() error
			target   error
			mentions string
		}{
			{"duplicate", func() error { _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); return err }, memory.ErrExists, `"a"`},
			{"create empty id", func() error { _, err := s.CreateSession(ctx, memory.Session{}); return err }, memory.ErrInvalid, ""},
			{"create bad scope", func() error {
				_, err := s.CreateSession(ctx, memory.Session{ID: "b", Scope: memory.Scope{Kind: memory.ScopeGroup}})
				return err
			}, memory.ErrInvalid, "scope"},
			{"get unknown", func() error { _, err := s.GetSession(ctx, "nope"); return err }, memory.ErrNotFound, "nope"},
			{"update unknown", func() error { _, err := s.UpdateSession(ctx, memory.Session{ID: "nope"}); return err }, memory.ErrNotFound, "nope"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) { wantErr(t, tt.name, tt.call(), tt.target, tt.mentions) })
		}
	})

	t.Run("Update", func(t *testing.T) {
		s := open(t)
		orig := mustCreate(t, s, memory.Session{ID: "a", Title: "old", SystemPrompt: "p", Model: "m", Created: base, Updated: base,
			Channel: "waiter", Partner: "me", Scope: memory.Scope{Kind: memory.ScopePublic}})
		got, err := s.UpdateSession(ctx, memory.Session{ID: "a", Title: "new", SystemPrompt: "p2", Model: ""})
		if err != nil {
			t.Fatalf("UpdateSession: %v", err)
		}
		if got.Title != "new" || got.SystemPrompt != "p2" || got.Model != "" {
			t.Fatalf("UpdateSession = %+v, fields not replaced", got)
		}
		if got.Channel != orig.Channel || got.Partner != orig.Partner || got.Scope != orig.Scope {
			t.Fatalf("UpdateSession changed channel, partner or scope: %+v, was %+v", got, orig)
		}
		if !got.Created.Equal(orig.Created) {
			t.Fatalf("UpdateSession changed Created: %v, want %v", got.Created, orig.Created)
		}
		if !got.Updated.After(orig.Updated) {
			t.Fatalf("UpdateSession did not bump Updated: %v (was %v)", got.Updated, orig.Updated)
		}
		back, err := s.GetSession(ctx, "a")
		if err != nil {
			t.Fatalf("GetSession: %v", err)
		}
		if !reflect.DeepEqual(back, got) {
			t.Fatalf("GetSession = %+v, want %+v", back, got)
		}
	})

	t.Run("ListOrder", func(t *testing.T) {
		s := open(t)
		if got, err := s.ListSessions(ctx); err != nil || len(got) != 0 {
			t.Fatalf("ListSessions on an empty store = %v, %v; want none", got, err)
		}
		mustCreate(t, s, memory.Session{ID: "old", Created: base, Updated: base})
		mustCreate(t, s, memory.Session{ID: "tie-b", Created: base, Updated: base.Add(time.Hour)})
		mustCreate(t, s, memory.Session{ID: "tie-a", Created: base, Updated: base.Add(time.Hour)})
		mustCreate(t, s, memory.Session{ID: "mid", Created: base, Updated: base.Add(time.Minute)})
		ids := func() []string {
			t.Helper()
			list, err := s.ListSessions(ctx)
			if err != nil {
				t.Fatalf("ListSessions: %v", err)
			}
			var out []string
			for _, x := range list {
				out = append(out, x.ID)
			}
			return out
		}
		if got, want := ids(), []string{"tie-a", "tie-b", "mid", "old"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("ListSessions order = %v, want %v", got, want)
		}
		// Appending bumps Updated to now, which is after every explicit time above.
		mustAppend(t, s, memory.Event{Session: "old", Role: memory.RoleUser, Content: "hi"})
		if got, want := ids(), []string{"old", "tie-a", "tie-b", "mid"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("ListSessions order after append = %v, want %v", got, want)
		}
	})
}

func testEvents(t *testing.T, open func(*testing.T) memory.Store) {
	ctx := context.Background()

	t.Run("AppendOrderAndIDs", func(t *testing.T) {
		s := open(t)
		mustCreate(t, s, memory.Session{ID: "a"})
		mustCreate(t, s, memory.Session{ID: "b"})
		var all []memory.Event
		for i := range 3 {
			got := mustAppend(t, s,
				memory.Event{Session: "a", TurnID: fmt.Sprint("t", i), Role: memory.RoleUser, Content: fmt.Sprint("q", i)},
				memory.Event{Session: "b", Role: memory.RoleUser, Content: "other"},
				memory.Event{Session: "a", TurnID: fmt.Sprint("t", i), Role: memory.RoleAssistant, Content: fmt.Sprint("a", i)},
			)
			all = append(all, got...)
		}
		var last int64
		var wantA []memory.Event
		for i, e := range all {
			if e.ID <= last {
				t.Fatalf("event %d: id %d not above the previous %d", i, e.ID, last)
			}
			last = e.ID
			if e.Time.IsZero() || !isUTC(e.Time) || e.Time.Before(base) {
				t.Fatalf("event %d: Time %v not set to a UTC now", i, e.Time)
			}
			if e.Session == "a" {
				wantA = append(wantA, e)
			}
		}
		if got := mustHistory(t, s, "a", 0); !reflect.DeepEqual(got, wantA) {
			t.Fatalf("History(a) =\n%+v\nwant\n%+v", got, wantA)
		}
		if got := mustHistory(t, s, "b", 0); len(got) != 3 {
			t.Fatalf("History(b) has %d events, want 3", len(got))
		}
		if got, err := s.AppendEvents(ctx, nil); err != nil || len(got) != 0 {
			t.Fatalf("AppendEvents(nil) = %v, %v; want nothing, nil", got, err)
		}
	})

	t.Run("FieldsRoundTrip", func(t *testing.T) {
		s := open(t)
		mustCreate(t, s, memory.Session{ID: "a"})
		in := []memory.Event{
			{Session: "a", TurnID: "t1", Time: base, Role: memory.RoleUser, Content: "天气 weather?", Channel: "qq",
				Partner: "p1", Scene: "chan:qq/peer:group_1", Scope: memory.Scope{Kind: memory.ScopeGroup, Group: "g1"}, Tokens: 7,
				Meta: map[string]string{"import.turn": "42", "source": "chatgpt", "空": ""}},
			{Session: "a", TurnID: "t1", Time: base.Add(time.Nanosecond), Role: memory.RoleAssistant, Reasoning: "think",
				ToolCalls: []memory.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"上海"}`}, {ID: "c2", Name: "clock", Arguments: `{}`}},
				Scope:     memory.Scope{Kind: memory.ScopePublic}, Tokens: 12,
				Layer: memory.LayerL2, Accesses: 3, LastAccess: base.Add(time.Hour + time.Nanosecond)},
			{Session: "a", TurnID: "t1", Role: memory.RoleTool, Content: `{"temp":21}`, ToolCallID: "c1", ToolName: "weather", ToolStatus: "ok"},
			{Session: "a", TurnID: "t1", Role: memory.RoleTool, Content: "denied by owner", ToolCallID: "c2", ToolName: "clock", ToolStatus: "denied"},
			{Session: "a", Role: memory.RoleSystem, Content: "", ToolCalls: []memory.ToolCall{}, Meta: map[string]string{}, Layer: memory.LayerL1},
		}
		got := mustAppend(t, s, in...)
		for i := range in {
			want := in[i]
			want.ID = got[i].ID
			if i > 0 { // a new session's events follow each other
				want.Parent = got[i-1].ID
			}
			if want.Time.IsZero() {
				want.Time = got[i].Time
			} else {
				want.Time = want.Time.UTC()
			}
			if len(want.ToolCalls) == 0 {
				want.ToolCalls = nil
			}
			if len(want.Meta) == 0 {
				want.Meta = nil
			}
			if want.Layer == 0 {
				want.Layer = memory.LayerL1 // new events are L1
			}
			if !want.LastAccess.IsZero() {
				want.LastAccess = want.LastAccess.UTC()
			}
			if !reflect.DeepEqual(got[i], want) {
				t.Errorf("returned event %d =\n%+v\nwant\n%+v", i, got[i], want)
			}
		}
		if back := mustHistory(t, s, "a", 0); !reflect.DeepEqual(back, got) {
			t.Fatalf("History =\n%+v\nwant\n%+v", back, got)
		}
		// The returned events do not alias the caller's slices.
		in[1].ToolCalls[0].Name = "changed"
		in[0].Meta["source"] = "changed"
		if back := mustHistory(t, s, "a", 0); back[1].ToolCalls[0].Name != "weather" || back[0].Meta["source"] != "chatgpt" {
			t.Fatalf("stored event changed with the caller's slice or map: %+v, %+v", back[1].ToolCalls, back[0].Meta)
		}
		// Nor do the events History returns.
		back := mustHistory(t, s, "a", 0)
		back[0].Meta["source"] = "mutated"
		if again := mustHistory(t, s, "a", 0); again[0].Meta["source"] != "chatgpt" {
			t.Fatalf("History shares its Meta map with callers: %+v", again[0].Meta)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		s := open(t)
		mustCreate(t, s, memory.Session{ID: "a"})
		ok := memory.Event{Session: "a", Role: memory.RoleUser, Content: "fine"}
		tests := []struct {
			name     string
			batch    []memory.Event
			target   error
			mentions string
		}{
			{"unknown session", []memory.Event{{Session: "ghost", Role: memory.RoleUser}}, memory.ErrNotFound, "ghost"},
			{"invalid role", []memory.Event{{Session: "a", Role: "wizard"}}, memory.ErrInvalid, "wizard"},
			{"empty role", []memory.Event{{Session: "a"}}, memory.ErrInvalid, "role"},
			{"no session", []memory.Event{{Role: memory.RoleUser}}, memory.ErrInvalid, "session"},
			{"group scope without group", []memory.Event{{Session: "a", Role: memory.RoleUser, Scope: memory.Scope{Kind: memory.ScopeGroup}}}, memory.ErrInvalid, "group"},
			{"unknown scope kind", []memory.Event{{Session: "a", Role: memory.RoleUser, Scope: memory.Scope{Kind: 9}}}, memory.ErrInvalid, "scope"},
			{"unknown layer", []memory.Event{ok, {Session: "a", Role: memory.RoleUser, Layer: 3}}, memory.ErrInvalid, "layer"},
			{"atomic: bad role last", []memory.Event{ok, ok, {Session: "a", Role: "bogus"}}, memory.ErrInvalid, "bogus"},
			{"atomic: unknown session last", []memory.Event{ok, ok, {Session: "ghost", Role: memory.RoleUser}}, memory.ErrNotFound, "ghost"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.AppendEvents(ctx, tt.batch)
				wantErr(t, "AppendEvents", err, tt.target, tt.mentions)
				if len(got) != 0 {
					t.Fatalf("AppendEvents returned %d events with an error", len(got))
				}
				if n, err := s.CountEvents(ctx, "a"); err != nil || n != 0 {
					t.Fatalf("CountEvents after a failed batch = %d, %v; want 0 (all or nothing)", n, err)
				}
			})
		}
		// A failed batch consumes nothing visible: the next one still works.
		mustAppend(t, s, ok)
		if n, err := s.CountEvents(ctx, "a"); err != nil || n != 1 {
			t.Fatalf("CountEvents = %d, %v; want 1", n, err)
		}
	})

	t.Run("HistoryLimit", func(t *testing.T) {
		s := open(t)
		mustCreate(t, s, memory.Session{ID: "a"})
		mustCreate(t, s, memory.Session{ID: "empty"})
		var all []memory.Event
		for i := range 10 {
			all = append(all, mustAppend(t, s, memory.Event{Session: "a", Role: memory.RoleUser, Content: fmt.Sprint(i)})...)
		}
		tests := []struct {
			limit int
			want  []memory.Event
		}{
			{0, all}, {-1, all}, {1, all[9:]}, {3, all[7:]}, {10, all}, {100, all},
		}
		for _, tt := range tests {
			t.Run(fmt.Sprint("limit=", tt.limit), func(t *testing.T) {
				if got := mustHistory(t, s, "a", tt.limit); !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("History(a, %d) = %+v, want %+v", tt.limit, got, tt.want)
				}
			})
		}
		if got := mustHistory(t, s, "empty", 5); len(got) != 0 {
			t.Fatalf("History of an empty session = %+v", got)
		}
		_, err := s.History(ctx, "ghost", 5)
		wantErr(t, "History(ghost)", err, memory.ErrNotFound, "ghost")
	})

	t.Run("CountEvents", func(t *testing.T) {
		s := open(t)
		mustCreate(t, s, memory.Session{ID: "a"})
		mustCreate(t, s, memory.Session{ID: "b"})
		mustAppend(t, s, memory.Event{Session: "a", Role: memory.RoleUser}, memory.Event{Session: "a", Role: memory.RoleAssistant},
			memory.Event{Session: "b", Role: memory.RoleUser})
		for _, tt := range []struct {
			session string
			want    int
		}{{"a", 2}, {"b", 1}} {
			if n, err := s.CountEvents(ctx, tt.session); err != nil || n != tt.want {
				t.Errorf("CountEvents(%q) = %d, %v; want %d", tt.session, n, err, tt.want)
			}
		}
		_, err := s.CountEvents(ctx, "ghost")
		wantErr(t, "CountEvents(ghost)", err, memory.ErrNotFound, "ghost")
	})
}

func testSettings(t *testing.T, open func(*testing.T) memory.Store) {
	ctx := context.Background()
	s := open(t)
	set := func(k, v string) {
		t.Helper()
		if err := s.SetSetting(ctx, k, v); err != nil {
			t.Fatalf("SetSetting(%q): %v", k, err)
		}
	}

	t.Run("GetUnset", func(t *testing.T) {
		_, err := s.GetSetting(ctx, "llm.model")
		wantErr(t, "GetSetting", err, memory.ErrNotFound, "llm.model")
	})
	t.Run("SetGetReplace", func(t *testing.T) {
		for _, v := range []string{"first", "", "second\nwith 中文 and \x00 byte"} {
			set("llm.model", v)
			got, err := s.GetSetting(ctx, "llm.model")
			if err != nil || got != v {
				t.Fatalf("GetSetting = %q, %v; want %q", got, err, v)
			}
		}
	})
	t.Run("ListByPrefix", func(t *testing.T) {
		set("llm.key", "k")
		set("llm.model", "m")
		set("llmx", "x")
		set("ui.theme", "dark")
		set("LLM.upper", "u")
		tests := []struct {
			prefix string
			want   map[string]string
		}{
			{"llm.", map[string]string{"llm.key": "k", "llm.model": "m"}},
			{"llm", map[string]string{"llm.key": "k", "llm.model": "m", "llmx": "x"}},
			{"ui.theme", map[string]string{"ui.theme": "dark"}},
			{"none.", map[string]string{}},
			{"", map[string]string{"llm.key": "k", "llm.model": "m", "llmx": "x", "ui.theme": "dark", "LLM.upper": "u"}},
		}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("prefix=%q", tt.prefix), func(t *testing.T) {
				got, err := s.ListSettings(ctx, tt.prefix)
				if err != nil {
					t.Fatalf("ListSettings: %v", err)
				}
				if len(got) != len(tt.want) || (len(got) > 0 && !reflect.DeepEqual(got, tt.want)) {
					t.Fatalf("ListSettings(%q) = %v, want %v", tt.prefix, got, tt.want)
				}
			})
		}
	})
	t.Run("Delete", func(t *testing.T) {
		set("gone", "v")
		if err := s.DeleteSetting(ctx, "gone"); err != nil {
			t.Fatalf("DeleteSetting: %v", err)
		}
		_, err := s.GetSetting(ctx, "gone")
		wantErr(t, "GetSetting after delete", err, memory.ErrNotFound, "gone")
		wantErr(t, "DeleteSetting twice", s.DeleteSetting(ctx, "gone"), memory.ErrNotFound, "gone")
	})
}

func testConcurrency(t *testing.T, open func(*testing.T) memory.Store) {
	ctx := context.Background()
	s := open(t)
	mustCreate(t, s, memory.Session{ID: "a"})
	const workers, batches = 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				_, err := s.AppendEvents(ctx, []memory.Event{
					{Session: "a", TurnID: fmt.Sprintf("w%d-b%d", w, b), Role: memory.RoleUser, Content: fmt.Sprintf("w%d b%d 0", w, b)},
					{Session: "a", TurnID: fmt.Sprintf("w%d-b%d", w, b), Role: memory.RoleAssistant, Content: fmt.Sprintf("w%d b%d 1", w, b)},
				})
				if err != nil {
					errs <- fmt.Errorf("worker %d batch %d: %w", w, b, err)
					return
				}
				if _, err := s.History(ctx, "a", 5); err != nil {
					errs <- fmt.Errorf("worker %d reading: %w", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	hist := mustHistory(t, s, "a", 0)
	if len(hist) != workers*batches*2 {
		t.Fatalf("History has %d events, want %d", len(hist), workers*batches*2)
	}
	seen := make(map[string]int)
	next := make(map[int]int) // per worker: the next batch expected, in order
	for i, e := range hist {
		seen[e.Content]++
		if i > 0 && e.ID <= hist[i-1].ID {
			t.Fatalf("ids not increasing at %d: %d after %d", i, e.ID, hist[i-1].ID)
		}
		var w, b, k int
		if _, err := fmt.Sscanf(e.Content, "w%d b%d %d", &w, &b, &k); err != nil {
			t.Fatalf("unexpected content %q", e.Content)
		}
		if k == 1 {
			// A batch is contiguous: its first event is right before it.
			if i == 0 || hist[i-1].Content != fmt.Sprintf("w%d b%d 0", w, b) {
				t.Fatalf("batch w%d b%d is not contiguous", w, b)
			}
			if b != next[w] {
				t.Fatalf("worker %d: batch %d stored before batch %d", w, b, next[w])
			}
			next[w]++
		}
	}
	for c, n := range seen {
		if n != 1 {
			t.Errorf("event %q stored %d times", c, n)
		}
	}
}
