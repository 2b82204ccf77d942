package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEmbeddingConfig(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		name    string
		toml    string
		wantErr string
		check   func(t *testing.T, c Config)
	}{
		{
			name: "defaults",
			toml: "",
			check: func(t *testing.T, c Config) {
				if c.Embedding.ONNXRuntime != "" || c.Embedding.Threads != 0 || len(c.Embedding.Hubs) != 0 {
					t.Errorf("default embedding config: %+v", c.Embedding)
				}
				if got := c.Embedding.ModelsDirOr(c.DataDir); got != filepath.Join(c.DataDir, "models") {
					t.Errorf("models dir %q, want DATA/models", got)
				}
			},
		},
		{
			name: "every field, paths expanded",
			toml: `[embedding]
onnxruntime = "~/ort/libonnxruntime.so.1"
models_dir = "~/models"
hubs = ["https://hf-mirror.com", "http://127.0.0.1:8080/"]
threads = 2
`,
			check: func(t *testing.T, c Config) {
				e := c.Embedding
				if e.ONNXRuntime != filepath.Join(home, "ort/libonnxruntime.so.1") || e.ModelsDir != filepath.Join(home, "models") ||
					e.Threads != 2 || !slices.Equal(e.Hubs, []string{"https://hf-mirror.com", "http://127.0.0.1:8080/"}) {
					t.Errorf("embedding config: %+v", e)
				}
				if got := e.ModelsDirOr("/data"); got != filepath.Join(home, "models") {
					t.Errorf("ModelsDirOr = %q", got)
				}
			},
		},
		{name: "bad hub", toml: "[embedding]\nhubs = [\"ftp://mirror\"]\n", wantErr: `embedding.hubs: "ftp://mirror" is not an http(s) base URL`},
		{name: "hub with a query", toml: "[embedding]\nhubs = [\"https://h/?x=1\"]\n", wantErr: "embedding.hubs"},
		{name: "negative threads", toml: "[embedding]\nthreads = -1\n", wantErr: "embedding.threads must be from 0 (automatic) to 64, got -1"},
		{name: "too many threads", toml: "[embedding]\nthreads = 65\n", wantErr: "embedding.threads"},
		{name: "unknown key", toml: "[embedding]\nmodel = \"bge\"\n", wantErr: `unknown key "embedding.model"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.toml")
			writeFile(t, path, tc.toml)
			c, _, err := Load("homed", []string{"--config", path}, envMap(map[string]string{"HOME": home}))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
	c := Default(envMap(map[string]string{"HOME": home}))
	c.Embedding.ModelsDir = "relative/models"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `embedding.models_dir "relative/models" must be an absolute path`) {
		t.Errorf("Validate with a relative models dir = %v", err)
	}
}
