package scene

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestFeatures(t *testing.T) {
	shanghai := time.FixedZone("UTC+8", 8*3600)
	day := func(h, m int) time.Time { return time.Date(2025, 3, 4, h, m, 0, 0, shanghai) }
	cases := []struct {
		name string
		o    Obs
		loc  *time.Location
		want Fingerprint
	}{
		{"everything, lower-cased", Obs{Channel: "QQ", Partner: "Group_1", Tools: []string{"Shell", "notes"}, Topics: []string{"Hiking"}, Time: day(20, 0)}, shanghai,
			Fingerprint{"channel:qq": 1, "partner:group_1": 1, "tool:shell": 0.8, "tool:notes": 0.8, "topic:hiking": 0.4, "tod:evening": 0.2}},
		{"empty values skipped", Obs{Channel: " ", Tools: []string{""}, Topics: []string{"", "x"}}, nil, Fingerprint{"topic:x": 0.4}},
		{"zero time has no time of day", Obs{Partner: "bob"}, shanghai, Fingerprint{"partner:bob": 1}},
		{"night starts at midnight", Obs{Time: day(0, 0)}, shanghai, Fingerprint{"tod:night": 0.2}},
		{"night ends before 6", Obs{Time: day(5, 59)}, shanghai, Fingerprint{"tod:night": 0.2}},
		{"morning from 6", Obs{Time: day(6, 0)}, shanghai, Fingerprint{"tod:morning": 0.2}},
		{"morning to 12", Obs{Time: day(11, 59)}, shanghai, Fingerprint{"tod:morning": 0.2}},
		{"afternoon from 12", Obs{Time: day(12, 0)}, shanghai, Fingerprint{"tod:afternoon": 0.2}},
		{"afternoon to 18", Obs{Time: day(17, 59)}, shanghai, Fingerprint{"tod:afternoon": 0.2}},
		{"evening from 18", Obs{Time: day(18, 0)}, shanghai, Fingerprint{"tod:evening": 0.2}},
		{"evening to midnight", Obs{Time: day(23, 59)}, shanghai, Fingerprint{"tod:evening": 0.2}},
		// 20:00 in Shanghai is 12:00 UTC: the bucket follows the location asked for.
		{"bucket read in loc", Obs{Time: day(20, 0)}, time.UTC, Fingerprint{"tod:afternoon": 0.2}},
		{"nil loc keeps the time's own", Obs{Time: day(20, 0)}, nil, Fingerprint{"tod:evening": 0.2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Features(tc.o, tc.loc); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Features = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDeclared(t *testing.T) {
	good := []struct {
		key  string
		want Fingerprint
	}{
		{"chan:qq/peer:group_1", Fingerprint{"channel:qq": 1, "partner:group_1": 1}},
		{"chan:QQ", Fingerprint{"channel:qq": 1}},
		{"peer:Bob", Fingerprint{"partner:bob": 1}},
		{"chan:waiter/peer:me@host", Fingerprint{"channel:waiter": 1, "partner:me@host": 1}},
	}
	for _, tc := range good {
		got, err := Declared(tc.key)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Declared(%q) = %v, %v; want %v", tc.key, got, err, tc.want)
		}
	}
	bad := []string{"", "qq", "chan:", "peer: ", "chan:qq/", "/peer:x", "peer:bob/chan:qq", "chan:a/chan:b",
		"peer:a/peer:b", "chan:a/peer:b/x", "topic:hiking", "CHAN:qq", "scene:0123456789ab"}
	for _, key := range bad {
		fp, err := Declared(key)
		if err == nil {
			t.Errorf("Declared(%q) = %v, want an error", key, fp)
			continue
		}
		if !strings.Contains(err.Error(), `"`+key+`"`) {
			t.Errorf("Declared(%q): error %q does not name the key", key, err)
		}
	}
}

func TestSimilarity(t *testing.T) {
	a := Fingerprint{"channel:qq": 1, "partner:bob": 1, "tool:shell": 0.8, "tod:evening": 0.2}
	b := Fingerprint{"channel:qq": 1, "partner:alice": 1, "tool:shell": 0.8, "topic:hiking": 0.4}
	cases := []struct {
		name string
		a, b Fingerprint
		want float64
	}{
		{"identical", a, a, 1},
		{"disjoint", Fingerprint{"channel:qq": 1}, Fingerprint{"channel:api": 1}, 0},
		{"both empty", Fingerprint{}, nil, 0},
		{"one empty", a, Fingerprint{}, 0},
		// Shared: channel 1 + tool 0.8 = 1.8. Union: 1 + 1 + 1 + 0.8 + 0.2 + 0.4 = 4.4.
		{"worked example", a, b, 1.8 / 4.4},
		// A shared feature with different weights counts its smaller weight: 0.5 / (1 + 1).
		{"weights differ", Fingerprint{"x": 0.5, "y": 1}, Fingerprint{"x": 1}, 0.25},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, back := Similarity(tc.a, tc.b), Similarity(tc.b, tc.a)
			if math.Abs(got-tc.want) > 1e-12 || got != back {
				t.Fatalf("Similarity = %v (reversed %v), want %v", got, back, tc.want)
			}
		})
	}
}

func TestTopics(t *testing.T) {
	dfs := map[string]int{"the": 90, "hiking": 3, "alps": 1, "trip": 3, "went": 40}
	df := func(terms []string) ([]int, int, error) {
		out := make([]int, len(terms))
		for i, term := range terms {
			out[i] = dfs[term]
		}
		return out, 100, nil
	}
	cases := []struct {
		name  string
		terms []string
		n     int
		want  []string
	}{
		{"most specific first", []string{"the", "hiking", "alps", "went"}, 2, []string{"alps", "hiking"}},
		{"ties by order", []string{"trip", "hiking", "the"}, 2, []string{"trip", "hiking"}},
		{"ties by order, reversed", []string{"hiking", "trip", "the"}, 2, []string{"hiking", "trip"}},
		{"unseen terms skipped", []string{"zzyzx", "went", "qwerty"}, 3, []string{"went"}},
		{"repeats count once", []string{"alps", "alps", "trip", ""}, 5, []string{"alps", "trip"}},
		{"n zero", []string{"alps"}, 0, nil},
		{"no terms", nil, 3, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Topics(tc.terms, df, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) || (len(got) > 0 && !reflect.DeepEqual(got, tc.want)) {
				t.Fatalf("Topics = %q, want %q", got, tc.want)
			}
		})
	}
	boom := errors.New("index closed")
	if _, err := Topics([]string{"x"}, func([]string) ([]int, int, error) { return nil, 0, boom }, 1); !errors.Is(err, boom) {
		t.Fatalf("df error: %v", err)
	}
	if _, err := Topics([]string{"x", "y"}, func([]string) ([]int, int, error) { return []int{1}, 1, nil }, 1); err == nil {
		t.Fatal("short df answer accepted")
	}
}
