package starmap

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
)

// DefaultFontPaths are tried, in order, after the paths given to LoadFont: Debian's
// fonts-noto-cjk (Noto Sans CJK, which covers Latin and Chinese), then DejaVu Sans (Latin,
// Greek, Cyrillic; no CJK).
var DefaultFontPaths = []string{
	"/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
	"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
}

// Font is a parsed TrueType/OpenType font used for star labels. It is immutable and may be shared
// by several Renderers (each keeps its own faces and glyph cache).
type Font struct {
	sf *sfnt.Font
	// Path is the file the font was read from.
	Path string
	// Name is the font's full name (for a collection, the member chosen).
	Name string
}

// LoadFont reads the first usable font among paths, then DefaultFontPaths. A file may be a single
// TTF/OTF or a TTC/OTC collection; from a collection the Simplified Chinese member is preferred
// (its name contains " SC"), else the first. It returns an error when no candidate can be read
// and parsed; callers then draw no labels.
func LoadFont(paths ...string) (*Font, error) {
	var errs []error
	for _, p := range append(append([]string(nil), paths...), DefaultFontPaths...) {
		f, err := loadFontFile(p)
		if err == nil {
			return f, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("starmap: no usable label font: %w", errors.Join(errs...))
}

func loadFontFile(path string) (*Font, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("font %s: %w", path, err)
		}
		return nil, fmt.Errorf("read font %s: %w", path, err)
	}
	c, err := opentype.ParseCollection(b)
	if err != nil {
		return nil, fmt.Errorf("parse font %s: %w", path, err)
	}
	var (
		chosen *sfnt.Font
		name   string
		buf    sfnt.Buffer
	)
	for i := 0; i < c.NumFonts(); i++ {
		f, err := c.Font(i)
		if err != nil {
			return nil, fmt.Errorf("parse font %s member %d: %w", path, i, err)
		}
		n, _ := f.Name(&buf, sfnt.NameIDFull)
		if chosen == nil {
			chosen, name = f, n
		}
		if strings.Contains(n, " SC") {
			chosen, name = f, n
			break
		}
	}
	if chosen == nil {
		return nil, fmt.Errorf("parse font %s: collection is empty", path)
	}
	return &Font{sf: chosen, Path: path, Name: name}, nil
}
