package gui

import (
	_ "embed"

	"fyne.io/fyne/v2"
)

// The app icon: a four-pointed star inside a tilted orbit on a dark disc. icon.svg is the
// source; icon.png (256×256) is rendered from it by TestIconPNG (go test ./gui -run
// TestIconPNG -update-icon) and is what windows, the tray and notifications use.
var (
	//go:embed assets/icon.svg
	iconSVG []byte
	//go:embed assets/icon.png
	iconPNG []byte
)

// Icon returns the app icon as a 256×256 PNG resource.
func Icon() fyne.Resource { return fyne.NewStaticResource("hologram.png", iconPNG) }

// IconSVG returns the app icon's SVG source (for scalable uses such as packaging).
func IconSVG() fyne.Resource { return fyne.NewStaticResource("hologram.svg", iconSVG) }
