package kerneltest

import (
	"errors"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// RunEmbedding runs the embedding case of the suite alone (Run will hold it once its list
// names it).
func RunEmbedding(t *testing.T, setup Setup) {
	t.Run("Embedding", func(t *testing.T) { testEmbedding(t, setup(t)) })
}

// testEmbedding: a fresh kernel is in sparse mode and says why; with a model manager its
// catalogue lists models none of which is installed or active, and the model calls refuse bad
// requests with the right sentinel; without one they answer unavailable. Returning to sparse
// mode always works.
func testEmbedding(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	st, err := s.Embedding(ctx)
	if err != nil || st.Mode != client.EmbeddingSparse || st.Reason == "" || st.Model != "" || st.Space != "" {
		t.Fatalf("Embedding of a fresh kernel = %+v, %v; want sparse mode with a reason", st, err)
	}
	if st, err := s.UseModel(ctx, ""); err != nil || st.Mode != client.EmbeddingSparse {
		t.Fatalf(`UseModel("") = %+v, %v; want sparse mode`, st, err)
	}
	models, err := s.EmbeddingModels(ctx)
	if errors.Is(err, client.ErrUnavailable) {
		// No dense embeddings in this kernel: every model call says so.
		if _, err := s.UseModel(ctx, "any-model"); !errors.Is(err, client.ErrUnavailable) {
			t.Errorf("UseModel without a model manager = %v, want ErrUnavailable", err)
		}
		if _, err := s.InstallModel(ctx, "any-model", nil); !errors.Is(err, client.ErrUnavailable) {
			t.Errorf("InstallModel without a model manager = %v, want ErrUnavailable", err)
		}
		return
	}
	if err != nil || len(models) == 0 {
		t.Fatalf("EmbeddingModels = %v, %v; want the catalogue", models, err)
	}
	for _, m := range models {
		if m.ID == "" || (m.Dim <= 0) != (m.Kind == "speech-to-text") || m.Installed || m.Active || len(m.Files) == 0 {
			t.Errorf("catalogue model of a fresh kernel: %+v", m)
		}
	}
	id := models[0].ID
	for _, tc := range []struct {
		name string
		call func() error
		want error
		says string
	}{
		{"install of an unknown model", func() error { _, err := s.InstallModel(ctx, "no-such-model", nil); return err }, client.ErrNotFound, "no-such-model"},
		{"install without an id", func() error { _, err := s.InstallModel(ctx, "", nil); return err }, client.ErrInvalid, ""},
		{"use of an unknown model", func() error { _, err := s.UseModel(ctx, "no-such-model"); return err }, client.ErrNotFound, "no-such-model"},
		{"use of a model not installed", func() error { _, err := s.UseModel(ctx, id); return err }, client.ErrNotFound, "install"},
		{"import from a relative dir", func() error { _, err := s.ImportModel(ctx, id, "models/x"); return err }, client.ErrInvalid, "absolute"},
		{"remove of a model not installed", func() error { return s.RemoveModel(ctx, id) }, client.ErrNotFound, id},
		{"remove of an unknown model", func() error { return s.RemoveModel(ctx, "no-such-model") }, client.ErrNotFound, "no-such-model"},
	} {
		err := tc.call()
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %v saying %q", tc.name, err, tc.want, tc.says)
		}
	}
	if st, err := s.Embedding(ctx); err != nil || st.Mode != client.EmbeddingSparse || st.Model != "" {
		t.Errorf("Embedding after refused calls = %+v, %v; want sparse mode, no model", st, err)
	}
}
