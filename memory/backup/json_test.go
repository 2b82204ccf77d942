package backup_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
	"github.com/hologramagent/hologram/memory/sqlite"
)

var created = time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC)

func exportOpts(include bool) backup.Options {
	return backup.Options{Clock: func() time.Time { return created }, Secrets: testSecrets{}, IncludeSecrets: include}
}

func export(t testing.TB, s *sqlite.Store, opts backup.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := backup.ExportJSON(context.Background(), s, &buf, opts); err != nil {
		t.Fatalf("ExportJSON: %v", err)
	}
	return buf.Bytes()
}

func TestJSONRoundTrip(t *testing.T) {
	ctx := context.Background()
	a := openStore(t)
	f := fill(t, a)
	first := export(t, a, exportOpts(true))

	for _, want := range []string{
		`{"format":"hologram-backup","version":1,"created":"2024-07-01T12:00:00Z","schema":`,
		base64.StdEncoding.EncodeToString(pngish()),
		`"value":"sk-123","secret":true`,
		`"superseded_by":`,
		`"tool_calls":[{"id":"c1","name":"weather","arguments":"{\"city\":\"London\"}"}]`,
	} {
		if !bytes.Contains(first, []byte(want)) {
			t.Errorf("backup lacks %s", want)
		}
	}

	b := openStore(t)
	// An existing empty session is replaced by the backup's.
	if _, err := b.CreateSession(ctx, memory.Session{ID: "owner", Title: "placeholder"}); err != nil {
		t.Fatal(err)
	}
	rep, err := backup.RestoreJSON(ctx, b, bytes.NewReader(first), exportOpts(true))
	if err != nil {
		t.Fatalf("RestoreJSON: %v", err)
	}
	want := backup.Report{Sessions: 3, Events: 8, Blocks: 4, Entities: 9, Triples: 6, Scenes: 2, Settings: 2}
	if rep != want {
		t.Errorf("report = %+v, want %+v", rep, want)
	}
	second := export(t, b, exportOpts(true))
	if !bytes.Equal(first, second) {
		t.Errorf("export after restore differs:\n%s", firstDiff(first, second))
	}
	if v, err := b.GetSetting(ctx, "secret.provider.openai"); err != nil || v != "sealed:sk-123" {
		t.Errorf("restored secret = %q, %v; want it sealed again", v, err)
	}

	// The store's own reads agree, not only the exports.
	sameStore(t, a, b, f)
}

// sameStore compares what the store's own APIs return from a and b.
func sameStore(t *testing.T, a, b *sqlite.Store, f fixture) {
	t.Helper()
	ctx := context.Background()
	for _, sess := range []string{"owner", "qq-g1", "pub"} {
		ha, err := a.History(ctx, sess, 0)
		if err != nil {
			t.Fatal(err)
		}
		hb, err := b.History(ctx, sess, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ha, hb) {
			t.Errorf("History(%s) differs:\n a: %+v\n b: %+v", sess, ha, hb)
		}
		sa, _ := a.GetSession(ctx, sess)
		sb, _ := b.GetSession(ctx, sess)
		if sa != sb {
			t.Errorf("session %s: %+v != %+v", sess, sa, sb)
		}
	}
	ea, err := a.Entities(ctx, memory.EntityQuery{Viewer: memory.OwnerViewer, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	eb, err := b.Entities(ctx, memory.EntityQuery{Viewer: memory.OwnerViewer, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ea, eb) {
		t.Errorf("entities differ:\n a: %+v\n b: %+v", ea, eb)
	}
	ta, err := a.Triples(ctx, memory.TripleQuery{Viewer: memory.OwnerViewer, History: true, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.Triples(ctx, memory.TripleQuery{Viewer: memory.OwnerViewer, History: true, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ta, tb) {
		t.Errorf("triples differ:\n a: %+v\n b: %+v", ta, tb)
	}
	superseded := 0
	for _, tr := range ta {
		if tr.SupersededBy != 0 {
			superseded++
		}
	}
	if superseded < 2 {
		t.Errorf("fixture has %d superseded triples, want the chain London → Paris → Berlin", superseded)
	}
	ia, err := a.Block(ctx, f.imageID)
	if err != nil {
		t.Fatal(err)
	}
	ib, err := b.Block(ctx, f.imageID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ia, ib) || !bytes.Equal(ib.Data, pngish()) || ib.Holder.Layer != memory.LayerL3 {
		t.Errorf("image block: a %+v, b %+v", ia.Holder, ib.Holder)
	}
	sca, _ := a.Scenes(ctx)
	scb, _ := b.Scenes(ctx)
	if !reflect.DeepEqual(sca, scb) {
		t.Errorf("scenes differ:\n a: %+v\n b: %+v", sca, scb)
	}

	// Full-text search finds the same events with the same scores, and triples the same triples.
	for _, terms := range [][]string{{"london"}, {"paris", "oberkampf"}, {"hiking", "alps"}, {"weather"}, {"big", "ben", "thames"}, {"hello"}} {
		for _, v := range []memory.Viewer{memory.OwnerViewer, {Group: "g1"}, {}} {
			q := memory.TextQuery{Terms: terms, Viewer: v}
			ha, err := a.SearchTerms(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			hb, err := b.SearchTerms(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(ha) != len(hb) {
				t.Errorf("SearchTerms(%v, %+v): %d hits before, %d after", terms, v, len(ha), len(hb))
				continue
			}
			if v.Owner && len(ha) == 0 {
				t.Errorf("SearchTerms(%v): no hits in the original", terms)
			}
			for i := range ha {
				if ha[i].Event.ID != hb[i].Event.ID || math.Abs(ha[i].Score-hb[i].Score) > 1e-9 || ha[i].Indexed != hb[i].Indexed {
					t.Errorf("SearchTerms(%v) hit %d: %d %.6f %q vs %d %.6f %q", terms, i,
						ha[i].Event.ID, ha[i].Score, ha[i].Indexed, hb[i].Event.ID, hb[i].Score, hb[i].Indexed)
				}
			}
		}
		tha, err := a.SearchTriples(ctx, terms, memory.OwnerViewer, 50)
		if err != nil {
			t.Fatal(err)
		}
		thb, err := b.SearchTriples(ctx, terms, memory.OwnerViewer, 50)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(tha, thb) {
			t.Errorf("SearchTriples(%v): %+v vs %+v", terms, tha, thb)
		}
	}
	for _, terms := range [][]string{{"alice", "berlin"}, {"bob", "hiking"}, {"knows"}} {
		tha, _ := a.SearchTriples(ctx, terms, memory.OwnerViewer, 50)
		thb, _ := b.SearchTriples(ctx, terms, memory.OwnerViewer, 50)
		if len(tha) == 0 || !reflect.DeepEqual(tha, thb) {
			t.Errorf("SearchTriples(%v): %+v vs %+v", terms, tha, thb)
		}
	}
}

// firstDiff shows where two documents start to differ.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-200)
	return "first:  …" + string(a[lo:min(len(a), i+200)]) + "\nsecond: …" + string(b[lo:min(len(b), i+200)])
}

func TestJSONSecretsLeftOutUnlessAsked(t *testing.T) {
	a := openStore(t)
	fill(t, a)
	doc := export(t, a, exportOpts(false))
	if bytes.Contains(doc, []byte("sk-123")) || bytes.Contains(doc, []byte("secret.provider")) {
		t.Errorf("backup without secrets holds the secret setting")
	}
	if !bytes.Contains(doc, []byte(`{"key":"ui.lang","value":"zh-CN"}`)) {
		t.Errorf("backup lacks the ordinary setting")
	}
	// Without Secrets every setting passes as it is (sealed values stay sealed).
	doc = export(t, a, backup.Options{Clock: func() time.Time { return created }})
	if !bytes.Contains(doc, []byte(`"value":"sealed:sk-123"}`)) {
		t.Errorf("backup without a Secrets filter lacks the sealed setting")
	}
}

func TestRestoreRefusesNonEmptyStore(t *testing.T) {
	ctx := context.Background()
	a := openStore(t)
	fill(t, a)
	doc := export(t, a, exportOpts(true))

	_, err := backup.RestoreJSON(ctx, a, bytes.NewReader(doc), exportOpts(true))
	if !errors.Is(err, backup.ErrNotEmpty) || !strings.Contains(err.Error(), "restore needs an empty memory") {
		t.Fatalf("restore into a full store: %v, want ErrNotEmpty", err)
	}
	if again := export(t, a, exportOpts(true)); !bytes.Equal(doc, again) {
		t.Errorf("a refused restore changed the store:\n%s", firstDiff(doc, again))
	}

	// Only events count as content for sessions: a store with one event is not empty either.
	c := openStore(t)
	if _, err := c.CreateSession(ctx, memory.Session{ID: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppendEvents(ctx, []memory.Event{{Session: "x", Role: memory.RoleUser, Content: "hi"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := backup.RestoreJSON(ctx, c, bytes.NewReader(doc), exportOpts(true)); !errors.Is(err, backup.ErrNotEmpty) {
		t.Fatalf("restore into a store with an event: %v, want ErrNotEmpty", err)
	}
	// The refused restore released the writer: writes go on.
	if _, err := c.AppendEvents(ctx, []memory.Event{{Session: "x", Role: memory.RoleUser, Content: "still here"}}); err != nil {
		t.Fatal(err)
	}
}

func TestRestoreBadDocuments(t *testing.T) {
	ctx := context.Background()
	a := openStore(t)
	f := fill(t, a)
	doc := string(export(t, a, exportOpts(true)))
	eventsAt := strings.Index(doc, `"events":[`)
	triplesAt := strings.Index(doc, `"triples":[`)
	replace := func(old, new string) string {
		t.Helper()
		if !strings.Contains(doc, old) {
			t.Fatalf("fixture backup lacks %s", old)
		}
		return strings.Replace(doc, old, new, 1)
	}
	cases := []struct {
		name, doc, want string
	}{
		{"empty", "", "truncated"},
		{"not json", "hello", "corrupt"},
		{"truncated in the header", doc[:20], "truncated"},
		{"truncated in events", doc[:eventsAt+300], "truncated"},
		{"truncated in triples", doc[:triplesAt+100], "truncated"},
		{"truncated before the end", doc[:len(doc)-2], "truncated"},
		{"garbage after the end", doc + "{}", "after its end"},
		{"corrupt byte", doc[:eventsAt+40] + "\x00" + doc[eventsAt+41:], "corrupt"},
		{"another format", replace(`"format":"hologram-backup"`, `"format":"other"`), `not a hologram backup`},
		{"newer version", replace(`"version":1`, `"version":2`), "version 2 is not supported"},
		{"unknown field", replace(`"role":"assistant"`, `"role":"assistant","colour":"red"`), `in events[1]: json: unknown field "colour"`},
		{"bad role", replace(`"role":"tool"`, `"role":"robot"`), `events[2] (id 3)`},
		{"bad scope", replace(`"scope":"group:g1"`, `"scope":"team"`), `invalid scope "team"`},
		{"duplicate event id", replace(`{"id":2,`, `{"id":1,`), `events[1] (id 1)`},
		{"missing session", replace(`"session":"pub"`, `"session":"gone"`), `session "gone" is not in the backup`},
		{"missing source event", replace(`"sources":[`+strconv.FormatInt(f.ev["berlin"], 10)+`]`, `"sources":[999]`), `source event 999 is not in the backup`},
		{"no time", replace(`"time":"2024-05-06T09:30:00Z",`, ``), `events[0] (id 1): "time" is missing`},
		{"missing section", strings.Replace(doc, `,`+"\n"+`"scenes":[`, `,`+"\n"+`"scenez":[`, 1), `unknown field "scenez"`},
	}
	b := openStore(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := backup.RestoreJSON(ctx, b, strings.NewReader(tc.doc), exportOpts(true))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("RestoreJSON = %v, want an error containing %q", err, tc.want)
			}
			empty(t, b)
		})
	}
	// After every failure the store is still empty and takes the good backup.
	if _, err := backup.RestoreJSON(ctx, b, strings.NewReader(doc), exportOpts(true)); err != nil {
		t.Fatalf("RestoreJSON after failures: %v", err)
	}
	if again := string(export(t, b, exportOpts(true))); again != doc {
		t.Errorf("restore after failures differs:\n%s", firstDiff([]byte(doc), []byte(again)))
	}
}

// empty fails unless the store holds nothing at all.
func empty(t *testing.T, s *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	snap, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	n := 0
	for _, err := range []error{
		snap.Sessions(ctx, func(memory.Session) error { n++; return nil }),
		snap.Events(ctx, false, func(memory.Event) error { n++; return nil }),
		snap.Blocks(ctx, false, func(memory.Block) error { n++; return nil }),
		snap.Entities(ctx, func(memory.Entity) error { n++; return nil }),
		snap.Triples(ctx, func(memory.Triple) error { n++; return nil }),
		snap.Scenes(ctx, func(memory.Scene) error { n++; return nil }),
		snap.Settings(ctx, func(string, string) error { n++; return nil }),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n != 0 {
		t.Errorf("store holds %d records after a failed restore", n)
	}
	hits, err := s.SearchTerms(ctx, memory.TextQuery{Terms: []string{"london"}, Viewer: memory.OwnerViewer})
	if err != nil || len(hits) != 0 {
		t.Errorf("SearchTerms after a failed restore: %v, %v", hits, err)
	}
}
