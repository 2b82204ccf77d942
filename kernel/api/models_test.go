package api

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// The model methods of fakeBackend answer as a kernel without dense embeddings; modelBackend
// overrides them with func fields.

func (f *fakeBackend) Embedding(context.Context) (client.EmbeddingStatus, error) {
	return client.EmbeddingStatus{Mode: client.EmbeddingSparse, Reason: "not set up"}, nil
}
func (f *fakeBackend) EmbeddingModels(context.Context) ([]client.EmbeddingModel, error) {
	return nil, client.ErrUnavailable
}
func (f *fakeBackend) InstallModel(context.Context, string, func(client.ModelProgress)) (client.EmbeddingModel, error) {
	return client.EmbeddingModel{}, client.ErrUnavailable
}
func (f *fakeBackend) ImportModel(context.Context, string, string) (client.EmbeddingModel, error) {
	return client.EmbeddingModel{}, client.ErrUnavailable
}
func (f *fakeBackend) UseModel(context.Context, string) (client.EmbeddingStatus, error) {
	return client.EmbeddingStatus{}, client.ErrUnavailable
}
func (f *fakeBackend) RemoveModel(context.Context, string) error { return client.ErrUnavailable }

type modelBackend struct {
	*fakeBackend
	install func(ctx context.Context, id string, progress func(client.ModelProgress)) (client.EmbeddingModel, error)
	imp     func(ctx context.Context, id, dir string) (client.EmbeddingModel, error)
	use     func(ctx context.Context, id string) (client.EmbeddingStatus, error)
	remove  func(ctx context.Context, id string) error
	list    func(ctx context.Context) ([]client.EmbeddingModel, error)
}

func (b *modelBackend) EmbeddingModels(ctx context.Context) ([]client.EmbeddingModel, error) {
	return b.list(ctx)
}
func (b *modelBackend) InstallModel(ctx context.Context, id string, p func(client.ModelProgress)) (client.EmbeddingModel, error) {
	return b.install(ctx, id, p)
}
func (b *modelBackend) ImportModel(ctx context.Context, id, dir string) (client.EmbeddingModel, error) {
	return b.imp(ctx, id, dir)
}
func (b *modelBackend) UseModel(ctx context.Context, id string) (client.EmbeddingStatus, error) {
	return b.use(ctx, id)
}
func (b *modelBackend) RemoveModel(ctx context.Context, id string) error { return b.remove(ctx, id) }

func TestModelRoutes(t *testing.T) {
	notFound := func(id string) error { return fmt.Errorf("%w: unknown model %q", client.ErrNotFound, id) }
	var got []string // the calls the backend saw
	b := &modelBackend{
		fakeBackend: &fakeBackend{},
		list: func(context.Context) ([]client.EmbeddingModel, error) {
			return []client.EmbeddingModel{{ID: "m1", Installed: true, Active: true}, {ID: "m2"}}, nil
		},
		install: func(_ context.Context, id string, p func(client.ModelProgress)) (client.EmbeddingModel, error) {
			got = append(got, "install "+id)
			switch id {
			case "unknown":
				return client.EmbeddingModel{}, notFound(id)
			case "flaky": // fails after the stream has started
				p(client.ModelProgress{Model: id, File: "model.onnx", Done: 1, Total: 2})
				return client.EmbeddingModel{}, errors.New("download model.onnx failed from every hub")
			}
			p(client.ModelProgress{Model: id, File: "model.onnx", Done: 0, Total: 4})
			p(client.ModelProgress{Model: id, File: "model.onnx", Done: 4, Total: 4})
			return client.EmbeddingModel{ID: id, Installed: true}, nil
		},
		imp: func(_ context.Context, id, dir string) (client.EmbeddingModel, error) {
			got = append(got, "import "+id+" "+dir)
			return client.EmbeddingModel{ID: id, Installed: true, Source: "import:" + dir}, nil
		},
		use: func(_ context.Context, id string) (client.EmbeddingStatus, error) {
			got = append(got, "use "+id)
			if id == "" {
				return client.EmbeddingStatus{Mode: client.EmbeddingSparse}, nil
			}
			if id == "corrupt" {
				return client.EmbeddingStatus{}, fmt.Errorf("%w: model corrupt failed to load: protobuf parsing failed", client.ErrInvalid)
			}
			return client.EmbeddingStatus{Mode: client.EmbeddingDense, Model: id}, nil
		},
		remove: func(_ context.Context, id string) error {
			got = append(got, "remove "+id)
			if id == "m1" {
				return fmt.Errorf("%w: model m1 is in use", client.ErrInvalid)
			}
			return nil
		},
	}
	sv := serveUnix(t, New(b, Options{Version: "1"}), "")
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
		wantBody                 string // exact, or a substring when wantSub
		wantSub                  bool
		calls                    []string
	}{
		{name: "status", method: "GET", path: "/api/v1/embedding", want: 200,
			wantBody: `{"mode":"sparse","reason":"not set up","reembed":{"done":0,"total":0,"running":false}}`},
		{name: "list", method: "GET", path: "/api/v1/embedding/models", want: 200,
			wantBody: `{"models":[{"id":"m1","description":"","kind":"","dim":0,"repo":"","revision":"","installed":true,"active":true,"files":[]},` +
				`{"id":"m2","description":"","kind":"","dim":0,"repo":"","revision":"","installed":false,"active":false,"files":[]}]}`},
		{name: "list refuses query", method: "GET", path: "/api/v1/embedding/models?all=1", want: 400},
		{name: "install streams progress", method: "POST", path: "/api/v1/embedding/models/m2/install", want: 200, wantSub: true,
			wantBody: "event: progress\ndata: {\"model\":\"m2\",\"file\":\"model.onnx\",\"done\":0,\"total\":4}\n\n" +
				"event: progress\ndata: {\"model\":\"m2\",\"file\":\"model.onnx\",\"done\":4,\"total\":4}\n\n" +
				"event: done\ndata: {\"id\":\"m2\"", calls: []string{"install m2"}},
		{name: "install of an unknown model is a plain 404", method: "POST", path: "/api/v1/embedding/models/unknown/install", want: 404,
			wantBody: `{"error":{"status":404,"message":"not found: unknown model \"unknown\""}}`, calls: []string{"install unknown"}},
		{name: "install failing mid-stream ends with an error event", method: "POST", path: "/api/v1/embedding/models/flaky/install", want: 200,
			wantSub: true, wantBody: "event: error\ndata: {\"status\":500,\"message\":\"download model.onnx failed from every hub\"}", calls: []string{"install flaky"}},
		{name: "install takes no body", method: "POST", path: "/api/v1/embedding/models/m2/install", body: `{}`, want: 400},
		{name: "import", method: "POST", path: "/api/v1/embedding/models/m2/import", body: `{"dir":"/srv/m2"}`, want: 201, wantSub: true,
			wantBody: `"source":"import:/srv/m2"`, calls: []string{"import m2 /srv/m2"}},
		{name: "import needs a dir", method: "POST", path: "/api/v1/embedding/models/m2/import", body: `{}`, want: 400},
		{name: "import refuses unknown fields", method: "POST", path: "/api/v1/embedding/models/m2/import", body: `{"dir":"/d","path":"/d"}`, want: 400},
		{name: "use by path", method: "POST", path: "/api/v1/embedding/models/m1/use", want: 200, wantSub: true,
			wantBody: `"mode":"dense","model":"m1"`, calls: []string{"use m1"}},
		{name: "use by body", method: "POST", path: "/api/v1/embedding/use", body: `{"model":"m1"}`, want: 200, wantSub: true,
			wantBody: `"mode":"dense"`, calls: []string{"use m1"}},
		{name: "back to sparse", method: "POST", path: "/api/v1/embedding/use", body: `{"model":""}`, want: 200, wantSub: true,
			wantBody: `"mode":"sparse"`, calls: []string{"use "}},
		{name: "use needs the field", method: "POST", path: "/api/v1/embedding/use", body: `{}`, want: 400},
		{name: "a corrupt model is a clear 400", method: "POST", path: "/api/v1/embedding/use", body: `{"model":"corrupt"}`, want: 400, wantSub: true,
			wantBody: `failed to load: protobuf parsing failed`, calls: []string{"use corrupt"}},
		{name: "remove", method: "DELETE", path: "/api/v1/embedding/models/m2", want: 204, calls: []string{"remove m2"}},
		{name: "remove the active one", method: "DELETE", path: "/api/v1/embedding/models/m1", want: 400, wantSub: true,
			wantBody: "in use", calls: []string{"remove m1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			resp, body := sv.do(t, tc.method, tc.path, tc.body, nil)
			if resp.StatusCode != tc.want {
				t.Fatalf("%s %s = %d %s, want %d", tc.method, tc.path, resp.StatusCode, body, tc.want)
			}
			switch {
			case tc.wantSub && !strings.Contains(body, tc.wantBody):
				t.Errorf("body %q does not hold %q", body, tc.wantBody)
			case !tc.wantSub && tc.wantBody != "" && strings.TrimSpace(body) != tc.wantBody:
				t.Errorf("body %s\nwant %s", body, tc.wantBody)
			}
			if !reflect.DeepEqual(got, tc.calls) {
				t.Errorf("backend calls %q, want %q", got, tc.calls)
			}
		})
	}
}
