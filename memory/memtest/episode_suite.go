package memtest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// episodeRanges renders hits as "session:first-last" for comparison.
func episodeRanges(hits []memory.EpisodeHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s:%d-%d", h.Session, h.FirstID, h.LastID))
	}
	return out
}

// testEpisodes checks how events form episodes (gaps, scopes, the size bound), how episodes
// rank as documents, and that viewers and session filters hold.
func testEpisodes(t *testing.T, s IndexedStore) {
	ctx := context.Background()
	for _, id := range []string{"a", "b", "long", "mixed"} {
		mustCreate(t, s, memory.Session{ID: id})
	}
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	a := mustAppend(t, s,
		memory.Event{Session: "a", Role: memory.RoleUser, Content: "planting tomato seedlings", Time: at(0)},
		memory.Event{Session: "a", Role: memory.RoleAssistant, Content: "basil grows well beside them", Time: at(time.Minute)},
		memory.Event{Session: "a", Role: memory.RoleUser, Content: "and the garden gets morning sun", Time: at(2 * time.Minute)},
		// Three hours on: another conversation of the same session.
		memory.Event{Session: "a", Role: memory.RoleUser, Content: "my violin lesson moved to friday", Time: at(3 * time.Hour)},
	)
	b := mustAppend(t, s, memory.Event{Session: "b", Role: memory.RoleUser, Content: "tomato soup recipe", Time: at(time.Minute)})
	var long []memory.Event
	for i := range memory.EpisodeMaxEvents + 8 {
		long = append(long, memory.Event{Session: "long", Role: memory.RoleUser, Content: fmt.Sprintf("chatter number %d", i), Time: at(time.Duration(i) * time.Minute)})
	}
	long = mustAppend(t, s, long...)
	mixed := mustAppend(t, s,
		memory.Event{Session: "mixed", Role: memory.RoleUser, Content: "zebra in public", Scope: public, Time: at(0)},
		memory.Event{Session: "mixed", Role: memory.RoleUser, Content: "zebra among friends", Scope: groupA, Time: at(time.Minute)},
		memory.Event{Session: "mixed", Role: memory.RoleUser, Content: "zebra kept private", Scope: private, Time: at(2 * time.Minute)},
	)
	r := func(sess string, first, last memory.Event) string {
		return fmt.Sprintf("%s:%d-%d", sess, first.ID, last.ID)
	}
	tests := []struct {
		name string
		q    memory.EpisodeQuery
		want []string
	}{
		{"a topic talked over in three turns ranks its episode first", memory.EpisodeQuery{Terms: []string{"tomato", "basil", "garden"}, Viewer: memory.OwnerViewer},
			[]string{r("a", a[0], a[2]), r("b", b[0], b[0])}},
		{"a pause ends an episode", memory.EpisodeQuery{Terms: []string{"violin"}, Viewer: memory.OwnerViewer},
			[]string{r("a", a[3], a[3])}},
		{"a session filter", memory.EpisodeQuery{Terms: []string{"tomato"}, Viewer: memory.OwnerViewer, Session: "b"},
			[]string{r("b", b[0], b[0])}},
		{"a session that never pauses is cut at the bound", memory.EpisodeQuery{Terms: []string{"chatter"}, Viewer: memory.OwnerViewer},
			[]string{r("long", long[0], long[memory.EpisodeMaxEvents-1]), r("long", long[memory.EpisodeMaxEvents], long[len(long)-1])}},
		{"a scope change starts an episode; the owner sees all", memory.EpisodeQuery{Terms: []string{"zebra"}, Viewer: memory.OwnerViewer, Limit: 10},
			[]string{r("mixed", mixed[0], mixed[0]), r("mixed", mixed[1], mixed[1]), r("mixed", mixed[2], mixed[2])}},
		{"a group member sees public and the group's", memory.EpisodeQuery{Terms: []string{"zebra"}, Viewer: memory.Viewer{Group: "A"}},
			[]string{r("mixed", mixed[0], mixed[0]), r("mixed", mixed[1], mixed[1])}},
		{"a stranger sees public only", memory.EpisodeQuery{Terms: []string{"zebra", "private"}, Viewer: memory.Viewer{}},
			[]string{r("mixed", mixed[0], mixed[0])}},
		{"no term matches", memory.EpisodeQuery{Terms: []string{"xylophone"}, Viewer: memory.OwnerViewer}, nil},
		{"limit", memory.EpisodeQuery{Terms: []string{"zebra"}, Viewer: memory.OwnerViewer, Limit: 1}, []string{r("mixed", mixed[0], mixed[0])}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := s.SearchEpisodes(ctx, tt.q)
			if err != nil {
				t.Fatalf("SearchEpisodes: %v", err)
			}
			if got := episodeRanges(hits); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("episodes = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("Last is the time of the episode's last event", func(t *testing.T) {
		hits, err := s.SearchEpisodes(ctx, memory.EpisodeQuery{Terms: []string{"tomato", "violin"}, Viewer: memory.OwnerViewer, Session: "a"})
		if err != nil || len(hits) != 2 {
			t.Fatalf("episodes = %v, %v", episodeRanges(hits), err)
		}
		for _, h := range hits {
			want := at(2 * time.Minute)
			if h.FirstID == a[3].ID {
				want = at(3 * time.Hour)
			}
			if !h.Last.Equal(want) {
				t.Errorf("episode %s: Last = %v, want %v", episodeRanges([]memory.EpisodeHit{h}), h.Last, want)
			}
		}
	})
	t.Run("a term the query repeats weighs more", func(t *testing.T) {
		hits, err := s.SearchEpisodes(ctx, memory.EpisodeQuery{Terms: []string{"soup", "violin", "violin", "violin"}, Viewer: memory.OwnerViewer})
		if err != nil || len(hits) != 2 || hits[0].Session != "a" {
			t.Fatalf("episodes = %v, %v; want the violin one first", episodeRanges(hits), err)
		}
	})
	t.Run("EpisodeEvents", func(t *testing.T) {
		hits, err := s.SearchEpisodes(ctx, memory.EpisodeQuery{Terms: []string{"tomato", "zebra"}, Viewer: memory.OwnerViewer, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []struct {
			viewer memory.Viewer
			want   []string
		}{
			{memory.OwnerViewer, []string{"planting tomato seedlings", "basil grows well beside them", "and the garden gets morning sun",
				"tomato soup recipe", "zebra in public", "zebra among friends", "zebra kept private"}},
			{memory.Viewer{Group: "A"}, []string{"zebra in public", "zebra among friends"}},
		} {
			evs, err := s.EpisodeEvents(ctx, hits, v.viewer)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range evs {
				got = append(got, h.Event.Content)
				if h.Indexed == "" {
					t.Errorf("event %d has no indexed tokens", h.Event.ID)
				}
			}
			if !reflect.DeepEqual(got, v.want) {
				t.Errorf("events seen by %+v = %q, want %q (id order)", v.viewer, got, v.want)
			}
		}
	})
}
