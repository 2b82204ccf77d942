package ocr

import (
	"image"
	"image/color"
	"os"
	"strings"
	"sync"
	"testing"
	"unicode"

	"golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"golang.org/x/text/unicode/norm"
)

// testFont is a system font the tests render text with.
type testFont struct {
	name   string // e.g. "DejaVu Sans"
	path   string
	family string // the family to pick from a collection (.ttc)
	pkg    string // the Debian package that ships it
}

var (
	dejaVuSans  = testFont{"DejaVu Sans", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "", "fonts-dejavu-core"}
	dejaVuSerif = testFont{"DejaVu Serif", "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", "", "fonts-dejavu-core"}
	notoSansSC  = testFont{"Noto Sans CJK SC", "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", "Noto Sans CJK SC", "fonts-noto-cjk"}
	notoSerifSC = testFont{"Noto Serif CJK SC", "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc", "Noto Serif CJK SC", "fonts-noto-cjk"}
)

var fontCache sync.Map // path+family → *sfnt.Font

// load parses the font, failing (under HOLOGRAM_CI=1) or skipping the test when it is not
// installed.
func (f testFont) load(t testing.TB) *sfnt.Font {
	t.Helper()
	key := f.path + "|" + f.family
	if v, ok := fontCache.Load(key); ok {
		return v.(*sfnt.Font)
	}
	data, err := os.ReadFile(f.path)
	if err != nil {
		msg := "font " + f.name + " missing (apt-get install " + f.pkg + "): " + err.Error()
		if os.Getenv("HOLOGRAM_CI") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var fnt *sfnt.Font
	if f.family == "" {
		if fnt, err = opentype.Parse(data); err != nil {
			t.Fatalf("parse %s: %v", f.path, err)
		}
	} else {
		coll, err := opentype.ParseCollection(data)
		if err != nil {
			t.Fatalf("parse %s: %v", f.path, err)
		}
		for i := range coll.NumFonts() {
			cand, err := coll.Font(i)
			if err != nil {
				t.Fatalf("%s font %d: %v", f.path, i, err)
			}
			if name, _ := cand.Name(nil, sfnt.NameIDFamily); name == f.family {
				fnt = cand
				break
			}
		}
		if fnt == nil {
			t.Fatalf("%s holds no %q", f.path, f.family)
		}
	}
	fontCache.Store(key, fnt)
	return fnt
}

// face returns the font at px pixels per em.
func (f testFont) face(t testing.TB, px float64) font.Face {
	t.Helper()
	face, err := opentype.NewFace(f.load(t), &opentype.FaceOptions{Size: px, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		t.Fatalf("face %s %.0f px: %v", f.name, px, err)
	}
	return face
}

// placed is a text drawn at a known place: its expected reading.
type placed struct {
	text string
	box  image.Rectangle
}

// canvas is an image the tests draw text on.
type canvas struct {
	img    *image.RGBA
	placed []placed
}

func newCanvas(w, h int, bg color.Color) *canvas {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(bg), image.Point{}, draw.Src)
	return &canvas{img: img}
}

func (c *canvas) fill(r image.Rectangle, col color.Color) {
	draw.Draw(c.img, r, image.NewUniform(col), image.Point{}, draw.Src)
}

// text draws s with its top-left at (x, y) and records where it went; it returns the
// drawn width.
func (c *canvas) text(face font.Face, col color.Color, x, y int, s string) int {
	m := face.Metrics()
	d := font.Drawer{Dst: c.img, Src: image.NewUniform(col), Face: face,
		Dot: fixed.Point26_6{X: fixed.I(x), Y: fixed.I(y) + m.Ascent}}
	w := font.MeasureString(face, s).Ceil()
	d.DrawString(s)
	c.placed = append(c.placed, placed{s, image.Rect(x, y, x+w, y+(m.Ascent+m.Descent).Ceil())})
	return w
}

// page renders lines, one under the other, at the sizes given (cycled), dark text on a light
// background, and returns the canvas.
func page(t testing.TB, f testFont, lines []string, sizes []float64) *canvas {
	t.Helper()
	faces := make([]font.Face, len(lines))
	width, height := 0, 24
	for i, s := range lines {
		faces[i] = f.face(t, sizes[i%len(sizes)])
		width = max(width, font.MeasureString(faces[i], s).Ceil())
		height += int(sizes[i%len(sizes)]*1.9) + 1
	}
	c := newCanvas(width+48, height+24, color.RGBA{0xfb, 0xfb, 0xf8, 0xff})
	y := 24
	for i, s := range lines {
		c.text(faces[i], color.RGBA{0x20, 0x22, 0x26, 0xff}, 24, y, s)
		y += int(sizes[i%len(sizes)]*1.9) + 1
	}
	return c
}

// normalise prepares text for comparison: NFKC (full-width ASCII and punctuation to their
// ASCII forms, e.g. "，" → ","), whitespace runs to one space, and, when dropSpaces is set
// (Chinese, where spaces are not part of the text), no spaces at all.
func normalise(s string, dropSpaces bool) string {
	s = norm.NFKC.String(s)
	if dropSpaces {
		return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), "")
	}
	return strings.Join(strings.Fields(s), " ")
}

// levenshtein is the edit distance between a and b in runes.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// score compares what Recognize read with the texts drawn. Each recognised line is assigned
// to the drawn text whose box holds the centre of its box (fragments of one drawn line are
// joined left to right); the texts are compared line by line, and a recognised line that
// matches no drawn text counts as wholly inserted. It returns the edits and the characters
// of the expected text, both after normalise.
func score(want []placed, got []Line, dropSpaces bool) (edits, total int, report []string) {
	parts := make([][]Line, len(want))
	var stray []Line
	for _, l := range got {
		cx := (l.Box[0].X + l.Box[1].X + l.Box[2].X + l.Box[3].X) / 4
		cy := (l.Box[0].Y + l.Box[1].Y + l.Box[2].Y + l.Box[3].Y) / 4
		best, bestDist := -1, 1<<30
		for i, p := range want {
			r := p.box.Inset(-4)
			if !image.Pt(cx, cy).In(r) {
				continue
			}
			if d := abs(cy - (p.box.Min.Y+p.box.Max.Y)/2); d < bestDist {
				best, bestDist = i, d
			}
		}
		if best < 0 {
			stray = append(stray, l)
			continue
		}
		parts[best] = append(parts[best], l)
	}
	for i, p := range want {
		ls := parts[i]
		// left to right
		for a := 1; a < len(ls); a++ {
			for b := a; b > 0 && ls[b].Box[0].X < ls[b-1].Box[0].X; b-- {
				ls[b], ls[b-1] = ls[b-1], ls[b]
			}
		}
		texts := make([]string, len(ls))
		for k, l := range ls {
			texts[k] = l.Text
		}
		w, g := normalise(p.text, dropSpaces), normalise(strings.Join(texts, " "), dropSpaces)
		e := levenshtein(w, g)
		edits += e
		total += len([]rune(w))
		if e > 0 {
			report = append(report, "want "+quote(w)+"\n     got  "+quote(g))
		}
	}
	for _, l := range stray {
		n := len([]rune(normalise(l.Text, dropSpaces)))
		edits += n
		report = append(report, "stray "+quote(l.Text))
	}
	return edits, total, report
}

func quote(s string) string { return "«" + s + "»" }

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
