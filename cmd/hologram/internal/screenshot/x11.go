package screenshot

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"log"
	"math/bits"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// errNoDisplay is wrapped when the X11 display cannot be reached.
var errNoDisplay = errors.New("no X11 display")

// quietXGB silences xgb's package logger, which writes to stderr on its own (e.g. "Could not
// get authority info" under an Xvfb without Xauthority); the errors that matter are returned.
var quietXGB = sync.OnceFunc(func() { xgb.Logger = log.New(io.Discard, "", 0) })

// stripRows bounds the rows of one GetImage request, so that a reply stays a few MiB (a 4K
// screen is ≈ 33 MB in one piece).
const stripRows = 256

// CaptureX11 captures the root window of the X11 display (the whole screen, as the user sees
// it) and returns it as PNG. Only TrueColor/DirectColor screens of 32 bits per pixel (depth 24
// or 32, what every X server of this century runs) are read; the channels are taken by the
// root visual's masks, in the server's byte order.
func CaptureX11(ctx context.Context, display string) ([]byte, error) {
	quietXGB()
	conn, err := xgb.NewConnDisplay(display)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errNoDisplay, display, err)
	}
	defer conn.Close()
	setup := xproto.Setup(conn)
	if len(setup.Roots) == 0 {
		return nil, fmt.Errorf("X11 display %s has no screen", display)
	}
	scr := setup.DefaultScreen(conn)
	var bpp byte
	for _, f := range setup.PixmapFormats {
		if f.Depth == scr.RootDepth {
			bpp = f.BitsPerPixel
		}
	}
	if bpp != 32 {
		return nil, fmt.Errorf("X11 display %s: depth %d with %d bits per pixel is not supported (want 32)", display, scr.RootDepth, bpp)
	}
	var vis *xproto.VisualInfo
	for _, d := range scr.AllowedDepths {
		for i := range d.Visuals {
			if d.Visuals[i].VisualId == scr.RootVisual {
				vis = &d.Visuals[i]
			}
		}
	}
	if vis == nil || (vis.Class != xproto.VisualClassTrueColor && vis.Class != xproto.VisualClassDirectColor) {
		return nil, fmt.Errorf("X11 display %s: the root visual is not TrueColor", display)
	}
	var order binary.ByteOrder = binary.LittleEndian
	if setup.ImageByteOrder == xproto.ImageOrderMSBFirst {
		order = binary.BigEndian
	}
	r, g, b := channel(vis.RedMask), channel(vis.GreenMask), channel(vis.BlueMask)
	w, h := int(scr.WidthInPixels), int(scr.HeightInPixels)
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y0 := 0; y0 < h; y0 += stripRows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rows := min(stripRows, h-y0)
		rep, err := xproto.GetImage(conn, xproto.ImageFormatZPixmap, xproto.Drawable(scr.Root), 0, int16(y0), uint16(w), uint16(rows), ^uint32(0)).Reply()
		if err != nil {
			return nil, fmt.Errorf("X11 GetImage: %w", err)
		}
		if len(rep.Data) < 4*w*rows {
			return nil, fmt.Errorf("X11 GetImage: %d bytes for %d×%d pixels", len(rep.Data), w, rows)
		}
		for i := 0; i < w*rows; i++ {
			px := order.Uint32(rep.Data[4*i:])
			o := img.PixOffset(i%w, y0+i/w)
			img.Pix[o], img.Pix[o+1], img.Pix[o+2], img.Pix[o+3] = r.of(px), g.of(px), b.of(px), 0xff
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// mask is one colour channel of a visual: where its bits are and how many.
type mask struct {
	m            uint32
	shift, width int
}

func channel(m uint32) mask {
	return mask{m: m, shift: bits.TrailingZeros32(m), width: bits.OnesCount32(m)}
}

// of is the channel of px scaled to 8 bits.
func (c mask) of(px uint32) uint8 {
	if c.width == 0 {
		return 0
	}
	v := (px & c.m) >> c.shift
	switch {
	case c.width == 8:
		return uint8(v)
	case c.width > 8:
		return uint8(v >> (c.width - 8))
	default: // e.g. 5 or 6 bits: spread over 0–255
		return uint8(v * 255 / (1<<c.width - 1))
	}
}
