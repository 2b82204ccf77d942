package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

func modelsClient(t *testing.T) (*client.HTTP, *clienttest.Models) {
	t.Helper()
	m := clienttest.NewModels(clienttest.New())
	c, err := client.Dial(client.Options{Socket: clienttest.ServeUnix(t, m)})
	if err != nil {
		t.Fatal(err)
	}
	return c, m
}

func TestModelsHTTP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, fake := modelsClient(t)

	st, err := c.Embedding(ctx)
	if err != nil || st.Mode != client.EmbeddingSparse || st.Reason == "" {
		t.Fatalf("Embedding = %+v, %v", st, err)
	}
	if full, err := c.Status(ctx); err != nil || full.Embedding == nil || full.Embedding.Mode != client.EmbeddingSparse {
		t.Fatalf("Status.Embedding = %+v, %v", full.Embedding, err)
	}
	list, err := c.EmbeddingModels(ctx)
	if err != nil || len(list) != 2 || list[0].Installed || list[1].Files[0].Pinned == "" {
		t.Fatalf("EmbeddingModels = %+v, %v", list, err)
	}

	var seen []client.ModelProgress
	m, err := c.InstallModel(ctx, "bge-small-zh-v1.5", func(p client.ModelProgress) { seen = append(seen, p) })
	if err != nil || m.ID != "bge-small-zh-v1.5" || !m.Installed || m.Files[0].SHA256 == "" || m.Files[0].Check != "recorded" {
		t.Fatalf("InstallModel = %+v, %v", m, err)
	}
	if len(seen) != 6 || seen[0].Done != 0 || seen[2].Done != seen[2].Total || seen[5].File != "tokenizer.json" {
		t.Fatalf("progress events %+v", seen)
	}

	fake.FailInstall("multilingual-e5-small", "download onnx/model.onnx failed from every hub")
	seen = nil
	_, err = c.InstallModel(ctx, "multilingual-e5-small", func(p client.ModelProgress) { seen = append(seen, p) })
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 500 || !strings.Contains(err.Error(), "failed from every hub") || len(seen) != 1 {
		t.Fatalf("install failing mid-stream = %v after %d progress events", err, len(seen))
	}

	for _, tc := range []struct {
		name string
		call func() error
		want error
	}{
		{"install of an unknown model", func() error { _, err := c.InstallModel(ctx, "nope", nil); return err }, client.ErrNotFound},
		{"install without an id", func() error { _, err := c.InstallModel(ctx, "", nil); return err }, client.ErrInvalid},
		{"import from a relative dir", func() error { _, err := c.ImportModel(ctx, "multilingual-e5-small", "rel"); return err }, client.ErrInvalid},
		{"use of a model not installed", func() error { _, err := c.UseModel(ctx, "multilingual-e5-small"); return err }, client.ErrNotFound},
		{"remove without an id", func() error { return c.RemoveModel(ctx, "") }, client.ErrInvalid},
	} {
		if err := tc.call(); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}

	if m, err := c.ImportModel(ctx, "multilingual-e5-small", "/srv/e5"); err != nil || m.Source != "import:/srv/e5" || m.Files[0].Check != "pinned" {
		t.Fatalf("ImportModel = %+v, %v", m, err)
	}
	st, err = c.UseModel(ctx, "bge-small-zh-v1.5")
	if err != nil || st.Mode != client.EmbeddingDense || st.Model != "bge-small-zh-v1.5" || st.Space == "" {
		t.Fatalf("UseModel = %+v, %v", st, err)
	}
	if err := c.RemoveModel(ctx, "bge-small-zh-v1.5"); !errors.Is(err, client.ErrInvalid) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("RemoveModel of the active model = %v", err)
	}
	fake.Corrupt("multilingual-e5-small")
	if _, err := c.UseModel(ctx, "multilingual-e5-small"); !errors.Is(err, client.ErrInvalid) || !strings.Contains(err.Error(), "failed to load") {
		t.Fatalf("UseModel of a corrupt model = %v", err)
	}
	if fake.Active() != "bge-small-zh-v1.5" {
		t.Fatalf("a failed use changed the active model to %q", fake.Active())
	}
	if st, err := c.UseModel(ctx, ""); err != nil || st.Mode != client.EmbeddingSparse {
		t.Fatalf(`UseModel("") = %+v, %v`, st, err)
	}
	if err := c.RemoveModel(ctx, "bge-small-zh-v1.5"); err != nil {
		t.Fatalf("RemoveModel = %v", err)
	}
}
