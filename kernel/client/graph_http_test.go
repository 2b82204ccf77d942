package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/api"
	"github.com/hologramagent/hologram/kernel/client"
)

// adminBackend is an api.Backend whose memory admin methods record what reached them and answer
// what the test set; every other method is left to the nil embedded interfaces (and panics).
type adminBackend struct {
	client.Service
	client.CompletionService

	mu    sync.Mutex
	calls []any // the argument(s) of each call, in order

	page   client.GraphPage
	detail client.EntityDetail
	scenes []client.Scene
	gc     client.GCReport
	export func(req client.ExportRequest, w io.Writer) error
}

func (b *adminBackend) record(args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(args) == 1 {
		b.calls = append(b.calls, args[0])
	} else {
		b.calls = append(b.calls, args)
	}
}

// take returns the calls recorded since the last take.
func (b *adminBackend) take() []any {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.calls
	b.calls = nil
	return c
}

func (b *adminBackend) Graph(_ context.Context, q client.GraphQuery) (client.GraphPage, error) {
	b.record(q)
	return b.page, nil
}

func (b *adminBackend) Entity(_ context.Context, id int64) (client.EntityDetail, error) {
	b.record(id)
	if id == 404 {
		return client.EntityDetail{}, fmt.Errorf("entity %d: %w", id, client.ErrNotFound)
	}
	return b.detail, nil
}

func (b *adminBackend) PutEntity(_ context.Context, e client.Entity) (client.Entity, error) {
	b.record(e)
	if e.ID == 0 {
		e.ID = 21
	}
	e.Origin, e.Mentions = "owner", 1
	return e, nil
}

func (b *adminBackend) AddTriple(_ context.Context, t client.TripleInput) (client.Triple, error) {
	b.record(t)
	return client.Triple{ID: 5, SubjectName: t.Subject, Predicate: t.Predicate, ObjectName: t.Object, ValidFrom: t.ValidFrom,
		Sources: []int64{}, Scope: t.Scope}, nil
}

func (b *adminBackend) EditTriple(_ context.Context, id int64, t client.TripleInput) (client.Triple, error) {
	b.record(id, t)
	return client.Triple{ID: id + 1, SubjectName: t.Subject, Predicate: t.Predicate, ObjectName: t.Object, Sources: []int64{8}}, nil
}

func (b *adminBackend) Pin(_ context.Context, p client.PinRequest) error {
	b.record(p)
	return nil
}

func (b *adminBackend) MergeEntities(_ context.Context, into, from int64) (client.Entity, error) {
	b.record(into, from)
	return client.Entity{ID: into, Name: "merged"}, nil
}

func (b *adminBackend) DeleteEntity(_ context.Context, id int64) error {
	b.record(id)
	return nil
}

func (b *adminBackend) Forget(_ context.Context, ids []int64) (client.ForgetResult, error) {
	b.record(ids)
	return client.ForgetResult{Events: len(ids), Blocks: 1, Triples: 2, Trimmed: 3, Entities: 4}, nil
}

func (b *adminBackend) Scenes(context.Context) ([]client.Scene, error) {
	b.record("scenes")
	return b.scenes, nil
}

func (b *adminBackend) MemoryGC(context.Context) (client.GCReport, error) {
	b.record("gc")
	return b.gc, nil
}

func (b *adminBackend) ExportMemory(_ context.Context, req client.ExportRequest, w io.Writer) error {
	b.record(req)
	b.mu.Lock()
	export := b.export
	b.mu.Unlock()
	return export(req, w)
}

// setExport scripts ExportMemory; a handler of an earlier request may still be running.
func (b *adminBackend) setExport(fn func(req client.ExportRequest, w io.Writer) error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.export = fn
}

func (b *adminBackend) ImportMemory(_ context.Context, format string, r io.Reader) (client.ImportReport, error) {
	data, err := io.ReadAll(r)
	b.record(format, string(data))
	if err != nil {
		return client.ImportReport{}, fmt.Errorf("read import: %w", err)
	}
	return client.ImportReport{Entities: strings.Count(string(data), "\n"), Skipped: 1}, nil
}

// serveAPI serves b through the real API server on a unix socket and dials it.
func serveAPI(t *testing.T, b api.Backend) *client.HTTP {
	t.Helper()
	dir, err := os.MkdirTemp("", "g")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "run", "k.sock")
	srv := api.New(b, api.Options{})
	ln, err := srv.ListenUnix(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeUnixListener(ctx, ln) }()
	c, err := client.Dial(client.Options{Socket: sock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		os.RemoveAll(dir)
	})
	return c
}

func TestMemoryAdminOverAPI(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 4, 5, 6, 7, 8, 0, time.UTC)
	b := &adminBackend{
		page: client.GraphPage{
			Entities: []client.Entity{{ID: 1, Name: "Alice", Kind: "person", Text: "喜欢咖啡", Scope: "group:1", Pinned: true, Mentions: 3,
				Origin: "llm", Created: at, Updated: at, LastRecalled: at}},
			Triples: []client.Triple{{ID: 2, Subject: 1, SubjectName: "Alice", Predicate: "likes", Object: 1, ObjectName: "Alice",
				ValidFrom: at, ValidTo: at, Sources: []int64{7}, Scope: "group:1", SupersededBy: 3, Origin: "rules", Created: at}},
			Events: []client.GraphEvt{{ID: 7, Time: at, Session: "qq", Role: "user", Partner: "bob", Content: "hi", Scope: "group:1",
				Triples: []int64{2}}},
			Next: "1", Total: 9,
		},
		detail: client.EntityDetail{
			Entity:  client.Entity{ID: 3, Name: "Paris", Kind: "place", Scope: "private", Created: at, Updated: at},
			Triples: []client.Triple{{ID: 4, Subject: 1, Object: 3, Predicate: "lives in", Sources: []int64{}, Created: at}},
			Blocks:  []client.Block{{ID: "ab", Kind: "image", Name: "p.png", MIME: "image/png", Text: "ocr", Size: 10, Scope: "private", HolderLayer: 3, HolderEntity: 3}},
		},
		scenes: []client.Scene{{ID: 1, Key: "chan:qq/peer:group_1", Declared: true, Features: map[string]float64{"channel:qq": 1},
			Strength: 1.5, Occurrences: 4, Seen: at}},
		gc: client.GCReport{Cooled: 1, Distilled: 2, Entities: 3, Triples: 4, Confirmed: 5, Superseded: 6, Extractor: "llm+rules",
			Decayed: 7, Took: 1234 * time.Millisecond},
	}
	c := serveAPI(t, b)
	in := client.TripleInput{Subject: "Alice", SubjectKind: "person", Predicate: "lives in", Object: "巴黎", ObjectKind: "place",
		ValidFrom: at, Replaces: true, Scope: "group:1"}
	pin := client.PinRequest{Kind: "block", Block: "ab", Entity: 3, Pinned: true}
	tests := []struct {
		name      string
		call      func() (any, error)
		want      any
		wantCalls []any
	}{
		{"graph with every field", func() (any, error) {
			return c.Graph(ctx, client.GraphQuery{Scope: "group:1", History: true, After: "a&b", Limit: 2, Events: 3})
		}, b.page, []any{client.GraphQuery{Scope: "group:1", History: true, After: "a&b", Limit: 2, Events: 3}}},
		{"graph with defaults", func() (any, error) { return c.Graph(ctx, client.GraphQuery{}) }, b.page, []any{client.GraphQuery{}}},
		{"entity", func() (any, error) { return c.Entity(ctx, 3) }, b.detail, []any{int64(3)}},
		{"create entity sends only what a caller sets", func() (any, error) {
			return c.PutEntity(ctx, client.Entity{Name: "Carol", Kind: "person", Text: "t", Scope: "public", Pinned: true, Mentions: 9, Created: at})
		}, client.Entity{ID: 21, Name: "Carol", Kind: "person", Text: "t", Scope: "public", Mentions: 1, Origin: "owner"},
			[]any{client.Entity{Name: "Carol", Kind: "person", Text: "t", Scope: "public"}}},
		{"edit entity", func() (any, error) { return c.PutEntity(ctx, client.Entity{ID: 3, Name: "Paris, France"}) },
			client.Entity{ID: 3, Name: "Paris, France", Mentions: 1, Origin: "owner"}, []any{client.Entity{ID: 3, Name: "Paris, France"}}},
		{"add triple", func() (any, error) { return c.AddTriple(ctx, in) },
			client.Triple{ID: 5, SubjectName: "Alice", Predicate: "lives in", ObjectName: "巴黎", ValidFrom: at, Sources: []int64{}, Scope: "group:1"},
			[]any{in}},
		{"edit triple", func() (any, error) { return c.EditTriple(ctx, 5, in) },
			client.Triple{ID: 6, SubjectName: "Alice", Predicate: "lives in", ObjectName: "巴黎", Sources: []int64{8}}, []any{[]any{int64(5), in}}},
		{"pin", func() (any, error) { return nil, c.Pin(ctx, pin) }, nil, []any{pin}},
		{"merge", func() (any, error) { return c.MergeEntities(ctx, 3, 4) }, client.Entity{ID: 3, Name: "merged"}, []any{[]any{int64(3), int64(4)}}},
		{"delete", func() (any, error) { return nil, c.DeleteEntity(ctx, 3) }, nil, []any{int64(3)}},
		{"forget", func() (any, error) { return c.Forget(ctx, []int64{7, 8}) },
			client.ForgetResult{Events: 2, Blocks: 1, Triples: 2, Trimmed: 3, Entities: 4}, []any{[]int64{7, 8}}},
		{"scenes", func() (any, error) { return c.Scenes(ctx) }, b.scenes, []any{"scenes"}},
		{"gc", func() (any, error) { return c.MemoryGC(ctx) }, b.gc, []any{"gc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b.take()
			got, err := tt.call()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if calls := b.take(); !reflect.DeepEqual(calls, tt.wantCalls) {
				t.Errorf("backend saw %#v\nwant %#v", calls, tt.wantCalls)
			}
		})
	}

	errTests := []struct {
		name     string
		call     func() error
		want     error
		wantSent bool // whether the backend was reached
	}{
		{"unknown entity", func() error { _, err := c.Entity(ctx, 404); return err }, client.ErrNotFound, true},
		{"entity id zero", func() error { _, err := c.Entity(ctx, 0); return err }, client.ErrInvalid, false},
		{"negative entity to edit", func() error { _, err := c.PutEntity(ctx, client.Entity{ID: -2, Name: "x"}); return err }, client.ErrInvalid, false},
		{"entity without name", func() error { _, err := c.PutEntity(ctx, client.Entity{Kind: "x"}); return err }, client.ErrInvalid, false},
		{"triple id zero", func() error { _, err := c.EditTriple(ctx, 0, in); return err }, client.ErrInvalid, false},
		{"merge into zero", func() error { _, err := c.MergeEntities(ctx, 0, 4); return err }, client.ErrInvalid, false},
		{"merge from zero", func() error { _, err := c.MergeEntities(ctx, 3, 0); return err }, client.ErrInvalid, false},
		{"merge into itself", func() error { _, err := c.MergeEntities(ctx, 3, 3); return err }, client.ErrInvalid, false},
		{"delete id zero", func() error { return c.DeleteEntity(ctx, 0) }, client.ErrInvalid, false},
		{"forget nothing", func() error { _, err := c.Forget(ctx, nil); return err }, client.ErrInvalid, false},
		{"forget id zero", func() error { _, err := c.Forget(ctx, []int64{1, 0}); return err }, client.ErrInvalid, false},
		{"graph limit too big", func() error { _, err := c.Graph(ctx, client.GraphQuery{Limit: 10001}); return err }, client.ErrInvalid, false},
		{"graph bad scope", func() error { _, err := c.Graph(ctx, client.GraphQuery{Scope: "all"}); return err }, client.ErrInvalid, false},
		{"triple without subject", func() error { _, err := c.AddTriple(ctx, client.TripleInput{Predicate: "p", Object: "o"}); return err }, client.ErrInvalid, false},
		{"pin of an unknown kind", func() error { return c.Pin(ctx, client.PinRequest{Kind: "scene", ID: 1}) }, client.ErrInvalid, false},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			b.take()
			err := tt.call()
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if sent := len(b.take()) > 0; sent != tt.wantSent {
				t.Errorf("backend reached: %v, want %v", sent, tt.wantSent)
			}
		})
	}
}

// errWriter fails every write.
type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

func TestExportAndImportOverAPI(t *testing.T) {
	ctx := context.Background()
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	b := &adminBackend{}
	c := serveAPI(t, b)

	exports := []struct {
		name     string
		req      client.ExportRequest
		export   func(req client.ExportRequest, w io.Writer) error
		want     []byte // the bytes written on success
		wantReq  client.ExportRequest
		wantErr  error // errors.Is target; nil: success
		wantFail bool  // an error without a sentinel
	}{
		{name: "json with secrets streams whole", req: client.ExportRequest{Format: "json", IncludeSecrets: true},
			export: func(_ client.ExportRequest, w io.Writer) error {
				for i := 0; i < len(big); i += 4096 {
					if _, err := w.Write(big[i : i+4096]); err != nil {
						return err
					}
				}
				return nil
			}, want: big, wantReq: client.ExportRequest{Format: "json", IncludeSecrets: true}},
		{name: "empty format is json", req: client.ExportRequest{},
			export: func(req client.ExportRequest, w io.Writer) error { _, err := io.WriteString(w, req.Format); return err },
			want:   []byte("json"), wantReq: client.ExportRequest{Format: "json"}},
		{name: "markdown", req: client.ExportRequest{Format: "markdown"},
			export: func(req client.ExportRequest, w io.Writer) error { _, err := io.WriteString(w, "tar"); return err },
			want:   []byte("tar"), wantReq: client.ExportRequest{Format: "markdown"}},
		{name: "unknown format", req: client.ExportRequest{Format: "csv"}, wantErr: client.ErrInvalid},
		{name: "failure before the first byte", req: client.ExportRequest{Format: "jsonl"},
			export: func(client.ExportRequest, io.Writer) error {
				return fmt.Errorf("memory is warming up: %w", client.ErrUnavailable)
			}, wantReq: client.ExportRequest{Format: "jsonl"}, wantErr: client.ErrUnavailable},
		{name: "failure midway is an error, not a short export", req: client.ExportRequest{Format: "jsonl"},
			export: func(_ client.ExportRequest, w io.Writer) error {
				if _, err := w.Write(big); err != nil {
					return err
				}
				return errors.New("disk read error")
			}, wantReq: client.ExportRequest{Format: "jsonl"}, wantFail: true},
	}
	for _, tt := range exports {
		t.Run("export "+tt.name, func(t *testing.T) {
			b.take()
			b.setExport(tt.export)
			var out bytes.Buffer
			err := c.ExportMemory(ctx, tt.req, &out)
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
			case tt.wantFail:
				if err == nil {
					t.Fatalf("a broken export returned no error (%d bytes written)", out.Len())
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out.Bytes(), tt.want) {
					t.Errorf("wrote %d bytes, want %d", out.Len(), len(tt.want))
				}
			}
			calls := b.take()
			if tt.wantReq == (client.ExportRequest{}) {
				if len(calls) != 0 {
					t.Errorf("a refused export reached the backend: %v", calls)
				}
			} else if !reflect.DeepEqual(calls, []any{tt.wantReq}) {
				t.Errorf("backend saw %+v, want %+v", calls, tt.wantReq)
			}
		})
	}
	t.Run("export into a failing writer", func(t *testing.T) {
		full := errors.New("disk full")
		b.setExport(func(_ client.ExportRequest, w io.Writer) error { _, err := w.Write(big); return err })
		if err := c.ExportMemory(ctx, client.ExportRequest{}, errWriter{full}); !errors.Is(err, full) {
			t.Fatalf("error %v, want %v", err, full)
		}
	})

	lines := strings.Repeat(`{"type":"entity","name":"n","entityType":"t","observations":["o"]}`+"\n", 80000) // > 4 MiB
	imports := []struct {
		name, format, body string
		wantFormat         string
		want               client.ImportReport
		wantErr            error
	}{
		{"jsonl larger than the general body limit", "jsonl", lines, "jsonl", client.ImportReport{Entities: 80000, Skipped: 1}, nil},
		{"empty format is json", "", "{}\n", "json", client.ImportReport{Entities: 1, Skipped: 1}, nil},
		{"markdown is export only", "markdown", "x", "", client.ImportReport{}, client.ErrInvalid},
	}
	for _, tt := range imports {
		t.Run("import "+tt.name, func(t *testing.T) {
			b.take()
			// A reader that is not a *strings.Reader: the length is unknown, as for stdin.
			got, err := c.ImportMemory(ctx, tt.format, io.MultiReader(strings.NewReader(tt.body)))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				if calls := b.take(); len(calls) != 0 {
					t.Errorf("a refused import reached the backend")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("report %+v, want %+v", got, tt.want)
			}
			calls := b.take()
			if len(calls) != 1 {
				t.Fatalf("backend calls %d", len(calls))
			}
			args := calls[0].([]any)
			if args[0] != tt.wantFormat || args[1] != tt.body {
				t.Errorf("backend saw format %q and %d bytes, want %q and %d", args[0], len(args[1].(string)), tt.wantFormat, len(tt.body))
			}
		})
	}
}
