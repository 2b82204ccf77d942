package gui

import (
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

func TestFyneTestDriver(t *testing.T) {
	test.NewTempApp(t)
	l := widget.NewLabel(T("English"))
	w := test.NewTempWindow(t, l)
	if w.Content() != l {
		t.Fatal("content")
	}
}
