package ocr

import (
	"image"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// steps builds CTC output rows: each entry is the class that wins the step (p 0.9).
func steps(classes int, winners ...int) []float32 {
	out := make([]float32, len(winners)*classes)
	for t, c := range winners {
		for k := range classes {
			out[t*classes+k] = 0.1 / float32(classes-1)
		}
		out[t*classes+c] = 0.9
	}
	return out
}

func TestCTCDecode(t *testing.T) {
	dict := []string{"", "a", "b", "中", " "}
	tests := []struct {
		name    string
		winners []int
		want    string
		spans   [][2]int
	}{
		{"repeats merge", []int{1, 1, 1, 2, 2}, "ab", [][2]int{{0, 2}, {3, 4}}},
		{"a blank separates a doubled letter", []int{1, 1, 0, 1, 0, 0}, "aa", [][2]int{{0, 1}, {3, 3}}},
		{"blanks only", []int{0, 0, 0}, "", nil},
		{"space class", []int{1, 4, 4, 3}, "a 中", [][2]int{{0, 0}, {1, 2}, {3, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs := ctcDecode(steps(len(dict), tt.winners...), len(tt.winners), len(dict), dict)
			var sb strings.Builder
			var spans [][2]int
			for _, g := range gs {
				sb.WriteString(g.text)
				spans = append(spans, [2]int{g.first, g.last})
				if g.p < 0.89 || g.p > 0.91 {
					t.Errorf("glyph %q p %v, want 0.9", g.text, g.p)
				}
			}
			if sb.String() != tt.want || !slices.Equal(spans, tt.spans) {
				t.Errorf("decoded %q %v, want %q %v", sb.String(), spans, tt.want, tt.spans)
			}
		})
	}
}

func TestLineText(t *testing.T) {
	// Ink columns: 10 px high text; "##" glyphs with 1-column letter gaps and one 4-column gap.
	ink := lineInk{height: 10}
	for _, x := range []int{0, 1, 3, 4, 10, 11, 13, 14} {
		ink.cols = append(ink.cols, make([]bool, x+1-len(ink.cols))...)
		ink.cols[x] = true
	}
	ink.cols = append(ink.cols, false)
	g := func(s string, t int) glyph { return glyph{text: s, first: t, last: t, p: 0.8} }
	tests := []struct {
		name string
		gs   []glyph
		want string
	}{
		{"word gap becomes a space", []glyph{g("a", 0), g("b", 3), g("c", 10), g("d", 13)}, "ab cd"},
		{"no space between Han characters", []glyph{g("中", 0), g("文", 3), g("字", 10), g("符", 13)}, "中文字符"},
		{"no space between Han and Latin", []glyph{g("a", 0), g("b", 3), g("字", 10)}, "ab字"},
		{"the model's own space is kept, not doubled", []glyph{g("a", 0), g("b", 3), g(" ", 6), g("c", 10)}, "ab c"},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, score := lineText(tt.gs, ink, 1)
			if got != tt.want {
				t.Errorf("lineText = %q, want %q", got, tt.want)
			}
			if want := float32(0.8); len(tt.gs) > 0 && (score < want-1e-6 || score > want+1e-6) {
				t.Errorf("score %v, want %v", score, want)
			}
		})
	}
}

func TestMeasureInk(t *testing.T) {
	for _, tt := range []struct {
		name   string
		bg, fg color.RGBA
	}{
		{"dark on light", color.RGBA{250, 250, 245, 255}, color.RGBA{20, 20, 30, 255}},
		{"light on dark", color.RGBA{40, 42, 48, 255}, color.RGBA{240, 240, 240, 255}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			img := image.NewRGBA(image.Rect(0, 0, 30, 20))
			for y := range 20 {
				for x := range 30 {
					c := tt.bg
					if y >= 5 && y < 15 && (x < 8 || (x >= 12 && x < 20)) {
						c = tt.fg
					}
					img.SetRGBA(x, y, c)
				}
			}
			ink := measureInk(img)
			if ink.height != 10 {
				t.Errorf("ink height %d, want 10", ink.height)
			}
			for x, on := range ink.cols {
				if want := x < 8 || (x >= 12 && x < 20); on != want {
					t.Errorf("column %d ink %v, want %v", x, on, want)
				}
			}
		})
	}
}

func TestOtsu(t *testing.T) {
	hist := make([]int, 256)
	hist[30], hist[220] = 100, 300
	if got := otsu(hist, 400); got < 30 || got >= 220 {
		t.Errorf("otsu = %d, want between the two modes", got)
	}
}

func TestLoadDict(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	got, err := loadDict(write("ok.txt", "a\r\n中\n'\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"", "a", "中", "'", " "}; !slices.Equal(got, want) {
		t.Errorf("loadDict = %q, want %q", got, want)
	}
	for _, tt := range []struct{ name, content, want string }{
		{"empty line", "a\n\nb\n", "line 2 is empty"},
		{"not UTF-8", "a\n\xff\xfe\n", "not UTF-8"},
	} {
		if _, err := loadDict(write(tt.name, tt.content)); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "make ocr-models") {
			t.Errorf("%s: error %v, want %q and the make target", tt.name, err, tt.want)
		}
	}
	if _, err := loadDict(filepath.Join(dir, "missing.txt")); err == nil {
		t.Error("missing dictionary: no error")
	}
}
