package ocr

import (
	"image"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/draw"
)

// Recognition and orientation settings (PaddleOCR's rec_image_shape, cls_image_shape,
// cls_thresh, drop_score).
const (
	recHeight    = 48   // the recogniser's input height
	recMinWidth  = 320  // batches are at least this wide (the model's training width)
	recMaxWidth  = 9600 // longer lines (aspect > 200) are squeezed to this width
	recBatch     = 6    // lines per recogniser run, sorted by aspect ratio so padding stays small
	recBatchCols = 5760 // and at most this much input width per run (the output is width/8 × 6625 floats)
	recDropScore = 0.5
	clsHeight    = 48
	clsWidth     = 192
	clsBatch     = 12
	clsThresh    = 0.9 // a line is turned when the classifier says 180° at least this surely
	clsMaxAspect = 16  // longer lines are classified by windows of this aspect ratio
)

// fillLine writes img scaled to height h (keeping its aspect ratio, at most padW wide) into
// dst, a [3, h, padW] tensor, as PaddleOCR's resize_norm_img does: BGR planes scaled to
// [-1, 1], the right side padded with 0. It returns the scaled image.
func fillLine(dst []float32, img *image.RGBA, h, padW int) *image.RGBA {
	b := img.Bounds()
	w := min(int(math.Ceil(float64(h)*float64(b.Dx())/float64(b.Dy()))), padW)
	w = max(w, 1)
	scaled := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.BiLinear.Scale(scaled, scaled.Bounds(), img, b, draw.Src, nil)
	plane := h * padW
	clear(dst[:3*plane])
	const k = 2.0 / 255
	for y := range h {
		row := scaled.Pix[y*scaled.Stride:]
		for x := range w {
			i := y*padW + x
			dst[i] = float32(row[4*x+2])*k - 1
			dst[plane+i] = float32(row[4*x+1])*k - 1
			dst[2*plane+i] = float32(row[4*x])*k - 1
		}
	}
	return scaled
}

// aspect is a line image's width over its height.
func aspect(img *image.RGBA) float64 {
	b := img.Bounds()
	return float64(b.Dx()) / float64(max(b.Dy(), 1))
}

// recWidth is the padded input width of a batch whose widest line has aspect ratio a.
func recWidth(a float64) int {
	w := int(float64(recHeight) * math.Max(a, float64(recMinWidth)/recHeight))
	return min(w, recMaxWidth)
}

// glyph is one character CTC decoding kept: its text and the first and last time step of
// its run.
type glyph struct {
	text        string
	first, last int
	p           float32
}

// ctcDecode turns the per-step class probabilities of one line (steps × classes, row-major)
// into characters by greedy CTC decoding: the best class of each step, repeats merged,
// blanks (class 0) dropped.
func ctcDecode(probs []float32, steps, classes int, dict []string) []glyph {
	var out []glyph
	prev := -1
	for t := range steps {
		row := probs[t*classes : (t+1)*classes]
		best, bestP := 0, row[0]
		for c, p := range row[1:] {
			if p > bestP {
				best, bestP = c+1, p
			}
		}
		switch {
		case best == prev && best != 0 && len(out) > 0:
			out[len(out)-1].last = t
		case best != 0 && best < len(dict):
			out = append(out, glyph{text: dict[best], first: t, last: t, p: bestP})
		}
		prev = best
	}
	return out
}

// lineText joins glyphs into the line's text and scores it (the mean probability of the
// glyphs; 0 with none). A space is put between two glyphs of space-separated scripts (Latin,
// digits, ASCII punctuation) whose ink gap is a word gap (see wordGap); the model itself
// seldom emits the space class for English.
func lineText(gs []glyph, ink lineInk, stepWidth float64) (string, float32) {
	var sb strings.Builder
	var sum float32
	for i, g := range gs {
		if i > 0 && g.text != " " && gs[i-1].text != " " && spaced(gs[i-1].text) && spaced(g.text) &&
			ink.wordGap(int(float64(gs[i-1].last+1)*stepWidth), int(float64(g.first)*stepWidth)) {
			sb.WriteByte(' ')
		}
		sb.WriteString(g.text)
		sum += g.p
	}
	if len(gs) == 0 {
		return "", 0
	}
	return sb.String(), sum / float32(len(gs))
}

// spaced reports whether s is a character of a script that separates words by spaces.
func spaced(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r < 0x2E80 && !unicode.IsSpace(r) // below the CJK blocks
}

// wordGapRatio is the blank width, relative to the line's ink height, from which a gap
// between two glyphs is a word space. Ink height (ascender to descender) is 0.7–1.2 em;
// letter gaps are under 0.12 em and word spaces over 0.25 em in common fonts.
const wordGapRatio = 0.22

// lineInk is the ink of a scaled line image: which columns hold ink, and the height of the
// rows that do.
type lineInk struct {
	cols   []bool
	height int
}

// measureInk binarises img with Otsu's threshold (the minority side is the ink, so light text
// on a dark bar works too) and records its ink columns and height.
func measureInk(img *image.RGBA) lineInk {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	gray := make([]uint8, w*h)
	var hist [256]int
	for y := range h {
		row := img.Pix[y*img.Stride:]
		for x := range w {
			v := uint8((299*int(row[4*x]) + 587*int(row[4*x+1]) + 114*int(row[4*x+2])) / 1000)
			gray[y*w+x] = v
			hist[v]++
		}
	}
	thr := otsu(hist[:], w*h)
	dark := 0
	for v := 0; v <= thr; v++ {
		dark += hist[v]
	}
	inkIsDark := dark*2 <= w*h
	ink := lineInk{cols: make([]bool, w)}
	top, bottom := h, -1
	for y := range h {
		for x := range w {
			v := int(gray[y*w+x])
			if (v <= thr) == inkIsDark {
				ink.cols[x] = true
				top, bottom = min(top, y), max(bottom, y)
			}
		}
	}
	ink.height = max(bottom-top+1, 0)
	return ink
}

// otsu returns the threshold t (dark = values ≤ t) that maximises the between-class variance
// of the histogram.
func otsu(hist []int, n int) int {
	var sumAll float64
	for v, c := range hist {
		sumAll += float64(v * c)
	}
	var wB, sumB float64
	best, bestVar := 127, -1.0
	for t, c := range hist {
		wB += float64(c)
		if wB == 0 {
			continue
		}
		wF := float64(n) - wB
		if wF == 0 {
			break
		}
		sumB += float64(t * c)
		mB, mF := sumB/wB, (sumAll-sumB)/wF
		if v := wB * wF * (mB - mF) * (mB - mF); v > bestVar {
			best, bestVar = t, v
		}
	}
	return best
}

// wordGap reports whether the columns [from, to) hold a run of blank columns at least
// wordGapRatio times the ink height wide.
func (ink lineInk) wordGap(from, to int) bool {
	from, to = max(from, 0), min(to, len(ink.cols))
	need := wordGapRatio * float64(ink.height)
	if ink.height == 0 || float64(to-from) < need {
		return false
	}
	run := 0
	for x := from; x < to; x++ {
		if ink.cols[x] {
			run = 0
			continue
		}
		if run++; float64(run) >= need {
			return true
		}
	}
	return false
}
