package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// The memory admin methods of fakeBackend answer zero values; graphBackend overrides them.

func (f *fakeBackend) Graph(context.Context, client.GraphQuery) (client.GraphPage, error) {
	return client.GraphPage{}, nil
}

func (f *fakeBackend) Entity(context.Context, int64) (client.EntityDetail, error) {
	return client.EntityDetail{}, nil
}

func (f *fakeBackend) EventContext(context.Context, int64, int) ([]client.MemoryHit, error) {
	return nil, nil
}

func (f *fakeBackend) PutEntity(_ context.Context, e client.Entity) (client.Entity, error) {
	return e, nil
}

func (f *fakeBackend) AddTriple(context.Context, client.TripleInput) (client.Triple, error) {
	return client.Triple{}, nil
}

func (f *fakeBackend) EditTriple(context.Context, int64, client.TripleInput) (client.Triple, error) {
	return client.Triple{}, nil
}

func (f *fakeBackend) Pin(context.Context, client.PinRequest) error { return nil }

func (f *fakeBackend) MergeEntities(_ context.Context, into, _ int64) (client.Entity, error) {
	return client.Entity{ID: into}, nil
}

func (f *fakeBackend) DeleteEntity(context.Context, int64) error { return nil }

func (f *fakeBackend) Forget(context.Context, []int64) (client.ForgetResult, error) {
	return client.ForgetResult{}, nil
}

func (f *fakeBackend) Scenes(context.Context) ([]client.Scene, error) { return nil, nil }

func (f *fakeBackend) MemoryGC(context.Context) (client.GCReport, error) {
	return client.GCReport{}, nil
}

func (f *fakeBackend) ExportMemory(context.Context, client.ExportRequest, io.Writer) error {
	return nil
}

func (f *fakeBackend) ImportMemory(context.Context, string, io.Reader) (client.ImportReport, error) {
	return client.ImportReport{}, nil
}

// graphBackend is a backend double for the memory admin routes: it records each call as text
// (method and arguments) and answers what the test scripted.
type graphBackend struct {
	fakeBackend
	mu    sync.Mutex
	calls []string

	graph  func(q client.GraphQuery) (client.GraphPage, error)
	entity func(id int64) (client.EntityDetail, error)
	scenes []client.Scene
	export func(req client.ExportRequest, w io.Writer) error
	// importFn reads the import body; nil reads it all and counts its bytes as events.
	importFn func(format string, r io.Reader) (client.ImportReport, error)
	// fail, when set, is the error every write method returns.
	fail error
}

func (g *graphBackend) record(format string, args ...any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, fmt.Sprintf(format, args...))
}

// set changes the double's script under its lock: a handler of an earlier request may still run.
func (g *graphBackend) set(fn func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	fn()
}

// script returns the scripted answers.
func (g *graphBackend) script() (scenes []client.Scene, export func(client.ExportRequest, io.Writer) error,
	importFn func(string, io.Reader) (client.ImportReport, error), fail error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.scenes, g.export, g.importFn, g.fail
}

// take returns the calls recorded since the last take.
func (g *graphBackend) take() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.calls
	g.calls = nil
	return c
}

func (g *graphBackend) Graph(_ context.Context, q client.GraphQuery) (client.GraphPage, error) {
	g.record("Graph %+v", q)
	if g.graph == nil {
		return client.GraphPage{}, nil
	}
	return g.graph(q)
}

func (g *graphBackend) Entity(_ context.Context, id int64) (client.EntityDetail, error) {
	g.record("Entity %d", id)
	if g.entity == nil {
		return client.EntityDetail{}, fmt.Errorf("entity %d: %w", id, client.ErrNotFound)
	}
	return g.entity(id)
}

func (g *graphBackend) EventContext(_ context.Context, id int64, radius int) ([]client.MemoryHit, error) {
	g.record("EventContext %d %d", id, radius)
	if id == 404 {
		return nil, fmt.Errorf("event %d: %w", id, client.ErrNotFound)
	}
	return []client.MemoryHit{{ID: id - 1, Session: "s", Role: "user", Scope: "private", Layer: 2, Content: "before"},
		{ID: id, Session: "s", Role: "assistant", Scope: "private", Layer: 2, Content: "the source"}}, nil
}

func (g *graphBackend) PutEntity(_ context.Context, e client.Entity) (client.Entity, error) {
	g.record("PutEntity %+v", e)
	if _, _, _, fail := g.script(); fail != nil {
		return client.Entity{}, fail
	}
	if e.Name == "dup" {
		return client.Entity{}, &client.Error{Status: http.StatusConflict, Message: `entity "dup" exists`}
	}
	if e.ID == 0 {
		e.ID = 41
	}
	e.Origin = "owner"
	return e, nil
}

func (g *graphBackend) AddTriple(_ context.Context, t client.TripleInput) (client.Triple, error) {
	g.record("AddTriple %s|%s|%s|%s|%s|%v|%s|%s", t.Subject, t.SubjectKind, t.Predicate, t.Object, t.ObjectKind,
		t.Replaces, t.Scope, t.ValidFrom.Format(time.RFC3339))
	if _, _, _, fail := g.script(); fail != nil {
		return client.Triple{}, fail
	}
	return client.Triple{ID: 7, Subject: 1, SubjectName: t.Subject, Predicate: t.Predicate, Object: 2, ObjectName: t.Object,
		Scope: "private"}, nil
}

func (g *graphBackend) EditTriple(_ context.Context, id int64, t client.TripleInput) (client.Triple, error) {
	g.record("EditTriple %d %s|%s|%s", id, t.Subject, t.Predicate, t.Object)
	if _, _, _, fail := g.script(); fail != nil {
		return client.Triple{}, fail
	}
	return client.Triple{ID: id + 1, SubjectName: t.Subject, Predicate: t.Predicate, ObjectName: t.Object, Sources: []int64{3}}, nil
}

func (g *graphBackend) Pin(_ context.Context, p client.PinRequest) error {
	g.record("Pin %+v", p)
	_, _, _, fail := g.script()
	return fail
}

func (g *graphBackend) MergeEntities(_ context.Context, into, from int64) (client.Entity, error) {
	g.record("MergeEntities %d %d", into, from)
	if _, _, _, fail := g.script(); fail != nil {
		return client.Entity{}, fail
	}
	return client.Entity{ID: into, Name: "merged"}, nil
}

func (g *graphBackend) DeleteEntity(_ context.Context, id int64) error {
	g.record("DeleteEntity %d", id)
	_, _, _, fail := g.script()
	return fail
}

func (g *graphBackend) Forget(_ context.Context, ids []int64) (client.ForgetResult, error) {
	if len(ids) > 3 {
		g.record("Forget %d ids", len(ids))
	} else {
		g.record("Forget %v", ids)
	}
	if _, _, _, fail := g.script(); fail != nil {
		return client.ForgetResult{}, fail
	}
	return client.ForgetResult{Events: len(ids), Triples: 1}, nil
}

func (g *graphBackend) Scenes(context.Context) ([]client.Scene, error) {
	g.record("Scenes")
	scenes, _, _, fail := g.script()
	return scenes, fail
}

func (g *graphBackend) MemoryGC(context.Context) (client.GCReport, error) {
	g.record("MemoryGC")
	if _, _, _, fail := g.script(); fail != nil {
		return client.GCReport{}, fail
	}
	return client.GCReport{Cooled: 2, Distilled: 5, Entities: 3, Triples: 4, Extractor: "rules", Took: 1500 * time.Millisecond}, nil
}

func (g *graphBackend) ExportMemory(_ context.Context, req client.ExportRequest, w io.Writer) error {
	g.record("ExportMemory %+v", req)
	_, export, _, _ := g.script()
	if export == nil {
		_, err := io.WriteString(w, "export:"+req.Format)
		return err
	}
	return export(req, w)
}

func (g *graphBackend) ImportMemory(_ context.Context, format string, r io.Reader) (client.ImportReport, error) {
	if _, _, importFn, _ := g.script(); importFn != nil {
		g.record("ImportMemory %s", format)
		return importFn(format, r)
	}
	b, err := io.ReadAll(r)
	g.record("ImportMemory %s %q", format, b)
	if err != nil {
		return client.ImportReport{}, fmt.Errorf("read import: %w", err)
	}
	return client.ImportReport{Events: len(b)}, nil
}

// routeCase is one request to a memory admin route and what must come of it.
type routeCase struct {
	name, method, path, body string
	want                     int
	wantBody                 string   // decoded JSON equality; "" to skip
	wantMsg                  string   // exact error message; "" to skip
	wantCalls                []string // the backend calls; nil: none
}

func runRouteCases(t *testing.T, sv *served, g *graphBackend, tests []routeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g.take()
			var hdr map[string]string
			if tt.body != "" {
				hdr = map[string]string{"Content-Type": "application/json"}
			}
			resp, body := sv.do(t, tt.method, tt.path, tt.body, hdr)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
			if tt.want == http.StatusNoContent {
				if body != "" {
					t.Errorf("204 with body %q", body)
				}
			} else if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if tt.wantBody != "" {
				assertJSONEqual(t, body, tt.wantBody)
			}
			if tt.wantMsg != "" {
				if e := apiError(t, body); e.Status != tt.want || e.Message != tt.wantMsg {
					t.Errorf("error %+v, want %d %q", e, tt.want, tt.wantMsg)
				}
			}
			if calls := g.take(); strings.Join(calls, "\n") != strings.Join(tt.wantCalls, "\n") {
				t.Errorf("backend calls\n got %q\nwant %q", calls, tt.wantCalls)
			}
		})
	}
}

func TestGraphRoute(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	g := &graphBackend{graph: func(q client.GraphQuery) (client.GraphPage, error) {
		switch q.After {
		case "empty":
			return client.GraphPage{}, nil
		case "cold":
			return client.GraphPage{}, fmt.Errorf("memory is warming up: %w", client.ErrUnavailable)
		case "bad":
			return client.GraphPage{}, fmt.Errorf("cursor %q: %w", q.After, client.ErrInvalid)
		}
		return client.GraphPage{
			Entities: []client.Entity{{ID: 1, Name: "Alice", Kind: "person", Scope: "private", Mentions: 2, Origin: "llm",
				Created: at, Updated: at}},
			Triples: []client.Triple{{ID: 9, Subject: 1, SubjectName: "Alice", Predicate: "lives in", Object: 1, ObjectName: "Alice",
				ValidFrom: at, Scope: "private", Created: at}},
			Next: "1", Total: 3,
		}, nil
	}}
	sv := serveUnix(t, New(g, Options{}), "")
	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return "/api/v1/memory/graph?" + v.Encode()
	}
	zero := `"0001-01-01T00:00:00Z"`
	ts := `"2026-03-04T05:06:07Z"`
	tests := []routeCase{
		{name: "defaults", method: "GET", path: "/api/v1/memory/graph", want: 200,
			wantBody: `{"entities":[{"id":1,"name":"Alice","kind":"person","scope":"private","pinned":false,"mentions":2,"origin":"llm",` +
				`"created":` + ts + `,"updated":` + ts + `,"last_recalled":` + zero + `}],` +
				`"triples":[{"id":9,"subject":1,"subject_name":"Alice","predicate":"lives in","object":1,"object_name":"Alice",` +
				`"valid_from":` + ts + `,"valid_to":` + zero + `,"sources":[],"scope":"private","pinned":false,"created":` + ts + `}],` +
				`"next":"1","total":3}`,
			wantCalls: []string{"Graph {Scope: History:false After: Limit:0 Events:0 Scene:}"}},
		{name: "every parameter", method: "GET", path: q("scope", "group:42", "history", "1", "after", "a b&c", "limit", "10000", "events", "1000", "scene", "chan:qq/peer:group_1"),
			want: 200, wantCalls: []string{"Graph {Scope:group:42 History:true After:a b&c Limit:10000 Events:1000 Scene:chan:qq/peer:group_1}"}},
		{name: "scene empty", method: "GET", path: q("scene", " "), want: 400,
			wantMsg: "scene is empty: give a scene key (GET /api/v1/memory/scenes lists them)"},
		{name: "history true, limit 1, events 0", method: "GET", path: q("history", "true", "limit", "1", "events", "0"), want: 200,
			wantCalls: []string{"Graph {Scope: History:true After: Limit:1 Events:0 Scene:}"}},
		{name: "history false", method: "GET", path: q("history", "FALSE"), want: 200,
			wantCalls: []string{"Graph {Scope: History:false After: Limit:0 Events:0 Scene:}"}},
		{name: "empty page has lists", method: "GET", path: q("after", "empty"), want: 200,
			wantBody: `{"entities":[],"triples":[],"total":0}`, wantCalls: []string{"Graph {Scope: History:false After:empty Limit:0 Events:0 Scene:}"}},
		{name: "history yes", method: "GET", path: q("history", "yes"), want: 400, wantMsg: `history must be 1, true, 0 or false, got "yes"`},
		{name: "limit zero", method: "GET", path: q("limit", "0"), want: 400, wantMsg: `limit must be an integer from 1 to 10000, got "0"`},
		{name: "limit too big", method: "GET", path: q("limit", "10001"), want: 400, wantMsg: `limit must be an integer from 1 to 10000, got "10001"`},
		{name: "limit not a number", method: "GET", path: q("limit", "ten"), want: 400, wantMsg: `limit must be an integer from 1 to 10000, got "ten"`},
		{name: "events negative", method: "GET", path: q("events", "-1"), want: 400, wantMsg: `events must be an integer from 0 to 1000, got "-1"`},
		{name: "events too many", method: "GET", path: q("events", "1001"), want: 400, wantMsg: `events must be an integer from 0 to 1000, got "1001"`},
		{name: "scope unknown", method: "GET", path: q("scope", "friends"), want: 400,
			wantMsg: `scope must be private, public or group:<id>, got "friends"`},
		{name: "scope empty", method: "GET", path: q("scope", ""), want: 400, wantMsg: `scope must be private, public or group:<id>, got ""`},
		{name: "unknown parameter", method: "GET", path: q("k", "3"), want: 400, wantMsg: `unknown query parameter "k"`},
		{name: "parameter twice", method: "GET", path: "/api/v1/memory/graph?limit=1&limit=2", want: 400,
			wantMsg: `query parameter "limit" given 2 times`},
		{name: "warming up", method: "GET", path: q("after", "cold"), want: 503, wantMsg: "memory is warming up: unavailable",
			wantCalls: []string{"Graph {Scope: History:false After:cold Limit:0 Events:0 Scene:}"}},
		{name: "bad cursor", method: "GET", path: q("after", "bad"), want: 400, wantMsg: `cursor "bad": invalid request`,
			wantCalls: []string{"Graph {Scope: History:false After:bad Limit:0 Events:0 Scene:}"}},
		{name: "wrong method", method: "POST", path: "/api/v1/memory/graph", want: 405,
			wantMsg: "method POST not allowed on /api/v1/memory/graph"},
	}
	runRouteCases(t, sv, g, tests)
}

func TestEventContextRoute(t *testing.T) {
	g := &graphBackend{}
	sv := serveUnix(t, New(g, Options{}), "")
	zero := `"0001-01-01T00:00:00Z"`
	tests := []routeCase{
		{name: "default radius", method: "GET", path: "/api/v1/memory/events/7", want: 200,
			wantBody: `{"events":[{"id":6,"session":"s","time":` + zero + `,"role":"user","scope":"private","layer":2,"content":"before","score":0,"reason":""},` +
				`{"id":7,"session":"s","time":` + zero + `,"role":"assistant","scope":"private","layer":2,"content":"the source","score":0,"reason":""}]}`,
			wantCalls: []string{"EventContext 7 0"}},
		{name: "radius", method: "GET", path: "/api/v1/memory/events/7?radius=20", want: 200, wantCalls: []string{"EventContext 7 20"}},
		{name: "radius too big", method: "GET", path: "/api/v1/memory/events/7?radius=21", want: 400,
			wantMsg: `radius must be an integer from 0 to 20, got "21"`},
		{name: "radius not a number", method: "GET", path: "/api/v1/memory/events/7?radius=x", want: 400,
			wantMsg: `radius must be an integer from 0 to 20, got "x"`},
		{name: "unknown parameter", method: "GET", path: "/api/v1/memory/events/7?k=1", want: 400, wantMsg: `unknown query parameter "k"`},
		{name: "bad id", method: "GET", path: "/api/v1/memory/events/x", want: 400},
		{name: "unknown event", method: "GET", path: "/api/v1/memory/events/404", want: 404, wantMsg: "event 404: not found",
			wantCalls: []string{"EventContext 404 0"}},
	}
	runRouteCases(t, sv, g, tests)
}

func TestEntityRoutes(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	g := &graphBackend{entity: func(id int64) (client.EntityDetail, error) {
		switch id {
		case 404:
			return client.EntityDetail{}, fmt.Errorf("entity %d: %w", id, client.ErrNotFound)
		case 2:
			return client.EntityDetail{Entity: client.Entity{ID: 2, Name: "Bob"}}, nil
		}
		return client.EntityDetail{
			Entity:  client.Entity{ID: id, Name: "Alice", Kind: "person", Scope: "private", Created: at, Updated: at, LastRecalled: at},
			Triples: []client.Triple{{ID: 5, Subject: id, Predicate: "likes", Object: 2, Sources: []int64{8, 9}, SupersededBy: 6, ValidTo: at}},
			Blocks:  []client.Block{{ID: "b1", Kind: "text", Text: "note", Size: 4, Scope: "private", HolderLayer: 3, HolderEntity: id}},
		}, nil
	}}
	sv := serveUnix(t, New(g, Options{}), "")
	ts := `"2026-03-04T05:06:07Z"`
	tests := []routeCase{
		{name: "detail", method: "GET", path: "/api/v1/memory/entities/1", want: 200,
			wantBody: `{"entity":{"id":1,"name":"Alice","kind":"person","scope":"private","pinned":false,"mentions":0,` +
				`"created":` + ts + `,"updated":` + ts + `,"last_recalled":` + ts + `},` +
				`"triples":[{"id":5,"subject":1,"subject_name":"","predicate":"likes","object":2,"object_name":"",` +
				`"valid_from":"0001-01-01T00:00:00Z","valid_to":` + ts + `,"sources":[8,9],"scope":"","pinned":false,"superseded_by":6,` +
				`"created":"0001-01-01T00:00:00Z"}],` +
				`"blocks":[{"id":"b1","kind":"text","text":"note","size":4,"scope":"private","holder_layer":3,"holder_entity":1}]}`,
			wantCalls: []string{"Entity 1"}},
		{name: "detail without triples or blocks has lists", method: "GET", path: "/api/v1/memory/entities/2", want: 200,
			wantBody: `{"entity":{"id":2,"name":"Bob","kind":"","scope":"","pinned":false,"mentions":0,"created":"0001-01-01T00:00:00Z",` +
				`"updated":"0001-01-01T00:00:00Z","last_recalled":"0001-01-01T00:00:00Z"},"triples":[],"blocks":[]}`,
			wantCalls: []string{"Entity 2"}},
		{name: "unknown entity", method: "GET", path: "/api/v1/memory/entities/404", want: 404, wantMsg: "entity 404: not found",
			wantCalls: []string{"Entity 404"}},
		{name: "id zero", method: "GET", path: "/api/v1/memory/entities/0", want: 400, wantMsg: `entity id must be a positive integer, got "0"`},
		{name: "id negative", method: "GET", path: "/api/v1/memory/entities/-3", want: 400, wantMsg: `entity id must be a positive integer, got "-3"`},
		{name: "id not a number", method: "GET", path: "/api/v1/memory/entities/alice", want: 400,
			wantMsg: `entity id must be a positive integer, got "alice"`},
		{name: "id overflows", method: "GET", path: "/api/v1/memory/entities/9223372036854775808", want: 400,
			wantMsg: `entity id must be a positive integer, got "9223372036854775808"`},
		{name: "detail takes no query", method: "GET", path: "/api/v1/memory/entities/1?history=1", want: 400,
			wantMsg: `unknown query parameter "history"`},

		{name: "create", method: "POST", path: "/api/v1/memory/entities", body: `{"name":"Carol","kind":"person","text":"喜欢咖啡","scope":"group:7"}`,
			want: 201, wantBody: `{"id":41,"name":"Carol","kind":"person","text":"喜欢咖啡","scope":"group:7","pinned":false,"mentions":0,` +
				`"origin":"owner","created":"0001-01-01T00:00:00Z","updated":"0001-01-01T00:00:00Z","last_recalled":"0001-01-01T00:00:00Z"}`,
			wantCalls: []string{"PutEntity {ID:0 Name:Carol Kind:person Text:喜欢咖啡 Scope:group:7 Pinned:false Mentions:0 Origin: " +
				"Created:0001-01-01 00:00:00 +0000 UTC Updated:0001-01-01 00:00:00 +0000 UTC LastRecalled:0001-01-01 00:00:00 +0000 UTC}"}},
		{name: "create ignores read-only fields", method: "POST", path: "/api/v1/memory/entities",
			body: `{"id":0,"name":"Dan","pinned":true,"mentions":9,"origin":"llm","created":"2026-01-01T00:00:00Z"}`, want: 201,
			wantCalls: []string{"PutEntity {ID:0 Name:Dan Kind: Text: Scope: Pinned:false Mentions:0 Origin: " +
				"Created:0001-01-01 00:00:00 +0000 UTC Updated:0001-01-01 00:00:00 +0000 UTC LastRecalled:0001-01-01 00:00:00 +0000 UTC}"}},
		{name: "create with an id", method: "POST", path: "/api/v1/memory/entities", body: `{"id":3,"name":"Dan"}`, want: 400,
			wantMsg: "a new entity has no id (got 3): edit one with PUT /api/v1/memory/entities/{id}"},
		{name: "create without name", method: "POST", path: "/api/v1/memory/entities", body: `{"kind":"person"}`, want: 400,
			wantMsg: "entity name is empty"},
		{name: "create with blank name", method: "POST", path: "/api/v1/memory/entities", body: `{"name":" \t"}`, want: 400,
			wantMsg: "entity name is empty"},
		{name: "create with bad scope", method: "POST", path: "/api/v1/memory/entities", body: `{"name":"x","scope":"group:"}`, want: 400,
			wantMsg: `scope must be private, public or group:<id>, got "group:"`},
		{name: "create with unknown field", method: "POST", path: "/api/v1/memory/entities", body: `{"name":"x","aliases":["y"]}`, want: 400,
			wantMsg: `unknown field "aliases"`},
		{name: "create without body", method: "POST", path: "/api/v1/memory/entities", want: 400, wantMsg: "request body is empty"},
		{name: "create refused by the backend", method: "POST", path: "/api/v1/memory/entities", body: `{"name":"dup"}`, want: 409,
			wantMsg: `entity "dup" exists`, wantCalls: []string{"PutEntity {ID:0 Name:dup Kind: Text: Scope: Pinned:false Mentions:0 Origin: " +
				"Created:0001-01-01 00:00:00 +0000 UTC Updated:0001-01-01 00:00:00 +0000 UTC LastRecalled:0001-01-01 00:00:00 +0000 UTC}"}},

		{name: "edit", method: "PUT", path: "/api/v1/memory/entities/12", body: `{"name":"Alice B.","kind":"person","text":"t","scope":"public"}`,
			want: 200, wantCalls: []string{"PutEntity {ID:12 Name:Alice B. Kind:person Text:t Scope:public Pinned:false Mentions:0 Origin: " +
				"Created:0001-01-01 00:00:00 +0000 UTC Updated:0001-01-01 00:00:00 +0000 UTC LastRecalled:0001-01-01 00:00:00 +0000 UTC}"}},
		{name: "edit with the same id in the body", method: "PUT", path: "/api/v1/memory/entities/12", body: `{"id":12,"name":"A"}`, want: 200,
			wantCalls: []string{"PutEntity {ID:12 Name:A Kind: Text: Scope: Pinned:false Mentions:0 Origin: " +
				"Created:0001-01-01 00:00:00 +0000 UTC Updated:0001-01-01 00:00:00 +0000 UTC LastRecalled:0001-01-01 00:00:00 +0000 UTC}"}},
		{name: "edit with another id in the body", method: "PUT", path: "/api/v1/memory/entities/12", body: `{"id":13,"name":"A"}`, want: 400,
			wantMsg: "body id 13 differs from the path's 12"},
		{name: "edit with a bad id", method: "PUT", path: "/api/v1/memory/entities/x", body: `{"name":"A"}`, want: 400,
			wantMsg: `entity id must be a positive integer, got "x"`},
		{name: "edit without name", method: "PUT", path: "/api/v1/memory/entities/12", body: `{"kind":"place"}`, want: 400,
			wantMsg: "entity name is empty"},

		{name: "delete", method: "DELETE", path: "/api/v1/memory/entities/12", want: 204, wantCalls: []string{"DeleteEntity 12"}},
		{name: "delete with a bad id", method: "DELETE", path: "/api/v1/memory/entities/1e3", want: 400,
			wantMsg: `entity id must be a positive integer, got "1e3"`},

		{name: "merge", method: "POST", path: "/api/v1/memory/entities/3/merge", body: `{"from":4}`, want: 200,
			wantBody: `{"id":3,"name":"merged","kind":"","scope":"","pinned":false,"mentions":0,"created":"0001-01-01T00:00:00Z",` +
				`"updated":"0001-01-01T00:00:00Z","last_recalled":"0001-01-01T00:00:00Z"}`,
			wantCalls: []string{"MergeEntities 3 4"}},
		{name: "merge into itself", method: "POST", path: "/api/v1/memory/entities/3/merge", body: `{"from":3}`, want: 400,
			wantMsg: "cannot merge entity 3 into itself"},
		{name: "merge without from", method: "POST", path: "/api/v1/memory/entities/3/merge", body: `{}`, want: 400,
			wantMsg: "from must be a positive entity id, got 0"},
		{name: "merge from a string", method: "POST", path: "/api/v1/memory/entities/3/merge", body: `{"from":"4"}`, want: 400,
			wantMsg: `field "from": cannot use JSON string as int64`},
		{name: "merge with a bad id", method: "POST", path: "/api/v1/memory/entities/0/merge", body: `{"from":4}`, want: 400,
			wantMsg: `entity id must be a positive integer, got "0"`},
		{name: "wrong method", method: "PATCH", path: "/api/v1/memory/entities/3", want: 405,
			wantMsg: "method PATCH not allowed on /api/v1/memory/entities/3"},
	}
	runRouteCases(t, sv, g, tests)
}

func TestTripleAndPinRoutes(t *testing.T) {
	g := &graphBackend{}
	sv := serveUnix(t, New(g, Options{}), "")
	tests := []routeCase{
		{name: "add", method: "POST", path: "/api/v1/memory/triples",
			body: `{"subject":"Alice","subject_kind":"person","predicate":"lives in","object":"巴黎","object_kind":"place",` +
				`"valid_from":"2026-01-02T03:04:05Z","replaces":true,"scope":"group:1"}`, want: 201,
			wantBody: `{"id":7,"subject":1,"subject_name":"Alice","predicate":"lives in","object":2,"object_name":"巴黎",` +
				`"valid_from":"0001-01-01T00:00:00Z","valid_to":"0001-01-01T00:00:00Z","sources":[],"scope":"private","pinned":false,` +
				`"created":"0001-01-01T00:00:00Z"}`,
			wantCalls: []string{"AddTriple Alice|person|lives in|巴黎|place|true|group:1|2026-01-02T03:04:05Z"}},
		{name: "add without subject", method: "POST", path: "/api/v1/memory/triples", body: `{"predicate":"p","object":"o"}`, want: 400,
			wantMsg: "triple subject is empty"},
		{name: "add with blank predicate", method: "POST", path: "/api/v1/memory/triples", body: `{"subject":"s","predicate":" ","object":"o"}`,
			want: 400, wantMsg: "triple predicate is empty"},
		{name: "add without object", method: "POST", path: "/api/v1/memory/triples", body: `{"subject":"s","predicate":"p"}`, want: 400,
			wantMsg: "triple object is empty"},
		{name: "add with bad scope", method: "POST", path: "/api/v1/memory/triples", body: `{"subject":"s","predicate":"p","object":"o","scope":"all"}`,
			want: 400, wantMsg: `scope must be private, public or group:<id>, got "all"`},
		{name: "add with bad time", method: "POST", path: "/api/v1/memory/triples", body: `{"subject":"s","predicate":"p","object":"o","valid_from":"yesterday"}`,
			want: 400},
		{name: "add with unknown field", method: "POST", path: "/api/v1/memory/triples", body: `{"subject":"s","predicate":"p","object":"o","sources":[1]}`,
			want: 400, wantMsg: `unknown field "sources"`},
		{name: "edit", method: "PUT", path: "/api/v1/memory/triples/7", body: `{"subject":"Alice","predicate":"lives in","object":"Berlin"}`,
			want: 200, wantBody: `{"id":8,"subject":0,"subject_name":"Alice","predicate":"lives in","object":0,"object_name":"Berlin",` +
				`"valid_from":"0001-01-01T00:00:00Z","valid_to":"0001-01-01T00:00:00Z","sources":[3],"scope":"","pinned":false,` +
				`"created":"0001-01-01T00:00:00Z"}`,
			wantCalls: []string{"EditTriple 7 Alice|lives in|Berlin"}},
		{name: "edit with a bad id", method: "PUT", path: "/api/v1/memory/triples/-7", body: `{"subject":"a","predicate":"b","object":"c"}`,
			want: 400, wantMsg: `triple id must be a positive integer, got "-7"`},
		{name: "edit without object", method: "PUT", path: "/api/v1/memory/triples/7", body: `{"subject":"a","predicate":"b"}`,
			want: 400, wantMsg: "triple object is empty"},

		{name: "pin entity", method: "POST", path: "/api/v1/memory/pin", body: `{"kind":"entity","id":3,"pinned":true}`, want: 204,
			wantCalls: []string{"Pin {Kind:entity ID:3 Block: Entity:0 Pinned:true}"}},
		{name: "unpin triple", method: "POST", path: "/api/v1/memory/pin", body: `{"kind":"triple","id":9,"pinned":false}`, want: 204,
			wantCalls: []string{"Pin {Kind:triple ID:9 Block: Entity:0 Pinned:false}"}},
		{name: "pin block to an entity", method: "POST", path: "/api/v1/memory/pin", body: `{"kind":"block","block":"ab12","entity":3,"pinned":true}`,
			want: 204, wantCalls: []string{"Pin {Kind:block ID:0 Block:ab12 Entity:3 Pinned:true}"}},
		{name: "pin block as a note", method: "POST", path: "/api/v1/memory/pin", body: `{"kind":"block","block":"ab12","pinned":true}`,
			want: 204, wantCalls: []string{"Pin {Kind:block ID:0 Block:ab12 Entity:0 Pinned:true}"}},
		{name: "pin unknown kind", method: "POST", path: "/api/v1/memory/pin", body: `{"kind":"scene","id":3,"pinned":true}`, want: 400,
			wantMsg: `pin kind must be entity, triple or block, got "scene"`},
		{name: "pin without kind", method: "POST", path: "/api/v1/memory/pin", body: `{"id":3}`, want: 400,
			wantMsg: `pin kind must be entity, triple or block, got ""`},
		{name: "pin entity without id", method: "POST", path: "/api/v1/memory/pin", body: `{"kind":"entity","pinned":true}`, want: 400,
			wantMsg: "pin entity: id must be a positive integer, got 0"},
		{name: "pin triple with a block", method: "POST", path: "/api/v1/memory/pin", body: `{"kind":"triple","id":2,"block":"b"}`, want: 400,
			wantMsg: "pin triple: block and entity are for pinning a block"},
		{name: "pin block without block", method: "POST", path: "/api/v1/memory/pin", body: `{"kind":"block","entity":3}`, want: 400,
			wantMsg: "pin block: block is empty"},
		{name: "pin block by id", method: "POST", path: "/api/v1/memory/pin", body: `{"kind":"block","block":"b","id":3}`, want: 400,
			wantMsg: "pin block: give the block's id in block, not id"},
		{name: "pin block to a negative entity", method: "POST", path: "/api/v1/memory/pin", body: `{"kind":"block","block":"b","entity":-1}`,
			want: 400, wantMsg: "pin block: entity must be a positive id (or absent for a new note), got -1"},
		{name: "pin with unknown field", method: "POST", path: "/api/v1/memory/pin", body: `{"kind":"entity","id":1,"why":"x"}`, want: 400,
			wantMsg: `unknown field "why"`},
	}
	runRouteCases(t, sv, g, tests)
}

func TestForgetScenesAndGCRoutes(t *testing.T) {
	seen := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	g := &graphBackend{}
	sv := serveUnix(t, New(g, Options{}), "")
	many := make([]string, client.MaxForgetEvents+1)
	for i := range many {
		many[i] = strconv.Itoa(i + 1)
	}
	most := strings.Join(many[:client.MaxForgetEvents], ",")
	tests := []routeCase{
		{name: "forget", method: "POST", path: "/api/v1/memory/forget", body: `{"events":[3,4]}`, want: 200,
			wantBody: `{"events":2,"blocks":0,"triples":1,"trimmed":0,"entities":0}`, wantCalls: []string{"Forget [3 4]"}},
		{name: "forget the most ids", method: "POST", path: "/api/v1/memory/forget", body: `{"events":[` + most + `]}`, want: 200,
			wantCalls: []string{"Forget 10000 ids"}},
		{name: "forget too many ids", method: "POST", path: "/api/v1/memory/forget", body: `{"events":[` + strings.Join(many, ",") + `]}`,
			want: 400, wantMsg: "events must hold 1 to 10000 event ids, got 10001"},
		{name: "forget nothing", method: "POST", path: "/api/v1/memory/forget", body: `{"events":[]}`, want: 400,
			wantMsg: "events must hold 1 to 10000 event ids, got 0"},
		{name: "forget without events", method: "POST", path: "/api/v1/memory/forget", body: `{}`, want: 400,
			wantMsg: "events must hold 1 to 10000 event ids, got 0"},
		{name: "forget id zero", method: "POST", path: "/api/v1/memory/forget", body: `{"events":[1,0]}`, want: 400,
			wantMsg: "event ids must be positive integers, got 0"},
		{name: "forget string ids", method: "POST", path: "/api/v1/memory/forget", body: `{"events":["1"]}`, want: 400},
		{name: "gc", method: "POST", path: "/api/v1/memory/gc", want: 200,
			wantBody:  `{"cooled":2,"distilled":5,"entities":3,"triples":4,"confirmed":0,"superseded":0,"extractor":"rules","decayed":0,"took":1500000000}`,
			wantCalls: []string{"MemoryGC"}},
		{name: "gc with a body", method: "POST", path: "/api/v1/memory/gc", body: `{"now":true}`, want: 400, wantMsg: "memory gc takes no body"},
		{name: "gc by GET", method: "GET", path: "/api/v1/memory/gc", want: 405, wantMsg: "method GET not allowed on /api/v1/memory/gc"},
		{name: "no scenes is []", method: "GET", path: "/api/v1/memory/scenes", want: 200, wantBody: `{"scenes":[]}`, wantCalls: []string{"Scenes"}},
		{name: "scenes take no query", method: "GET", path: "/api/v1/memory/scenes?limit=1", want: 400, wantMsg: `unknown query parameter "limit"`},
	}
	runRouteCases(t, sv, g, tests)

	g.set(func() {
		g.scenes = []client.Scene{{ID: 1, Key: "chan:qq/peer:group_1", Declared: true, Features: map[string]float64{"channel:qq": 1, "partner:group_1": 1},
			Strength: 2.5, Occurrences: 3, Seen: seen},
			{ID: 2, Key: "s2", Strength: 1, Occurrences: 2, Seen: seen}}
	})
	runRouteCases(t, sv, g, []routeCase{{name: "scenes", method: "GET", path: "/api/v1/memory/scenes", want: 200,
		wantBody: `{"scenes":[{"id":1,"key":"chan:qq/peer:group_1","declared":true,"features":{"channel:qq":1,"partner:group_1":1},` +
			`"strength":2.5,"occurrences":3,"seen":"2026-03-04T05:06:07Z"},` +
			`{"id":2,"key":"s2","declared":false,"features":{},"strength":1,"occurrences":2,"seen":"2026-03-04T05:06:07Z"}]}`,
		wantCalls: []string{"Scenes"}}})

	g.set(func() { g.fail = fmt.Errorf("event 99: %w", client.ErrNotFound) })
	runRouteCases(t, sv, g, []routeCase{
		{name: "forget unknown", method: "POST", path: "/api/v1/memory/forget", body: `{"events":[99]}`, want: 404,
			wantMsg: "event 99: not found", wantCalls: []string{"Forget [99]"}},
		{name: "gc failing", method: "POST", path: "/api/v1/memory/gc", want: 404, wantMsg: "event 99: not found", wantCalls: []string{"MemoryGC"}},
	})
}

func TestExportRoute(t *testing.T) {
	g := &graphBackend{}
	sv := serveUnix(t, New(g, Options{}), "")
	tests := []struct {
		name, path     string
		export         func(req client.ExportRequest, w io.Writer) error
		want           int
		wantType       string
		wantFile       string
		wantBody       string // exact body on success
		wantMsg        string // exact error message on failure
		wantCall       string // "" when the backend must not be called
		wantBrokenRead bool   // the answer starts but the body cannot be read to its end
	}{
		{name: "default is json", path: "/api/v1/memory/export", want: 200, wantType: "application/json",
			wantFile: "hologram-memory.json", wantBody: "export:json", wantCall: "ExportMemory {Format:json IncludeSecrets:false}"},
		{name: "json with secrets", path: "/api/v1/memory/export?format=json&include_secrets=1", want: 200, wantType: "application/json",
			wantFile: "hologram-memory.json", wantBody: "export:json", wantCall: "ExportMemory {Format:json IncludeSecrets:true}"},
		{name: "jsonl", path: "/api/v1/memory/export?format=jsonl", want: 200, wantType: "application/x-ndjson",
			wantFile: "hologram-memory.jsonl", wantBody: "export:jsonl", wantCall: "ExportMemory {Format:jsonl IncludeSecrets:false}"},
		{name: "markdown", path: "/api/v1/memory/export?format=markdown&include_secrets=false", want: 200, wantType: "application/x-tar",
			wantFile: "hologram-memory.tar", wantBody: "export:markdown", wantCall: "ExportMemory {Format:markdown IncludeSecrets:false}"},
		{name: "an empty export is a 200", path: "/api/v1/memory/export?format=jsonl",
			export: func(client.ExportRequest, io.Writer) error { return nil },
			want:   200, wantType: "application/x-ndjson", wantFile: "hologram-memory.jsonl", wantBody: "",
			wantCall: "ExportMemory {Format:jsonl IncludeSecrets:false}"},
		{name: "a large export streams whole", path: "/api/v1/memory/export",
			export: func(_ client.ExportRequest, w io.Writer) error {
				for range 1000 {
					if _, err := io.WriteString(w, strings.Repeat("x", 1023)+"\n"); err != nil {
						return err
					}
				}
				return nil
			},
			want: 200, wantType: "application/json", wantFile: "hologram-memory.json", wantBody: strings.Repeat(strings.Repeat("x", 1023)+"\n", 1000),
			wantCall: "ExportMemory {Format:json IncludeSecrets:false}"},
		{name: "unknown format", path: "/api/v1/memory/export?format=csv", want: 400, wantMsg: `format must be json, jsonl or markdown, got "csv"`},
		{name: "secrets outside json", path: "/api/v1/memory/export?format=jsonl&include_secrets=true", want: 400,
			wantMsg: "include_secrets is only for the json format"},
		{name: "bad include_secrets", path: "/api/v1/memory/export?include_secrets=please", want: 400,
			wantMsg: `include_secrets must be 1, true, 0 or false, got "please"`},
		{name: "unknown parameter", path: "/api/v1/memory/export?scope=public", want: 400, wantMsg: `unknown query parameter "scope"`},
		{name: "failure before the first byte is a JSON error", path: "/api/v1/memory/export",
			export: func(client.ExportRequest, io.Writer) error {
				return fmt.Errorf("memory is warming up: %w", client.ErrUnavailable)
			},
			want: 503, wantMsg: "memory is warming up: unavailable", wantCall: "ExportMemory {Format:json IncludeSecrets:false}"},
		{name: "failure after the first byte breaks the answer", path: "/api/v1/memory/export",
			export: func(_ client.ExportRequest, w io.Writer) error {
				if _, err := io.WriteString(w, `{"sessions":[`); err != nil {
					return err
				}
				return errors.New("disk read error")
			},
			want: 200, wantType: "application/json", wantFile: "hologram-memory.json", wantBrokenRead: true,
			wantCall: "ExportMemory {Format:json IncludeSecrets:false}"},
		{name: "failure after a flushed part breaks the body", path: "/api/v1/memory/export?format=jsonl",
			export: func(_ client.ExportRequest, w io.Writer) error {
				if _, err := io.WriteString(w, strings.Repeat("y", 64<<10)); err != nil {
					return err
				}
				return errors.New("disk read error")
			},
			want: 200, wantType: "application/x-ndjson", wantFile: "hologram-memory.jsonl", wantBrokenRead: true,
			wantCall: "ExportMemory {Format:jsonl IncludeSecrets:false}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g.set(func() { g.export = tt.export })
			g.take()
			req, err := http.NewRequest("GET", sv.base+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := sv.client.Do(req)
			if err != nil {
				if tt.wantBrokenRead {
					// The aborted answer had not been flushed yet: the client sees no answer at all.
					return
				}
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, readErr := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.want, b)
			}
			if tt.wantBrokenRead {
				if readErr == nil {
					t.Fatalf("a broken export read to its end without error: %d bytes, %v, %q", len(b), readErr, resp.TransferEncoding)
				}
			} else if readErr != nil {
				t.Fatalf("read body: %v", readErr)
			}
			if tt.want == 200 {
				if ct := resp.Header.Get("Content-Type"); ct != tt.wantType {
					t.Errorf("Content-Type %q, want %q", ct, tt.wantType)
				}
				if cd, want := resp.Header.Get("Content-Disposition"), `attachment; filename="`+tt.wantFile+`"`; cd != want {
					t.Errorf("Content-Disposition %q, want %q", cd, want)
				}
				if !tt.wantBrokenRead && string(b) != tt.wantBody {
					t.Errorf("body %d bytes %.40q, want %d bytes %.40q", len(b), b, len(tt.wantBody), tt.wantBody)
				}
			} else if e := apiError(t, string(b)); e.Message != tt.wantMsg {
				t.Errorf("error %q, want %q", e.Message, tt.wantMsg)
			}
			calls := g.take()
			if tt.wantCall == "" && len(calls) > 0 || tt.wantCall != "" && (len(calls) != 1 || calls[0] != tt.wantCall) {
				t.Errorf("backend calls %q, want %q", calls, tt.wantCall)
			}
		})
	}
}

func TestImportRoute(t *testing.T) {
	g := &graphBackend{}
	// A tiny general body limit: the import route has its own.
	sv := serveUnix(t, New(g, Options{MaxBodyBytes: 16}), "")
	big := strings.Repeat(`{"type":"entity","name":"x","entityType":"t","observations":[]}`+"\n", 100)
	tests := []routeCase{
		{name: "default is json", method: "POST", path: "/api/v1/memory/import", body: `{"version":1}`, want: 200,
			wantBody:  `{"sessions":0,"events":13,"blocks":0,"entities":0,"triples":0,"scenes":0,"settings":0,"skipped":0}`,
			wantCalls: []string{`ImportMemory json "{\"version\":1}"`}},
		{name: "jsonl beyond the general body limit", method: "POST", path: "/api/v1/memory/import?format=jsonl", body: big, want: 200,
			wantCalls: []string{fmt.Sprintf("ImportMemory jsonl %q", big)}},
		{name: "markdown is export only", method: "POST", path: "/api/v1/memory/import?format=markdown", body: "x", want: 400,
			wantMsg: "markdown is an export format only: import json, jsonl, chatgpt or openwebui"},
		{name: "unknown format", method: "POST", path: "/api/v1/memory/import?format=yaml", body: "x", want: 400,
			wantMsg: `format must be json, jsonl, chatgpt or openwebui, got "yaml"`},
		{name: "unknown parameter", method: "POST", path: "/api/v1/memory/import?merge=1", body: "x", want: 400,
			wantMsg: `unknown query parameter "merge"`},
		{name: "import by GET", method: "GET", path: "/api/v1/memory/import", want: 405,
			wantMsg: "method GET not allowed on /api/v1/memory/import"},
	}
	runRouteCases(t, sv, g, tests)

	t.Run("backend errors", func(t *testing.T) {
		g.set(func() {
			g.importFn = func(string, io.Reader) (client.ImportReport, error) {
				return client.ImportReport{}, fmt.Errorf("import json: memory is not empty: %w", client.ErrInvalid)
			}
		})
		t.Cleanup(func() { g.set(func() { g.importFn = nil }) })
		runRouteCases(t, sv, g, []routeCase{{name: "not empty", method: "POST", path: "/api/v1/memory/import", body: "{}", want: 400,
			wantMsg: "import json: memory is not empty: invalid request", wantCalls: []string{"ImportMemory json"}}})
	})
	t.Run("too large", func(t *testing.T) {
		old := importLimit.Swap(64)
		t.Cleanup(func() { importLimit.Store(old) })
		runRouteCases(t, sv, g, []routeCase{
			{name: "at the limit", method: "POST", path: "/api/v1/memory/import", body: strings.Repeat("a", 64), want: 200,
				wantCalls: []string{fmt.Sprintf("ImportMemory json %q", strings.Repeat("a", 64))}},
			{name: "over the limit", method: "POST", path: "/api/v1/memory/import", body: strings.Repeat("a", 65), want: 413,
				wantMsg: "import is larger than 64 bytes", wantCalls: []string{fmt.Sprintf("ImportMemory json %q", strings.Repeat("a", 64))}},
		})
	})
}

func TestGraphRoutesNeedTheToken(t *testing.T) {
	g := &graphBackend{}
	sv := serveTCP(t, New(g, Options{Token: "s3cret"}), nil, nil)
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/v1/memory/graph"}, {"GET", "/api/v1/memory/export"}, {"POST", "/api/v1/memory/forget"},
		{"POST", "/api/v1/memory/import"}, {"DELETE", "/api/v1/memory/entities/1"},
	} {
		resp, body := sv.do(t, r.method, r.path, "", nil)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s without a token: %d %s", r.method, r.path, resp.StatusCode, body)
		}
	}
	if calls := g.take(); len(calls) > 0 {
		t.Errorf("unauthorized requests reached the backend: %q", calls)
	}
	resp, body := sv.do(t, "GET", "/api/v1/memory/graph", "", map[string]string{"Authorization": "Bearer s3cret"})
	if resp.StatusCode != 200 {
		t.Fatalf("with the token: %d %s", resp.StatusCode, body)
	}
}

func (f *fakeBackend) Thumbnail(_ context.Context, block string) ([]byte, error) {
	if f.thumbnail != nil {
		return f.thumbnail(block)
	}
	return nil, client.ErrNotFound
}
