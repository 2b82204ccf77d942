package embed

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestCosine(t *testing.T) {
	tests := []struct {
		name string
		a, b []float32
		want float32
	}{
		{"same", []float32{1, 2, 3}, []float32{1, 2, 3}, 1},
		{"scaled", []float32{1, 2, 3}, []float32{2, 4, 6}, 1},
		{"opposite", []float32{1, -2}, []float32{-1, 2}, -1},
		{"orthogonal", []float32{1, 0}, []float32{0, 5}, 0},
		{"45 degrees", []float32{1, 0}, []float32{1, 1}, float32(1 / math.Sqrt2)},
		{"zero vector", []float32{0, 0}, []float32{1, 1}, 0},
		{"length mismatch", []float32{1, 2}, []float32{1, 2, 3}, 0},
		{"empty", nil, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cosine(tt.a, tt.b); math.Abs(float64(got-tt.want)) > 1e-6 {
				t.Errorf("Cosine = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNormalizeL2(t *testing.T) {
	v := []float32{3, 4}
	normalizeL2(v)
	if !slices.Equal(v, []float32{0.6, 0.8}) {
		t.Errorf("normalizeL2([3 4]) = %v", v)
	}
	z := []float32{0, 0, 0}
	normalizeL2(z)
	if !slices.Equal(z, []float32{0, 0, 0}) {
		t.Errorf("zero vector became %v", z)
	}
}

func TestPool(t *testing.T) {
	// Three tokens of dim 2; the third is padding.
	hidden := []float32{1, 2, 3, 4, 100, 200}
	mask := []int64{1, 1, 0}
	tests := []struct {
		p    Pooling
		data []float32
		want []float32
	}{
		{PoolCLS, hidden, []float32{1, 2}},
		{PoolMean, hidden, []float32{2, 3}}, // the padded row is ignored
		{PoolNone, []float32{7, 8}, []float32{7, 8}},
	}
	for _, tt := range tests {
		if got := pool(tt.p, tt.data, mask, 2); !slices.Equal(got, tt.want) {
			t.Errorf("pool(%s) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got := pool(PoolMean, hidden, []int64{0, 0, 0}, 2); !slices.Equal(got, []float32{0, 0}) {
		t.Errorf("mean pool with an empty mask = %v, want zeros", got)
	}
}

func TestSpaceFingerprint(t *testing.T) {
	base := Space{Model: "m", SHA256: "ab", Pooling: PoolMean, Normalize: true, QueryPrefix: "query: ", PassagePrefix: "passage: ", MaxTokens: 512, Dim: 384}
	fp := base.Fingerprint()
	if !strings.HasPrefix(fp, "m:") || len(fp) != len("m:")+24 {
		t.Fatalf("Fingerprint = %q", fp)
	}
	if base.Fingerprint() != fp {
		t.Error("Fingerprint is not stable")
	}
	// Every field that changes the vectors changes the fingerprint.
	variants := []func(*Space){
		func(s *Space) { s.Model = "n" },
		func(s *Space) { s.SHA256 = "cd" },
		func(s *Space) { s.Pooling = PoolCLS },
		func(s *Space) { s.Normalize = false },
		func(s *Space) { s.QueryPrefix = "" },
		func(s *Space) { s.PassagePrefix = "" },
		func(s *Space) { s.MaxTokens = 256 },
		func(s *Space) { s.Dim = 512 },
	}
	seen := map[string]bool{fp: true}
	for i, change := range variants {
		s := base
		change(&s)
		got := s.Fingerprint()
		if seen[got] {
			t.Errorf("variant %d has a fingerprint already seen: %s", i, got)
		}
		seen[got] = true
	}
}

func TestRole(t *testing.T) {
	if Query.String() != "query" || Passage.String() != "passage" || Role(0).String() != "Role(0)" {
		t.Errorf("Role strings: %s %s %s", Query, Passage, Role(0))
	}
	for _, tt := range []struct {
		role Role
		want string
	}{{Query, "q:"}, {Passage, "p:"}} {
		got, err := rolePrefix(tt.role, "q:", "p:")
		if err != nil || got != tt.want {
			t.Errorf("rolePrefix(%s) = %q, %v", tt.role, got, err)
		}
	}
	if _, err := rolePrefix(0, "q:", "p:"); err == nil || !strings.Contains(err.Error(), "invalid role 0") {
		t.Errorf("rolePrefix(0) error = %v", err)
	}
}

func TestFuse(t *testing.T) {
	s := func(pairs ...any) []Scored[string] {
		var out []Scored[string]
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, Scored[string]{ID: pairs[i].(string), Score: pairs[i+1].(float64)})
		}
		return out
	}
	ids := func(f []Fused[string]) []string {
		var out []string
		for _, x := range f {
			out = append(out, x.ID)
		}
		return out
	}
	tests := []struct {
		name          string
		dense, sparse []Scored[string]
		opts          FuseOptions
		want          []string
	}{
		{"agreement beats one side's top", s("a", 0.9, "b", 0.8), s("c", 30.0, "b", 20.0), FuseOptions{}, []string{"b", "a", "c"}},
		{"found by one side only still counts", s("a", 0.5), s("b", 7.0), FuseOptions{}, []string{"a", "b"}},
		{"sparse weight", s("a", 0.9, "b", 0.1), s("b", 2.0, "a", 1.0), FuseOptions{SparseWeight: 2, DenseWeight: 1}, []string{"b", "a"}},
		{"input order does not matter", s("b", 0.1, "a", 0.9), s("a", 1.0, "b", 2.0), FuseOptions{SparseWeight: 2, DenseWeight: 1}, []string{"b", "a"}},
		{"empty", nil, nil, FuseOptions{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Fuse(tt.dense, tt.sparse, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tt.want) {
				t.Errorf("Fuse = %v, want %v (%+v)", ids(got), tt.want, got)
			}
		})
	}

	// Scale invariance: BM25 scores times 1000 (or a monotone transform) change nothing.
	dense := s("a", 0.91, "b", 0.90, "c", 0.2, "d", 0.1)
	sparse := s("d", 9.0, "c", 8.0, "a", 0.5)
	scaled := s("d", 9000.0, "c", 8000.0, "a", 500.0)
	f1, _ := Fuse(dense, sparse, FuseOptions{})
	f2, _ := Fuse(dense, scaled, FuseOptions{})
	for i := range f1 {
		if f1[i].ID != f2[i].ID || math.Abs(f1[i].Score-f2[i].Score) > 1e-12 {
			t.Fatalf("scaling the sparse scores changed the fusion: %+v vs %+v", f1, f2)
		}
	}
	// The explanation fields: ranks and raw scores per side; the score is the RRF sum.
	var a Fused[string]
	for _, x := range f1 {
		if x.ID == "a" {
			a = x
		}
	}
	if a.DenseRank != 1 || a.SparseRank != 3 || a.DenseScore != 0.91 || a.SparseScore != 0.5 ||
		math.Abs(a.Score-(1.0/61+1.0/63)) > 1e-12 {
		t.Errorf("fused a = %+v", a)
	}
	// Ties share the better rank.
	tied, _ := Fuse(s("x", 0.5, "y", 0.5, "z", 0.1), nil, FuseOptions{})
	if tied[0].DenseRank != 1 || tied[1].DenseRank != 1 || tied[2].DenseRank != 3 {
		t.Errorf("tied ranks: %+v", tied)
	}
	// Integer ids work too (event ids).
	if got, err := Fuse([]Scored[int64]{{ID: 7, Score: 1}}, []Scored[int64]{{ID: 7, Score: 3}}, FuseOptions{K: 1}); err != nil || len(got) != 1 || got[0].Score != 1 {
		t.Errorf("int64 ids: %+v, %v", got, err)
	}
}

func TestFuseBadInput(t *testing.T) {
	ok := []Scored[string]{{ID: "a", Score: 1}}
	tests := []struct {
		name          string
		dense, sparse []Scored[string]
		opts          FuseOptions
		want          string
	}{
		{"NaN score", []Scored[string]{{ID: "a", Score: math.NaN()}}, ok, FuseOptions{}, "dense score of a is NaN"},
		{"infinite score", ok, []Scored[string]{{ID: "b", Score: math.Inf(1)}}, FuseOptions{}, "sparse score of b is +Inf"},
		{"duplicate", []Scored[string]{{ID: "a", Score: 1}, {ID: "a", Score: 2}}, nil, FuseOptions{}, "a is listed twice in the dense ranking"},
		{"negative K", ok, ok, FuseOptions{K: -1}, "bad options"},
		{"negative weight", ok, ok, FuseOptions{DenseWeight: -1, SparseWeight: 1}, "bad options"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Fuse(tt.dense, tt.sparse, tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Fuse error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestNewTextEmbedderBadConfig(t *testing.T) {
	wp := &WordPiece{}
	tests := []struct {
		name string
		cfg  TextModelConfig
		want string
	}{
		{"no id", TextModelConfig{Tokenizer: wp, Pooling: PoolCLS}, "no model id"},
		{"no tokenizer", TextModelConfig{ID: "m", Pooling: PoolCLS}, "no tokenizer"},
		{"bad pooling", TextModelConfig{ID: "m", Tokenizer: wp, Pooling: "max"}, `unknown pooling "max"`},
		{"no runtime library", TextModelConfig{ID: "m", Tokenizer: wp, Pooling: PoolCLS, ModelPath: "x.onnx"}, "needs ONNX Runtime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewTextEmbedder(NewORT("/nonexistent/libonnxruntime.so.1", 1), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewTextEmbedder error = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := NewImageEmbedder(nil, ImageModelConfig{Std: [3]float32{1, 0, 1}, Mean: [3]float32{0.5, 0.5, 0.5}}); err == nil || !strings.Contains(err.Error(), "std") {
		t.Errorf("NewImageEmbedder with a zero std: %v", err)
	}
}
