package ocr

import (
	"image"
	"math"
	"slices"

	"golang.org/x/image/draw"
)

// Detection (DB, "Real-time Scene Text Detection with Differentiable Binarization") settings:
// PaddleOCR's defaults for PP-OCRv4 (det_db_thresh, det_db_box_thresh, max_candidates,
// min_size), except the side limit (see detectionSize) and the unclip ratio: 2.0, as in
// PaddleOCR 3, because 1.5 cut the final period off English lines (+0.8 points of accuracy
// on the test pages).
const (
	detThresh    = 0.3  // probability above which a map pixel is text
	detBoxThresh = 0.6  // mean probability a box needs
	detUnclip    = 2.0  // the box grows by area·ratio/perimeter on every side
	detMaxBoxes  = 1000 // candidates examined, largest first
	detMinSize   = 3    // shorter box side, in map pixels, below which a candidate is noise
	detMultiple  = 32   // the network's input sides must be multiples of this
	detMaxSide   = 1920 // longer sides are scaled down to this
	detPadding   = 16   // border of background colour added around every image (text touching the edge)
	detMeanR     = 0.406
	detMeanG     = 0.456
	detMeanB     = 0.485
	detStdR      = 0.225
	detStdG      = 0.224
	detStdB      = 0.229
)

// detInput is a resized image as the detection network's input tensor.
type detInput struct {
	data       []float32 // [3, h, w], BGR planes normalised as PaddleOCR's NormalizeImage
	w, h       int
	sx, sy     float64 // map coordinate × s = source image coordinate
	srcW, srcH int
}

// detectionSize returns the network input size for an image of w×h: the longer side at most
// detMaxSide, each side rounded to a multiple of 32. PaddleOCR's 960 limit suits photos,
// but halves a Full HD screenshot, and 12 px text at half size is mostly not found
// (TestSmallTextFullHD: 21 % read at 960, 98.7 % at 1920; detection costs ≈ 4× as much).
func detectionSize(w, h int) (int, int) {
	ratio := 1.0
	if long := max(w, h); long > detMaxSide {
		ratio = float64(detMaxSide) / float64(long)
	}
	round := func(v int) int {
		r := int(math.Round(float64(v)*ratio/detMultiple)) * detMultiple
		return max(r, detMultiple)
	}
	return round(w), round(h)
}

// newDetInput scales img (upright RGBA, origin 0,0) to the detection size and normalises it.
func newDetInput(img *image.RGBA) detInput {
	b := img.Bounds()
	w, h := detectionSize(b.Dx(), b.Dy())
	scaled := img
	if w != b.Dx() || h != b.Dy() {
		scaled = image.NewRGBA(image.Rect(0, 0, w, h))
		draw.BiLinear.Scale(scaled, scaled.Bounds(), img, b, draw.Src, nil)
	}
	in := detInput{
		data: make([]float32, 3*w*h), w: w, h: h,
		sx: float64(b.Dx()) / float64(w), sy: float64(b.Dy()) / float64(h),
		srcW: b.Dx(), srcH: b.Dy(),
	}
	plane := w * h
	const k = 1.0 / 255
	for y := range h {
		row := scaled.Pix[y*scaled.Stride : y*scaled.Stride+4*w]
		for x := range w {
			i := y*w + x
			r, g, bl := float32(row[4*x]), float32(row[4*x+1]), float32(row[4*x+2])
			in.data[i] = (bl*k - detMeanB) / detStdB
			in.data[plane+i] = (g*k - detMeanG) / detStdG
			in.data[2*plane+i] = (r*k - detMeanR) / detStdR
		}
	}
	return in
}

// component is one 8-connected region of the thresholded map: for each row it covers, the
// leftmost and rightmost pixel (enough for the convex hull).
type component struct {
	y0         int
	minX, maxX []int32 // per row from y0; -1 where the row has no pixel
	pixels     int
}

// components labels the 8-connected regions of the pixels of prob above thresh.
func components(prob []float32, w, h int, thresh float32) []component {
	visited := make([]bool, w*h)
	rowMin, rowMax := make([]int32, h), make([]int32, h)
	for i := range rowMin {
		rowMin[i], rowMax[i] = -1, -1
	}
	var out []component
	var stack []int32
	for start := range prob {
		if prob[start] <= thresh || visited[start] {
			continue
		}
		visited[start] = true
		stack = append(stack[:0], int32(start))
		minY, maxY, pixels := start/w, start/w, 0
		for len(stack) > 0 {
			i := int(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			x, y := int32(i%w), i/w
			pixels++
			if rowMin[y] < 0 || x < rowMin[y] {
				rowMin[y] = x
			}
			rowMax[y] = max(rowMax[y], x)
			minY, maxY = min(minY, y), max(maxY, y)
			for ny := max(y-1, 0); ny <= min(y+1, h-1); ny++ {
				for nx := max(int(x)-1, 0); nx <= min(int(x)+1, w-1); nx++ {
					if j := ny*w + nx; !visited[j] && prob[j] > thresh {
						visited[j] = true
						stack = append(stack, int32(j))
					}
				}
			}
		}
		c := component{y0: minY, pixels: pixels,
			minX: append([]int32(nil), rowMin[minY:maxY+1]...),
			maxX: append([]int32(nil), rowMax[minY:maxY+1]...)}
		for y := minY; y <= maxY; y++ {
			rowMin[y], rowMax[y] = -1, -1
		}
		out = append(out, c)
	}
	return out
}

// points returns the row extremes of c, the points whose hull is c's hull.
func (c component) points() []pt {
	pts := make([]pt, 0, 2*len(c.minX))
	for i, x0 := range c.minX {
		if x0 < 0 {
			continue
		}
		y := float64(c.y0 + i)
		pts = append(pts, pt{float64(x0), y})
		if x1 := c.maxX[i]; x1 != x0 {
			pts = append(pts, pt{float64(x1), y})
		}
	}
	return pts
}

// boxScore is the mean probability over the pixels of prob inside q (PaddleOCR's
// box_score_fast with the polygon mask).
func boxScore(prob []float32, w, h int, q quad) float64 {
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range q {
		x0, y0 = math.Min(x0, p.X), math.Min(y0, p.Y)
		x1, y1 = math.Max(x1, p.X), math.Max(y1, p.Y)
	}
	xmin, xmax := int(clampf(math.Floor(x0), 0, float64(w-1))), int(clampf(math.Ceil(x1), 0, float64(w-1)))
	ymin, ymax := int(clampf(math.Floor(y0), 0, float64(h-1))), int(clampf(math.Ceil(y1), 0, float64(h-1)))
	var sum float64
	var n int
	for y := ymin; y <= ymax; y++ {
		for x := xmin; x <= xmax; x++ {
			if q.contains(pt{float64(x), float64(y)}) {
				sum += float64(prob[y*w+x])
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// detBoxes turns the probability map of in into text boxes in source image coordinates
// (DBPostProcess: threshold, regions, min-area rectangles, score filter, unclip).
func detBoxes(prob []float32, in detInput) []quad {
	comps := components(prob, in.w, in.h, detThresh)
	if len(comps) > detMaxBoxes { // keep the largest
		slices.SortStableFunc(comps, func(a, b component) int { return b.pixels - a.pixels })
		comps = comps[:detMaxBoxes]
	}
	var boxes []quad
	for _, c := range comps {
		pts := c.points()
		box := orderBox(minAreaRect(pts))
		if math.Min(box.width(), box.height()) < detMinSize {
			continue
		}
		if boxScore(prob, in.w, in.h, box) < detBoxThresh {
			continue
		}
		w, h := box[0].dist(box[1]), box[0].dist(box[3])
		d := w * h * detUnclip / (2 * (w + h))
		box = orderBox(expandRect(box, d))
		if math.Min(box.width(), box.height()) < detMinSize+2 {
			continue
		}
		for i, p := range box {
			box[i] = pt{
				clampf(math.Round(p.X*in.sx), 0, float64(in.srcW)),
				clampf(math.Round(p.Y*in.sy), 0, float64(in.srcH)),
			}
		}
		boxes = append(boxes, box)
	}
	return boxes
}
