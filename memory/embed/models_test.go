package embed

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestCatalog checks the curated list: every entry is consistent, and each says what the issue
// asks of it (repository, files, dim, pooling, prefixes, licence).
func TestCatalog(t *testing.T) {
	want := map[string]struct {
		dim     int
		pooling Pooling
		kind    ModelKind
		query   string
	}{
		"bge-small-zh-v1.5":             {512, PoolCLS, KindText, "为这个句子生成表示以用于检索相关文章："},
		"multilingual-e5-small":         {384, PoolMean, KindText, "query: "},
		"chinese-clip-vit-base-patch16": {512, PoolNone, KindImageText, ""},
		"whisper-base":                  {0, "", KindSpeech, ""},
	}
	cat := Catalog()
	if len(cat) != len(want) {
		t.Fatalf("catalogue has %d models, want %d", len(cat), len(want))
	}
	for _, s := range cat {
		if err := checkSpec(s); err != nil {
			t.Error(err)
		}
		w, ok := want[s.ID]
		if !ok {
			t.Errorf("unexpected model %s", s.ID)
			continue
		}
		if s.Dim != w.dim || s.Pooling != w.pooling || s.Kind != w.kind || s.QueryPrefix != w.query || s.Normalize != (s.Kind != KindSpeech) {
			t.Errorf("%s: %+v", s.ID, s)
		}
		if s.Licence == "" || s.Repo == "" || s.Upstream == "" || s.Description == "" {
			t.Errorf("%s lacks repository, upstream, licence or description", s.ID)
		}
	}
	// Catalog returns copies: changing one does not change the next.
	cat[0].Files[0].SHA256 = "changed"
	if Catalog()[0].Files[0].SHA256 == "changed" {
		t.Error("Catalog shares its slices")
	}
}

func TestNewManagerBadOptions(t *testing.T) {
	good := Catalog()[0]
	bad := func(change func(*ModelSpec)) []ModelSpec {
		s := good
		s.Files = append([]ModelFile(nil), good.Files...)
		change(&s)
		return []ModelSpec{s}
	}
	tests := []struct {
		name string
		opts ManagerOptions
		want string
	}{
		{"no dir", ManagerOptions{}, "no models directory"},
		{"empty hub list", ManagerOptions{Dir: "d", Hubs: []string{}}, "no hub base URL"},
		{"ftp hub", ManagerOptions{Dir: "d", Hubs: []string{"ftp://x"}}, `hub "ftp://x" is not an http(s) base URL`},
		{"relative hub", ManagerOptions{Dir: "d", Hubs: []string{"huggingface.co"}}, "not an http(s) base URL"},
		{"duplicate model", ManagerOptions{Dir: "d", Catalog: []ModelSpec{good, good}}, "lists \"bge-small-zh-v1.5\" twice"},
		{"bad id", ManagerOptions{Dir: "d", Catalog: bad(func(s *ModelSpec) { s.ID = "../x" })}, `bad model id "../x"`},
		{"escaping path", ManagerOptions{Dir: "d", Catalog: bad(func(s *ModelSpec) { s.Files[0].Path = "../x.onnx"; s.Model = "../x.onnx" })}, `bad file path "../x.onnx"`},
		{"model not a file", ManagerOptions{Dir: "d", Catalog: bad(func(s *ModelSpec) { s.Model = "other.onnx" })}, `"other.onnx" is not a required file`},
		{"optional tokenizer", ManagerOptions{Dir: "d", Catalog: bad(func(s *ModelSpec) { s.Tokenizer = "config.json" })}, `"config.json" is not a required file`},
		{"bad sha", ManagerOptions{Dir: "d", Catalog: bad(func(s *ModelSpec) { s.Files[0].SHA256 = "xyz" })}, `bad sha256 "xyz"`},
		{"bad pooling", ManagerOptions{Dir: "d", Catalog: bad(func(s *ModelSpec) { s.Pooling = "max" })}, `unknown pooling "max"`},
		{"bad tokenizer kind", ManagerOptions{Dir: "d", Catalog: bad(func(s *ModelSpec) { s.TokenizerKind = "bpe" })}, `unknown tokenizer kind "bpe"`},
		{"no dim", ManagerOptions{Dir: "d", Catalog: bad(func(s *ModelSpec) { s.Dim = 0 })}, "dim and max tokens must be positive"},
		{"decoder on a text model", ManagerOptions{Dir: "d", Catalog: bad(func(s *ModelSpec) { s.Decoder = "tokenizer.json" })}, "only speech models have a decoder"},
		{"speech without decoder", ManagerOptions{Dir: "d", Catalog: bad(func(s *ModelSpec) { s.Kind, s.TokenizerKind = KindSpeech, TokenizerWhisper })}, "needs a decoder"},
		{"image model without size", ManagerOptions{Dir: "d", Catalog: bad(func(s *ModelSpec) { s.Kind = KindImageText })}, "no image size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewManager(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewManager error = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestManagerWithoutModels covers what needs no download: listing an empty directory, unknown
// ids, uninstalled models, and the empty Use (sparse mode).
func TestManagerWithoutModels(t *testing.T) {
	m, err := NewManager(ManagerOptions{Dir: t.TempDir(), Runtime: NewORT("/nonexistent/libonnxruntime.so.1", 1)})
	if err != nil {
		t.Fatal(err)
	}
	list, err := m.List()
	if err != nil || len(list) != len(Catalog()) {
		t.Fatalf("List = %v, %v", list, err)
	}
	for _, info := range list {
		if info.Installed || info.Partial != 0 {
			t.Errorf("fresh directory lists %+v", info)
		}
	}
	if _, err := m.Open("nope"); !errors.Is(err, ErrUnknownModel) || !strings.Contains(err.Error(), "known: bge-small-zh-v1.5") {
		t.Errorf("Open(unknown) = %v", err)
	}
	if _, err := m.Open("bge-small-zh-v1.5"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Open(not installed) = %v", err)
	}
	if err := m.Remove("bge-small-zh-v1.5"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Remove(not installed) = %v", err)
	}
	if _, err := m.Import(context.Background(), "bge-small-zh-v1.5", t.TempDir()+"/missing"); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("Import(missing dir) = %v", err)
	}
	if a, e, err := m.Use(""); err != nil || e != nil || a != (Active{}) {
		t.Errorf("Use(\"\") = %v, %v, %v", a, e, err)
	}
	noRT, _ := NewManager(ManagerOptions{Dir: t.TempDir()})
	if _, err := noRT.Install(context.Background(), "bge-small-zh-v1.5", nil); err == nil || !strings.Contains(err.Error(), "no ONNX Runtime") {
		t.Errorf("Install without a runtime = %v", err)
	}
}

func TestParseContentRange(t *testing.T) {
	tests := []struct {
		in          string
		start, size int64
		bad         bool
	}{
		{"bytes 100-199/200", 100, 200, false},
		{"bytes 0-0/*", 0, 0, false},
		{"bytes 5-9", 0, 0, true},
		{"items 0-1/2", 0, 0, true},
		{"bytes x-1/2", 0, 0, true},
		{"bytes 1-2/y", 0, 0, true},
	}
	for _, tt := range tests {
		start, size, err := parseContentRange(tt.in)
		if (err != nil) != tt.bad || start != tt.start || size != tt.size {
			t.Errorf("parseContentRange(%q) = %d, %d, %v", tt.in, start, size, err)
		}
	}
}

func TestFileURL(t *testing.T) {
	s := ModelSpec{Repo: "Xenova/bge-small-zh-v1.5", Revision: "main"}
	got := fileURL("https://hf-mirror.com", s, "onnx/model name.onnx")
	if want := "https://hf-mirror.com/Xenova/bge-small-zh-v1.5/resolve/main/onnx/model%20name.onnx"; got != want {
		t.Errorf("fileURL = %q, want %q", got, want)
	}
}
