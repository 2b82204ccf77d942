package daemon

import (
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/memory/embed"
)

func TestNewEmbedding(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	env := func(string) string { return "" }
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		emb     config.EmbeddingConfig
		wantErr string
		check   func(t *testing.T, cfg config.Config)
	}{
		{
			name: "a missing runtime leaves a manager and the reason",
			emb:  config.EmbeddingConfig{ONNXRuntime: filepath.Join(dir, "nowhere", "libonnxruntime.so.1")},
			check: func(t *testing.T, cfg config.Config) {
				deps, err := NewEmbedding(cfg, env, log)
				if err != nil {
					t.Fatal(err)
				}
				if deps.Runtime != nil || !errors.Is(deps.RuntimeErr, embed.ErrORTNotFound) ||
					!strings.Contains(deps.RuntimeErr.Error(), filepath.Join(dir, "nowhere")) || deps.Models == nil {
					t.Fatalf("deps = %+v", deps)
				}
				infos, err := deps.Models.List()
				if err != nil || len(infos) == 0 {
					t.Fatalf("the manager lists the catalogue: %v, %v", infos, err)
				}
			},
		},
		{
			name:    "a bad hub is an error",
			emb:     config.EmbeddingConfig{Hubs: []string{"ftp://mirror"}},
			wantErr: `hub "ftp://mirror" is not an http(s) base URL`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default(env)
			cfg.DataDir = filepath.Join(dir, "data")
			cfg.Embedding = tc.emb
			if tc.wantErr != "" {
				if _, err := NewEmbedding(cfg, env, log); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("NewEmbedding = %v, want %q", err, tc.wantErr)
				}
				return
			}
			tc.check(t, cfg)
		})
	}
}
