//go:build !nokernel

package main

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/cmd/internal/daemon"
	"github.com/hologramagent/hologram/gui"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
)

// TestSettingsImportsChatGPTExport drives Settings → Memory of the desktop app with Fyne's test
// driver over the kernel in-process, as `hologram` runs it: the button opens the real file
// picker, picking a ChatGPT export's .zip streams its conversations.json into the kernel while
// the progress bar climbs to full, the status says what was imported, and the messages are in
// memory; "Distil all memory into facts now" puts their facts into the graph.
func TestSettingsImportsChatGPTExport(t *testing.T) {
	root, err := os.MkdirTemp("", "hs") // short: unix socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	vars := map[string]string{"XDG_CONFIG_HOME": filepath.Join(root, "config"), "XDG_DATA_HOME": filepath.Join(root, "xdgdata"),
		"XDG_RUNTIME_DIR": filepath.Join(root, "run"), "HOME": root}
	env := func(k string) string { return vars[k] }
	cfg, _, err := config.Load("hologram", []string{"--data", filepath.Join(root, "data"), "--socket", filepath.Join(root, "run", "k.sock")}, env)
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Start(context.Background(), "hologram", cfg, env, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Error(err)
		}
	})

	// An export of 400 conversations, enough reads for the bar to pass many percents.
	exports := t.TempDir()
	const n = 400
	convs := make([]any, n)
	for i := range convs {
		id := fmt.Sprintf("conv%03d", i)
		convs[i] = map[string]any{"id": id, "title": fmt.Sprintf("Chat %d", i), "create_time": 1709287200 + i, "current_node": id + "-a",
			"mapping": map[string]any{
				id + "-u": map[string]any{"message": map[string]any{"id": id + "-u", "author": map[string]any{"role": "user"}, "create_time": 1709287200 + i,
					"content": map[string]any{"content_type": "text", "parts": []string{userText(i)}}}, "parent": nil, "children": []string{id + "-a"}},
				id + "-a": map[string]any{"message": map[string]any{"id": id + "-a", "author": map[string]any{"role": "assistant"}, "create_time": 1709287201 + i,
					"content": map[string]any{"content_type": "text", "parts": []string{"好的，我记住了。"}}}, "parent": id + "-u", "children": []string{}},
			}}
	}
	raw, err := json.Marshal(convs)
	if err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(exports, "chatgpt-export.zip")
	zf, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	w, _ := zw.Create("conversations.json")
	w.Write(raw)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zf.Close()

	a := test.NewTempApp(t)
	// The file picker opens in the folder last used: the exports.
	a.Preferences().SetString("fyne:fileDialogLastFolder", storage.NewFileURI(exports).String())
	vm := gui.NewSettingsVM(d.Kernel.Service(), gui.SettingsEnv{Prefs: a.Preferences(), Getenv: env, Executable: "/usr/bin/hologram", DataDir: cfg.DataDir})
	win := test.NewTempWindow(t, nil)
	view := gui.NewSettingsView(vm, win)
	vm.Wait() // its first load done: the test driver runs binding updates on the loading goroutine
	win.SetContent(view)
	win.Resize(fyne.NewSize(820, 2000))

	var mu sync.Mutex
	var fractions []float64
	vm.Memory.Fraction.AddListener(binding.NewDataListener(func() {
		v, _ := vm.Memory.Fraction.Get()
		mu.Lock()
		fractions = append(fractions, v)
		mu.Unlock()
	}))

	t0 := time.Now()
	test.Tap(findButton(t, win, "Import ChatGPT conversations (conversations.json or the export's .zip)…"))
	files := findIn[*widget.GridWrap](t, win)
	files.Select(1) // (Parent) is item 0, the export item 1
	test.Tap(findButton(t, win, "Open"))

	status := waitStatus(t, vm, "Imported ")
	t.Logf("imported in %v", time.Since(t0))
	if want := fmt.Sprintf("Imported %d conversations: %d messages in %d new sessions (0 messages already there).", n, 2*n, n); status != want {
		t.Fatalf("status %q, want %q", status, want)
	}
	// The bar climbed by percents to full.
	var rising []float64
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		rising = append(rising[:0], fractions...)
		mu.Unlock()
		if len(rising) > 0 && rising[len(rising)-1] == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mid := 0
	for i, f := range rising {
		if i > 0 && f < rising[i-1] && f != 0 {
			t.Errorf("the bar went back: %v", rising)
		}
		if f > 0 && f < 1 {
			mid++
		}
	}
	if mid < 3 || rising[len(rising)-1] != 1 {
		t.Errorf("bar values %v: want several steps between 0 and 1, then 1", rising)
	}
	hits, err := d.Kernel.Service().SearchMemory(context.Background(), client.MemoryQuery{Text: "parcel code 123"})
	if err != nil || len(hits) == 0 || hits[0].Session != "chatgpt-conv123" {
		t.Errorf("search: %+v, %v", hits, err)
	}

	// Distil everything now: the imported conversations reach the graph.
	test.Tap(findButton(t, win, "Distil all memory into facts now"))
	status = waitStatus(t, vm, "Distilled ")
	if want := fmt.Sprintf("Distilled %d events into ", 2*n); !strings.HasPrefix(status, want) {
		t.Fatalf("status %q, want %q…", status, want)
	}
	g, err := d.Kernel.Service().Graph(context.Background(), client.GraphQuery{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tr := range g.Triples {
		found = found || tr.Predicate == "lives in" && tr.ObjectName == "Porto"
	}
	if !found {
		t.Errorf("the graph lacks lives in Porto: %+v", g.Triples)
	}
}

// userText is the user's message of the ith conversation; the 7th says where the user lives.
func userText(i int) string {
	if i == 7 {
		return "I live in Porto."
	}
	return fmt.Sprintf("remember parcel code %d-%s", i, strings.Repeat("x", 200))
}

// waitStatus waits until the memory section's status starts with prefix (or says a failure).
func waitStatus(t *testing.T, vm *gui.SettingsVM, prefix string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		status, _ := vm.Memory.Status.Text.Get()
		if strings.HasPrefix(status, prefix) || strings.Contains(status, "failed") {
			// The task that set it may still be resetting the progress bindings on its way
			// out (the test driver runs their listeners on that goroutine): let it finish
			// before the test taps the next button.
			vm.Wait()
			return status
		}
		if time.Now().After(deadline) {
			t.Fatalf("no status %q… after 60 s; status %q", prefix, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// findButton returns the visible button labelled text, in the window or its dialogs.
func findButton(t *testing.T, w fyne.Window, text string) *widget.Button {
	t.Helper()
	var found *widget.Button
	walkWindow(w, func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok && b.Text == text && found == nil {
			found = b
		}
	})
	if found == nil {
		t.Fatalf("no button %q", text)
	}
	return found
}

// findIn returns the first visible object of type T in the window or its dialogs.
func findIn[T fyne.CanvasObject](t *testing.T, w fyne.Window) T {
	t.Helper()
	var found T
	ok := false
	walkWindow(w, func(o fyne.CanvasObject) {
		if x, is := o.(T); is && !ok {
			found, ok = x, true
		}
	})
	if !ok {
		t.Fatalf("no %T in the window", found)
	}
	return found
}

// walkWindow visits every visible object of the window's content and overlays (topmost last).
func walkWindow(w fyne.Window, visit func(fyne.CanvasObject)) {
	testUI.drain() // what the view models queued for the UI, first (uiqueue_test.go)
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		if o == nil || !o.Visible() {
			return
		}
		visit(o)
		switch x := o.(type) {
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(x).Objects() {
				walk(c)
			}
		}
	}
	walk(w.Content())
	for _, o := range w.Canvas().Overlays().List() {
		walk(o)
	}
}
