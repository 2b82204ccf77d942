package cold

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/memtest"
)

// TestQueryTime: relative expressions resolve against the time asked (here Wednesday 10 May
// 2023, 15:00 UTC), parts of months and ranges against the calendar. want lists the spans as
// "from..to" (to exclusive), "*" marking any year; dates are onDate's (TestQueryDates).
func TestQueryTime(t *testing.T) {
	now := time.Date(2023, 5, 10, 15, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want []string
	}{
		{"what did I do yesterday?", []string{"2023-05-08..2023-05-11"}},
		{"the day before yesterday", []string{"2023-05-07..2023-05-10"}},
		{"what's on today", []string{"2023-05-09..2023-05-12"}},
		{"three days ago", []string{"2023-05-06..2023-05-09"}},
		{"2 weeks ago we met", []string{"2023-04-22..2023-05-01"}},
		{"a month ago", []string{"2023-03-26..2023-04-26"}},
		{"what happened last week?", []string{"2023-05-01..2023-05-08"}},
		{"this week", []string{"2023-05-08..2023-05-15"}},
		{"last weekend", []string{"2023-05-06..2023-05-08"}},
		{"plans for next month", []string{"2023-06-01..2023-07-01"}},
		{"last month", []string{"2023-04-01..2023-05-01"}},
		{"last year", []string{"2022-01-01..2023-01-01"}},
		{"over the past two weeks", []string{"2023-04-26..2023-05-11"}},
		{"last Friday", []string{"2023-05-04..2023-05-07"}},
		{"last Wednesday", []string{"2023-05-02..2023-05-05"}},
		{"early May", []string{"*05-01..05-11"}},
		{"mid-August 2022", []string{"2022-08-11..2022-08-21"}},
		{"at the end of March", []string{"*03-21..04-01"}},
		{"the last two weeks of August", []string{"*08-18..09-01"}},
		{"the first week of June 2023", []string{"2023-06-01..2023-06-08"}},
		{"between 3 and 10 May 2023", []string{"2023-05-03..2023-05-11"}},
		{"from May 3 to May 12, 2023?", []string{"2023-05-03..2023-05-13"}},
		{"昨天我去了哪里", []string{"2023-05-08..2023-05-11"}},
		{"前天", []string{"2023-05-07..2023-05-10"}},
		{"三天前", []string{"2023-05-06..2023-05-09"}},
		{"两个星期前", []string{"2023-04-22..2023-05-01"}},
		{"上周做了什么", []string{"2023-05-01..2023-05-08"}},
		{"上个月", []string{"2023-04-01..2023-05-01"}},
		{"上周末", []string{"2023-05-06..2023-05-08"}},
		{"去年", []string{"2022-01-01..2023-01-01"}},
		{"8月下旬", []string{"*08-21..09-01"}},
		{"2023年5月初", []string{"2023-05-01..2023-05-11"}},
		{"you may go last", nil},
		{"the week was long", nil},
	}
	for _, tc := range cases {
		q := queryTime(tc.in, now)
		var got []string
		for _, s := range q.spans {
			if s.anyYear {
				got = append(got, "*"+s.from.Format("01-02")+".."+s.to.Format("01-02"))
			} else {
				got = append(got, s.from.Format(time.DateOnly)+".."+s.to.Format(time.DateOnly))
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: spans %v, want %v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: spans %v, want %v", tc.in, got, tc.want)
				break
			}
		}
	}
	// Without a time asked, relative expressions stay unresolved.
	if q := queryTime("yesterday, last week", time.Time{}); !q.empty() {
		t.Errorf("relative spans without a time asked: %+v", q)
	}
}

func TestSpanBoostsAndWindow(t *testing.T) {
	now := time.Date(2023, 5, 10, 15, 0, 0, 0, time.UTC)
	at := func(s string) time.Time {
		v, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		q      string
		t      string
		boosts bool
	}{
		{"yesterday", "2023-05-09 20:00:00", true},
		{"yesterday", "2023-05-01 20:00:00", false},
		{"early May", "2021-05-04 09:00:00", true}, // any year
		{"early May", "2021-05-14 09:00:00", false},
		{"last year", "2022-06-01 09:00:00", false}, // a year is too long to boost
		{"on 8 May, 2023", "2023-05-08 09:00:00", true},
	}
	for _, tc := range cases {
		if got := queryTime(tc.q, now).boosts(at(tc.t)); got != tc.boosts {
			t.Errorf("%q at %s: boosts %v, want %v", tc.q, tc.t, got, tc.boosts)
		}
	}
	windows := []struct {
		q        string
		from, to string
		ok       bool
	}{
		{"what happened on 8 May, 2023?", "2023-05-08", "2023-05-09", true},
		{"May 2023", "2023-05-01", "2023-06-01", true},
		{"yesterday", "2023-05-08", "2023-05-11", true},
		{"last year", "2022-01-01", "2023-01-01", true},
		{"on 8 May", "", "", false},                    // no year: no window
		{"early May", "", "", false},                   // likewise
		{"yesterday and on 2 May 2023", "", "", false}, // two stretches
		{"what is my name", "", "", false},
	}
	for _, tc := range windows {
		from, to, ok := queryTime(tc.q, now).window()
		if ok != tc.ok || (ok && (from.Format(time.DateOnly) != tc.from || to.Format(time.DateOnly) != tc.to)) {
			t.Errorf("%q: window %v..%v %v, want %s..%s %v", tc.q, from, to, ok, tc.from, tc.to, tc.ok)
		}
	}
}

// TestRecallTime: a question that gives only a time finds that time's events though none of its
// words are in them; a relative one resolves against Query.Now; events of other days stay below.
func TestRecallTime(t *testing.T) {
	ctx := context.Background()
	m := memtest.NewMem(nil)
	if _, err := m.CreateSession(ctx, memory.Session{ID: "chat"}); err != nil {
		t.Fatal(err)
	}
	day := func(d int, h int) time.Time { return time.Date(2023, 5, d, h, 0, 0, 0, time.UTC) }
	evs := []memory.Event{
		{Session: "chat", Role: memory.RoleUser, Content: "went to the dentist, a filling", Time: day(2, 9)},
		{Session: "chat", Role: memory.RoleUser, Content: "baked bread with my sister", Time: day(5, 10)},
		{Session: "chat", Role: memory.RoleUser, Content: "the new flat has a balcony", Time: day(5, 11)},
		{Session: "chat", Role: memory.RoleUser, Content: "a long meeting at work", Time: day(9, 9)},
	}
	if _, err := m.AppendEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Index: m, Tokens: memory.DefaultTokenize})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		q    string
		now  time.Time
		want []string // the top hits, in any order
	}{
		{"What happened on 5 May 2023?", time.Time{}, []string{"baked bread with my sister", "the new flat has a balcony"}},
		{"和2023年5月2日有关的事", time.Time{}, []string{"went to the dentist, a filling"}},
		{"what did I do the day before yesterday?", day(7, 20), []string{"baked bread with my sister", "the new flat has a balcony"}},
	}
	for _, tc := range cases {
		hits, err := r.Recall(ctx, Query{Text: tc.q, Viewer: memory.OwnerViewer, K: len(tc.want), Now: tc.now})
		if err != nil {
			t.Fatal(err)
		}
		got := contents(hits)
		slices.Sort(got)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%q: top %v, want %v", tc.q, got, want)
		}
	}
}
