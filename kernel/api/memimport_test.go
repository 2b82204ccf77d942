package api

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// coolAllBackend scripts CoolAll: it reports progress, then answers rep or err.
type coolAllBackend struct {
	fakeBackend
	progress []client.GCProgress
	rep      client.GCReport
	err      error
}

func (b *coolAllBackend) CoolAll(_ context.Context, progress func(client.GCProgress)) (client.GCReport, error) {
	for _, p := range b.progress {
		progress(p)
	}
	return b.rep, b.err
}

func (f *fakeBackend) CoolAll(context.Context, func(client.GCProgress)) (client.GCReport, error) {
	return client.GCReport{}, nil
}

// TestCoolAllStreamsProgress: POST /api/v1/memory/cool-all streams progress to the HTTP
// client in order and ends with the report, or with the error whether it came before the
// stream started (a plain error answer) or after (an error event).
func TestCoolAllStreamsProgress(t *testing.T) {
	t.Parallel()
	steps := []client.GCProgress{{Phase: client.GCPhaseCooling, Done: 1, Total: 2}, {Phase: client.GCPhaseCooling, Done: 2, Total: 2},
		{Phase: client.GCPhaseDistilling, Done: 16}}
	tests := []struct {
		name     string
		b        *coolAllBackend
		wantErr  error
		wantSeen int
	}{
		{name: "done", b: &coolAllBackend{progress: steps, rep: client.GCReport{Cooled: 7, Distilled: 16, Triples: 3, Extractor: "rules"}}, wantSeen: 3},
		{name: "fails before it starts", b: &coolAllBackend{err: fmt.Errorf("%w: no memory", client.ErrUnavailable)}, wantErr: client.ErrUnavailable},
		{name: "fails midway", b: &coolAllBackend{progress: steps[:1], err: fmt.Errorf("%w: bad", client.ErrInvalid)}, wantErr: client.ErrInvalid, wantSeen: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sv := serveUnix(t, New(tt.b, Options{}), "")
			c, err := client.Dial(client.Options{Socket: sv.path})
			if err != nil {
				t.Fatal(err)
			}
			var seen []client.GCProgress
			rep, err := c.CoolAll(context.Background(), func(p client.GCProgress) { seen = append(seen, p) })
			if !reflect.DeepEqual(seen, steps[:tt.wantSeen]) && (tt.wantSeen > 0 || len(seen) > 0) {
				t.Errorf("progress %+v, want %+v", seen, steps[:tt.wantSeen])
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || rep != tt.b.rep {
				t.Fatalf("report %+v, %v; want %+v", rep, err, tt.b.rep)
			}
		})
	}
}
