package memory

import (
	"context"
	"strings"
	"time"
)

// An episode is one stretch of a session's conversation: consecutive events of the session, in
// id order, with gaps of at most [EpisodeGap], of one scope, at most [EpisodeMaxEvents] of them.
// Recall scores an episode as one document ([Episodes]): a long message or the dialogue so far
// describes a topic, and the best document for a topic is the stretch of conversation about it,
// which names each of its parts somewhere. The index keeps episodes as events are stored, so
// recall ranks every episode, not only those of the events a turn search found.
const (
	// EpisodeGap: a pause longer than this (an hour) ends the conversation it follows.
	EpisodeGap = time.Hour
	// EpisodeMaxEvents bounds an episode (32 events, a few topics of a talk): a session that
	// never pauses is cut into episodes of this size, so each stays a topic's document, and
	// keeping one up to date costs a bounded write.
	EpisodeMaxEvents = 32
)

// EpisodeContinues reports whether next, the event stored after last in last's session, belongs
// to the same episode as last, which holds n events so far.
func EpisodeContinues(last Event, n int, next Event) bool {
	gap := next.Time.Sub(last.Time)
	return n < EpisodeMaxEvents && next.Session == last.Session && next.Scope == last.Scope &&
		gap <= EpisodeGap && gap >= -EpisodeGap
}

// EpisodeQuery asks for the episodes that best match some index terms.
type EpisodeQuery struct {
	// Terms are index tokens, as in [TextQuery]; a term given n times weighs n times (a long
	// query repeats what it is about).
	Terms   []string
	Viewer  Viewer // only episodes whose events Viewer may see
	Session string // non-empty: only this session's episodes
	Limit   int    // default 20
}

// Counts returns the query's distinct terms (lower case, split on spaces), in order, and how
// often the query gives each.
func (q EpisodeQuery) Counts() ([]string, map[string]float64) {
	qtf := map[string]float64{}
	var terms []string
	for _, t := range q.Terms {
		for _, w := range strings.Fields(strings.ToLower(t)) {
			if qtf[w] == 0 {
				terms = append(terms, w)
			}
			qtf[w]++
		}
	}
	return terms, qtf
}

// EpisodeHit is one episode with its BM25 score as one document (k1 1.2, b 0.75, document
// frequencies over episodes). Its events are Session's events with ids in [FirstID, LastID];
// Last is the time of its last event.
type EpisodeHit struct {
	ID              int64
	Session         string
	FirstID, LastID int64
	Last            time.Time
	Score           float64
}

// Holds reports whether the event belongs to the episode.
func (h EpisodeHit) Holds(e Event) bool {
	return e.Session == h.Session && e.ID >= h.FirstID && e.ID <= h.LastID
}

// Episodes is the episode side of the text index.
type Episodes interface {
	// SearchEpisodes returns the best episodes for q, best first (ties by id).
	SearchEpisodes(ctx context.Context, q EpisodeQuery) ([]EpisodeHit, error)
	// EpisodeEvents returns the events of the given episodes that v may see, with their indexed
	// tokens, in id order.
	EpisodeEvents(ctx context.Context, eps []EpisodeHit, v Viewer) ([]TextHit, error)
}
