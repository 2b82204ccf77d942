package gui

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"math"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/starmap"
)

// Sky interaction settings.
const (
	// restDelay is how long after the last drag or wheel step the sky is redrawn anti-aliased.
	restDelay = 150 * time.Millisecond
	// hitSlop widens every star's clickable disc, in pixels.
	hitSlop = 4
	// wheelZoom is the zoom factor per unit of wheel scroll (a notch is about 10 units).
	wheelZoom = 0.012
	// minZoomFactor and maxZoomFactor bound the zoom relative to the fitted view.
	minZoomFactor, maxZoomFactor = 0.2, 400
	// flyZoomFactor is how close a search flies: the fitted zoom times this.
	flyZoomFactor = 6
)

// flyDuration is how long a flight to a star takes (tests set 0: jump).
var flyDuration = 450 * time.Millisecond

// skyFont is loaded once for every sky (a CJK-capable face when fonts-noto-cjk is installed).
var skyFont = sync.OnceValues(func() (*starmap.Font, error) { return starmap.LoadFont() })

// skyWidget draws the sky into one canvas.Raster and turns the pointer into pan (drag), zoom
// (wheel, about the pointer), hover (a tooltip) and select (tap). It draws aliased while the
// user moves the sky and anti-aliased once it rests.
type skyWidget struct {
	widget.BaseWidget
	vm     *StarMapVM
	raster *canvas.Raster
	tip    *fyne.Container
	tipBg  *canvas.Rectangle
	tipTxt *canvas.Text

	// Draw state; touched on the UI goroutine (events) and in the raster generator (the same
	// goroutine in Fyne ≥ 2.6), guarded by mu to be safe either way.
	mu      sync.Mutex
	ren     *starmap.Renderer
	img     *image.RGBA
	view    starmap.View // in pixels
	fit     starmap.View // the fitted view of the current layout
	fitted  *Sky         // the sky fit was computed for
	pxScale float32      // pixels per Fyne unit
	moving  bool         // dragging or zooming: draw aliased
	hover   int
	edge    int           // the hovered edge, -1 for none
	pointer starmap.Point // the pointer, in raster pixels
	inside  bool          // the pointer is over the sky
	rest    *time.Timer
	anim    *fyne.Animation
	frames  int
	// A drag in progress: when it began and the frame count then (DragEnd traces the rate).
	dragging bool
	dragAt   time.Time
	dragF0   int
	drawn    time.Duration // time spent rasterising, in total
	dragD0   time.Duration
	drags    int // Dragged events of the current drag
}

func newSkyWidget(vm *StarMapVM) *skyWidget {
	w := &skyWidget{vm: vm, hover: -1, edge: -1, pxScale: 1}
	font, err := skyFont()
	if err != nil {
		vm.report(Tf("Star labels are off: %v", err), true)
	}
	w.ren = starmap.NewRenderer(starmap.RenderOptions{Font: font})
	w.raster = canvas.NewRaster(w.generate)
	w.raster.ScaleMode = canvas.ImageScalePixels
	w.tipBg = canvas.NewRectangle(color.NRGBA{R: 10, G: 14, B: 30, A: 225})
	w.tipBg.CornerRadius = 4
	w.tipBg.StrokeColor = color.NRGBA{R: 120, G: 140, B: 200, A: 160}
	w.tipBg.StrokeWidth = 1
	w.tipTxt = canvas.NewText("", color.NRGBA{R: 235, G: 240, B: 255, A: 255})
	w.tipTxt.TextSize = theme.TextSize() * 0.9
	w.tip = container.NewWithoutLayout(w.tipBg, w.tipTxt)
	w.tip.Hide()
	w.ExtendBaseWidget(w)
	return w
}

// CreateRenderer implements fyne.Widget.
func (w *skyWidget) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewStack(w.raster, container.NewWithoutLayout(w.tip)))
}

// MinSize implements fyne.Widget.
func (w *skyWidget) MinSize() fyne.Size { return fyne.NewSize(200, 160) }

// generate is the raster's generator: one frame of the current sky at w×h pixels.
func (w *skyWidget) generate(pw, ph int) image.Image {
	w.mu.Lock()
	defer w.mu.Unlock()
	if pw <= 0 || ph <= 0 {
		return image.NewRGBA(image.Rect(0, 0, 1, 1))
	}
	if sz := w.Size(); sz.Width > 0 {
		w.pxScale = float32(pw) / sz.Width
	}
	if w.img == nil || w.img.Rect.Dx() != pw || w.img.Rect.Dy() != ph {
		w.img = image.NewRGBA(image.Rect(0, 0, pw, ph))
	}
	s := w.vm.Sky()
	w.ensureView(s, pw, ph)
	sel, _ := w.vm.Selected.Get()
	t0 := time.Now()
	w.ren.Render(w.img, s.Graph, s.Layout, w.view, starmap.State{AntiAlias: !w.moving, Selected: sel.Node, Hover: w.hover,
		Highlight: s.Highlight, Dim: s.Dim, Pointer: w.pointer, PointerIn: w.inside && !w.moving, HoverEdge: w.edge + 1})
	w.drawn += time.Since(t0)
	w.frames++
	return w.img
}

// ensureView fits the view to a new layout (first load) and follows size changes; mu is held.
func (w *skyWidget) ensureView(s *Sky, pw, ph int) {
	if w.fitted != nil && w.fitted.Layout.Radius > 0 && w.view.Zoom > 0 && w.fitted.Timeline == s.Timeline {
		// A reload lays out incrementally: keep the user's view; a resize keeps centre and zoom.
		if w.fitted != s {
			w.fitted = s
			w.fit = starmap.Fit(s.Layout, pw, ph)
		}
		if w.view.Width != pw || w.view.Height != ph {
			w.fit = starmap.Fit(s.Layout, pw, ph)
		}
		w.view.Width, w.view.Height = pw, ph
		return
	}
	w.fit = starmap.Fit(s.Layout, pw, ph)
	w.view = w.fit
	w.fitted = s
}

// refresh redraws the sky.
func (w *skyWidget) refresh() { w.raster.Refresh() }

// toPx converts a position in Fyne units into raster pixels.
func (w *skyWidget) toPx(p fyne.Position) (float64, float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return float64(p.X * w.pxScale), float64(p.Y * w.pxScale)
}

// hit returns the node under a position in Fyne units, or -1.
func (w *skyWidget) hit(p fyne.Position) int {
	px, py := w.toPx(p)
	s := w.vm.Sky()
	w.mu.Lock()
	v := w.view
	w.mu.Unlock()
	if s.Index == nil || v.Zoom <= 0 {
		return -1
	}
	return s.Index.Hit(s.Graph, v, px, py, hitSlop*float64(w.pxScale))
}

// moved marks the sky as moving (aliased frames) until restDelay after the last call.
func (w *skyWidget) moved() {
	w.mu.Lock()
	w.moving = true
	if w.rest != nil {
		w.rest.Stop()
	}
	w.rest = time.AfterFunc(restDelay, func() {
		fyne.Do(func() {
			w.mu.Lock()
			w.moving = false
			w.mu.Unlock()
			w.refresh()
		})
	})
	w.mu.Unlock()
	w.refresh()
}

// Dragged implements fyne.Draggable: the sky follows the pointer.
func (w *skyWidget) Dragged(e *fyne.DragEvent) {
	w.stopFlight()
	w.mu.Lock()
	if !w.dragging {
		w.dragging, w.dragAt, w.dragF0, w.dragD0, w.drags = true, time.Now(), w.frames, w.drawn, 0
	}
	w.drags++
	if w.view.Zoom > 0 {
		w.view.Center.X -= float64(e.Dragged.DX*w.pxScale) / w.view.Zoom
		w.view.Center.Y -= float64(e.Dragged.DY*w.pxScale) / w.view.Zoom
	}
	w.mu.Unlock()
	w.hideTip()
	w.moved()
}

// DragEnd implements fyne.Draggable; it traces the frames drawn during the drag.
func (w *skyWidget) DragEnd() {
	w.mu.Lock()
	frames, took, drawn, drags := w.frames-w.dragF0, time.Since(w.dragAt), w.drawn-w.dragD0, w.drags
	w.dragging = false
	w.mu.Unlock()
	if w.vm.trace != nil && took > 0 {
		w.vm.trace("sky_drag", map[string]any{"frames": frames, "ms": took.Milliseconds(), "fps": float64(frames) / took.Seconds(),
			"raster_ms": drawn.Milliseconds(), "events": drags})
	}
}

// Scrolled implements fyne.Scrollable: the wheel zooms about the pointer.
func (w *skyWidget) Scrolled(e *fyne.ScrollEvent) {
	w.stopFlight()
	px, py := w.toPx(e.Position)
	w.zoomAt(px, py, math.Exp(float64(e.Scrolled.DY)*wheelZoom))
	w.moved()
}

// zoomAt multiplies the zoom by f keeping the sky point under pixel (px, py) in place.
func (w *skyWidget) zoomAt(px, py, f float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	v := w.view
	if v.Zoom <= 0 || w.fit.Zoom <= 0 {
		return
	}
	anchor := v.ToSky(starmap.Point{X: px, Y: py})
	z := math.Min(math.Max(v.Zoom*f, w.fit.Zoom*minZoomFactor), w.fit.Zoom*maxZoomFactor)
	v.Zoom = z
	v.Center.X = anchor.X - (px-float64(v.Width)/2)/z
	v.Center.Y = anchor.Y - (py-float64(v.Height)/2)/z
	w.view = v
}

// Zoom zooms about the centre by f (the + and − buttons).
func (w *skyWidget) Zoom(f float64) {
	w.stopFlight()
	w.mu.Lock()
	cx, cy := float64(w.view.Width)/2, float64(w.view.Height)/2
	w.mu.Unlock()
	w.zoomAt(cx, cy, f)
	w.moved()
}

// Fit shows the whole sky.
func (w *skyWidget) Fit() {
	w.stopFlight()
	w.mu.Lock()
	w.view = w.fit
	w.mu.Unlock()
	w.refresh()
}

// Tapped implements fyne.Tappable: select the star under the pointer (or nothing).
func (w *skyWidget) Tapped(e *fyne.PointEvent) {
	i := w.hit(e.Position)
	vm := w.vm
	vm.spawn(func(ctx context.Context) { _ = vm.Select(ctx, i) })
}

// MouseIn implements desktop.Hoverable.
func (w *skyWidget) MouseIn(e *desktop.MouseEvent) { w.MouseMoved(e) }

// MouseMoved implements desktop.Hoverable: hovering a star outlines it and shows its tooltip;
// hovering a line (away from stars) brightens it and names its relation; the stars near the
// pointer are labelled.
func (w *skyWidget) MouseMoved(e *desktop.MouseEvent) {
	i := w.hit(e.Position)
	edge := -1
	if i < 0 {
		edge = w.hitEdge(e.Position)
	}
	px, py := w.toPx(e.Position)
	w.mu.Lock()
	changed := i != w.hover || edge != w.edge || !w.inside ||
		math.Hypot(px-w.pointer.X, py-w.pointer.Y) > pointerStep*float64(w.pxScale)
	w.hover, w.edge, w.inside = i, edge, true
	if changed {
		w.pointer = starmap.Point{X: px, Y: py}
	}
	w.mu.Unlock()
	switch {
	case i >= 0:
		w.showTip(tooltipText(w.vm.Sky(), i), e.Position)
	case edge >= 0:
		w.showTip(edgeText(w.vm.Sky(), edge), e.Position)
	default:
		w.hideTip()
	}
	if changed {
		w.refresh()
	}
}

// pointerStep is how far, in Fyne units, the pointer moves before the labels near it are
// placed again.
const pointerStep = 12

// hitEdge returns the edge under a position in Fyne units, or -1.
func (w *skyWidget) hitEdge(p fyne.Position) int {
	px, py := w.toPx(p)
	s := w.vm.Sky()
	w.mu.Lock()
	v := w.view
	slop := 3 * float64(w.pxScale)
	w.mu.Unlock()
	if v.Zoom <= 0 {
		return -1
	}
	return starmap.HitEdge(s.Graph, s.Layout, v, px, py, slop)
}

// edgeText names the relation of edge k: "Alice — lives in — Porto".
func edgeText(s *Sky, k int) string {
	if k < 0 || k >= len(s.Graph.Edges) {
		return ""
	}
	e := s.Graph.Edges[k]
	rel := e.Label
	if rel == "" {
		rel = T("mentioned in")
	}
	return s.Graph.Nodes[e.From].Label + " — " + rel + " — " + s.Graph.Nodes[e.To].Label
}

// MouseOut implements desktop.Hoverable.
func (w *skyWidget) MouseOut() {
	w.mu.Lock()
	changed := w.hover != -1 || w.edge != -1 || w.inside
	w.hover, w.edge, w.inside = -1, -1, false
	w.mu.Unlock()
	w.hideTip()
	if changed {
		w.refresh()
	}
}

// tooltipText describes node i.
func tooltipText(s *Sky, i int) string {
	if e, ok := s.Entity(i); ok {
		text := fmt.Sprintf("%s · %s · %s", e.Name, kindText(e.Kind), Tf("%d mentions", e.Mentions))
		if e.Pinned {
			text += " · " + T("pinned")
		}
		return text
	}
	if ev, ok := s.Event(i); ok {
		return fmt.Sprintf("%s · %s", ev.Time.Local().Format("2006-01-02 15:04"), snippet(ev.Content, 60))
	}
	return ""
}

// showTip shows a tooltip next to the pointer, kept inside the widget.
func (w *skyWidget) showTip(text string, at fyne.Position) {
	if text == "" {
		w.hideTip()
		return
	}
	w.tipTxt.Text = text
	ts := fyne.MeasureText(text, w.tipTxt.TextSize, w.tipTxt.TextStyle)
	pad := float32(6)
	size := fyne.NewSize(ts.Width+2*pad, ts.Height+2*pad)
	pos := at.Add(fyne.NewPos(14, 14))
	if sz := w.Size(); pos.X+size.Width > sz.Width {
		pos.X = max(0, at.X-size.Width-8)
	}
	if sz := w.Size(); pos.Y+size.Height > sz.Height {
		pos.Y = max(0, at.Y-size.Height-8)
	}
	w.tipBg.Resize(size)
	w.tipBg.Move(pos)
	w.tipTxt.Move(pos.Add(fyne.NewPos(pad, pad)))
	w.tipTxt.Resize(ts)
	w.tip.Show()
	w.tip.Refresh()
}

func (w *skyWidget) hideTip() {
	if w.tip.Visible() {
		w.tip.Hide()
	}
}

// stopFlight ends a running flight (the user took over).
func (w *skyWidget) stopFlight() {
	w.mu.Lock()
	a := w.anim
	w.anim = nil
	w.mu.Unlock()
	if a != nil {
		a.Stop()
	}
}

// FlyTo moves the view to node i, zooming in, over flyDuration (eased).
func (w *skyWidget) FlyTo(i int) {
	s := w.vm.Sky()
	if i < 0 || i >= len(s.Layout.Pos) {
		return
	}
	w.stopFlight()
	w.mu.Lock()
	from := w.view
	to := from
	to.Center = s.Layout.Pos[i]
	if w.fit.Zoom > 0 {
		to.Zoom = math.Max(from.Zoom, w.fit.Zoom*flyZoomFactor)
	}
	if flyDuration <= 0 || from.Zoom <= 0 {
		w.view = to
		w.mu.Unlock()
		w.refresh()
		return
	}
	w.moving = true
	a := fyne.NewAnimation(flyDuration, func(f float32) {
		t := float64(f)
		w.mu.Lock()
		// Zoom interpolates geometrically, the centre linearly in the zoom's frame.
		w.view.Zoom = from.Zoom * math.Pow(to.Zoom/from.Zoom, t)
		w.view.Center.X = from.Center.X + (to.Center.X-from.Center.X)*t
		w.view.Center.Y = from.Center.Y + (to.Center.Y-from.Center.Y)*t
		if f >= 1 {
			w.moving = false
		}
		w.mu.Unlock()
		w.refresh()
	})
	a.Curve = fyne.AnimationEaseInOut
	w.anim = a
	w.mu.Unlock()
	a.Start()
}

// View returns the current view (tests).
func (w *skyWidget) View() starmap.View {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.view
}

// Frames counts the frames drawn (tests and the fps report).
func (w *skyWidget) Frames() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.frames
}
