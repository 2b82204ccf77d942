package gui

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// uiKernel serves a fresh fake kernel on a unix socket and returns it with the real HTTP client
// to it.
func uiKernel(t *testing.T) (*clienttest.Fake, *client.HTTP) {
	t.Helper()
	f := clienttest.New()
	c, err := client.Dial(client.Options{Socket: clienttest.ServeUnix(t, f)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return f, c
}

// uiDesktop is the HTTP client of a fake kernel whose TestProvider and DetectProviders are
// answered by the test (the fake does not serve those routes); every other call goes over HTTP.
type uiDesktop struct {
	client.Service

	mu        sync.Mutex
	check     client.ProviderCheck
	checkErr  error
	tested    []client.ProviderConfig
	found     []client.ProviderConfig
	detectErr error
}

func (d *uiDesktop) TestProvider(_ context.Context, p client.ProviderConfig) (client.ProviderCheck, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.tested = append(d.tested, p)
	return d.check, d.checkErr
}

func (d *uiDesktop) DetectProviders(context.Context) ([]client.ProviderConfig, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.found, d.detectErr
}

func (d *uiDesktop) lastTested() []client.ProviderConfig {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]client.ProviderConfig(nil), d.tested...)
}

// uiRequests lists the fake's requests as "METHOD path".
func uiRequests(f *clienttest.Fake) []string {
	var out []string
	for _, r := range f.Requests() {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

// uiWalk visits o and everything it draws: containers' objects and widgets' rendered objects.
func uiWalk(o fyne.CanvasObject, visit func(fyne.CanvasObject)) {
	if o == nil || !o.Visible() {
		return
	}
	visit(o)
	switch x := o.(type) {
	case *fyne.Container:
		for _, c := range x.Objects {
			uiWalk(c, visit)
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(x).Objects() {
			uiWalk(c, visit)
		}
	}
}

// uiRoots is what a window shows: its content, then its overlays (dialogs), topmost last.
func uiRoots(w fyne.Window) []fyne.CanvasObject {
	return append([]fyne.CanvasObject{w.Content()}, w.Canvas().Overlays().List()...)
}

// uiButtons returns the visible buttons labelled text in w, overlays last.
func uiButtons(w fyne.Window, text string) []*widget.Button {
	var out []*widget.Button
	for _, r := range uiRoots(w) {
		uiWalk(r, func(o fyne.CanvasObject) {
			if b, ok := o.(*widget.Button); ok && b.Text == text {
				out = append(out, b)
			}
		})
	}
	return out
}

// uiButton returns the one visible button labelled text (the topmost when a dialog repeats it).
func uiButton(t *testing.T, w fyne.Window, text string) *widget.Button {
	t.Helper()
	bs := uiButtons(w, text)
	if len(bs) == 0 {
		t.Fatalf("no button %q; labels: %q", text, uiTexts(w))
	}
	return bs[len(bs)-1]
}

// uiTexts returns the texts of the visible labels in w.
func uiTexts(w fyne.Window) []string {
	var out []string
	for _, r := range uiRoots(w) {
		uiWalk(r, func(o fyne.CanvasObject) {
			if l, ok := o.(*widget.Label); ok && l.Text != "" {
				out = append(out, l.Text)
			}
		})
	}
	return out
}

// uiHasText reports whether a visible label in w contains s.
func uiHasText(w fyne.Window, s string) bool {
	for _, x := range uiTexts(w) {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

// uiEntry returns the entry whose placeholder is ph.
func uiEntry(t *testing.T, w fyne.Window, ph string) *widget.Entry {
	t.Helper()
	var found *widget.Entry
	for _, r := range uiRoots(w) {
		uiWalk(r, func(o fyne.CanvasObject) {
			switch e := o.(type) {
			case *widget.Entry:
				if e.PlaceHolder == ph {
					found = e
				}
			case *widget.SelectEntry:
				if e.PlaceHolder == ph {
					found = &e.Entry
				}
			}
		})
	}
	if found == nil {
		t.Fatalf("no entry with placeholder %q", ph)
	}
	return found
}

func uiGet[T any](t *testing.T, b interface{ Get() (T, error) }) T {
	t.Helper()
	v, err := b.Get()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestProviderNameFor(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"https://api.openai.com/v1", "openai"},
		{"https://api.deepseek.com", "deepseek"},
		{"https://dashscope.aliyuncs.com/compatible-mode/v1", "dashscope"},
		{"https://openrouter.ai/api/v1", "openrouter"},
		{"https://ai.example.com/v1", "example"},
		{"http://127.0.0.1:11434/v1", "ollama"},
		{"http://localhost:8080/v1", "llamacpp"},
		{"http://[::1]:9000/v1", "local"},
		{"http://192.168.1.20:8000/v1", "server"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := providerNameFor(u); got != tc.want {
			t.Errorf("providerNameFor(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

func TestWelcomeValidation(t *testing.T) {
	for _, tc := range []struct {
		name, url, model, want string
	}{
		{"no url", "", "m", "Enter the server's base URL"},
		{"not http", "ftp://host/v1", "m", "must start with http:// or https://"},
		{"no scheme", "api.openai.com/v1", "m", "must start with http:// or https://"},
		{"no host", "https:///v1", "m", "has no host name"},
		{"no model", "https://api.openai.com/v1", "  ", "Enter a model name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, c := uiKernel(t)
			d := &uiDesktop{Service: c}
			vm := NewWelcomeVM(d)
			_ = vm.BaseURL.Set(tc.url)
			_ = vm.Model.Set(tc.model)
			if _, err := vm.Test(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Test: err = %v, want %q", err, tc.want)
			}
			if _, err := vm.Save(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Save: err = %v, want %q", err, tc.want)
			}
			if s := uiGet[string](t, vm.Status); !strings.Contains(s, tc.want) || !uiGet[bool](t, vm.Failed) {
				t.Errorf("status = %q (failed %v), want the message shown as failed", s, uiGet[bool](t, vm.Failed))
			}
			if n := len(d.lastTested()); n != 0 {
				t.Errorf("%d connection tests sent for an invalid form", n)
			}
			for _, r := range uiRequests(f) {
				if strings.HasPrefix(r, "POST") {
					t.Errorf("request sent for an invalid form: %s", r)
				}
			}
		})
	}
}

func TestWelcomeTest(t *testing.T) {
	for _, tc := range []struct {
		name       string
		check      client.ProviderCheck
		err        error
		wantStatus string
		wantFailed bool
		wantErr    bool
		wantModels []string
	}{
		{"ok", client.ProviderCheck{OK: true, Latency: 420 * time.Millisecond, Model: "gpt-4o-mini", Models: []string{"gpt-4o", "gpt-4o-mini"}},
			nil, "Connection OK: gpt-4o-mini answered in 420 ms.", false, false, []string{"gpt-4o", "gpt-4o-mini"}},
		{"ok without model", client.ProviderCheck{OK: true, Latency: 1500 * time.Millisecond},
			nil, "Connection OK: the server answered in 1500 ms.", false, false, nil},
		{"refused by the server", client.ProviderCheck{Error: "401 Unauthorized: invalid api key"},
			nil, "Connection failed: 401 Unauthorized: invalid api key", true, false, nil},
		{"kernel unreachable", client.ProviderCheck{}, client.ErrUnavailable,
			"Could not test the connection: unavailable", true, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := uiKernel(t)
			d := &uiDesktop{Service: c, check: tc.check, checkErr: tc.err}
			vm := NewWelcomeVM(d)
			_ = vm.BaseURL.Set(" https://api.openai.com/v1/ ")
			_ = vm.Model.Set("gpt-4o-mini")
			_ = vm.APIKey.Set("sk-test")
			_, err := vm.Test(context.Background())
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if s := uiGet[string](t, vm.Status); s != tc.wantStatus {
				t.Errorf("status = %q, want %q", s, tc.wantStatus)
			}
			if f := uiGet[bool](t, vm.Failed); f != tc.wantFailed {
				t.Errorf("failed = %v, want %v", f, tc.wantFailed)
			}
			if m := uiGet[[]string](t, vm.Models); strings.Join(m, ",") != strings.Join(tc.wantModels, ",") {
				t.Errorf("models = %q, want %q", m, tc.wantModels)
			}
			want := client.ProviderConfig{Name: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini", APIKey: "sk-test"}
			if got := d.lastTested(); len(got) != 1 || got[0] != want {
				t.Errorf("tested %+v, want [%+v]", got, want)
			}
			if uiGet[bool](t, vm.Busy) {
				t.Error("still busy after the test")
			}
		})
	}
}

func TestWelcomeDetect(t *testing.T) {
	ollama := client.ProviderConfig{Name: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen2.5:7b"}
	llama := client.ProviderConfig{Name: "llamacpp", BaseURL: "http://127.0.0.1:8080/v1", Model: "local-model"}
	for _, tc := range []struct {
		name    string
		found   []client.ProviderConfig
		err     error
		want    string
		wantErr bool
	}{
		{"two", []client.ProviderConfig{ollama, llama}, nil, "Found 2 local server(s)", false},
		{"none", nil, nil, "No local model server found", false},
		{"kernel error", nil, client.ErrUnavailable, "Could not look for local servers: unavailable", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := uiKernel(t)
			vm := NewWelcomeVM(&uiDesktop{Service: c, found: tc.found, detectErr: tc.err})
			err := vm.Detect(context.Background())
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if s := uiGet[string](t, vm.DetectStatus); !strings.HasPrefix(s, tc.want) {
				t.Errorf("detect status = %q, want %q…", s, tc.want)
			}
			if got := uiGet[[]client.ProviderConfig](t, vm.Detected); len(got) != len(tc.found) {
				t.Errorf("detected %v, want %v", got, tc.found)
			}
			if uiGet[bool](t, vm.Detecting) {
				t.Error("still detecting")
			}
		})
	}
}

func TestWelcomeSave(t *testing.T) {
	f, c := uiKernel(t)
	vm := NewWelcomeVM(&uiDesktop{Service: c})
	vm.Use(client.ProviderConfig{Name: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen2.5:7b"})
	_ = vm.APIKey.Set("local-key")
	p, err := vm.Save(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "ollama" || !p.HasKey {
		t.Errorf("saved %+v", p)
	}
	stored, ok := f.ProviderConfig("ollama")
	if !ok || stored.APIKey != "local-key" || stored.Model != "qwen2.5:7b" || stored.BaseURL != "http://127.0.0.1:11434/v1" {
		t.Errorf("kernel has %+v (%v)", stored, ok)
	}
	if k := uiGet[string](t, vm.APIKey); k != "" {
		t.Errorf("the key stays in the form: %q", k)
	}
	if s := uiGet[string](t, vm.Status); s != "Saved provider ollama." {
		t.Errorf("status = %q", s)
	}

	// A kernel that refuses the provider: the error is shown, the key kept for another try.
	f.Token = "required-now"
	_ = vm.APIKey.Set("k2")
	if _, err := vm.Save(context.Background()); !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("err = %v, want unauthorized", err)
	}
	if s := uiGet[string](t, vm.Status); !strings.HasPrefix(s, "Could not save the provider: ") || !uiGet[bool](t, vm.Failed) {
		t.Errorf("status = %q", s)
	}
	if k := uiGet[string](t, vm.APIKey); k != "k2" {
		t.Errorf("key after a failed save = %q", k)
	}

	// Another server typed over a detected one is named after its own host.
	f.Token = ""
	vm.Use(client.ProviderConfig{Name: "llamacpp", BaseURL: "http://127.0.0.1:8080/v1", Model: "m"})
	_ = vm.BaseURL.Set("https://api.moonshot.cn/v1")
	if p, err := vm.Save(context.Background()); err != nil || p.Name != "moonshot" {
		t.Errorf("saved %+v, %v; want the name moonshot", p, err)
	}
}

// welcomeWindow shows the welcome view over d in a test window and waits for its first
// detection.
func welcomeWindow(t *testing.T, d client.Service, done func()) (*WelcomeVM, fyne.Window) {
	t.Helper()
	test.NewTempApp(t)
	vm := NewWelcomeVM(d)
	view := NewWelcomeView(vm, done)
	vm.Wait() // the view's goroutines update widgets: show it only once they are done
	w := test.NewTempWindow(t, view)
	w.Resize(fyne.NewSize(800, 640))
	return vm, w
}

func TestWelcomeViewLocalServer(t *testing.T) {
	f, c := uiKernel(t)
	d := &uiDesktop{Service: c,
		found: []client.ProviderConfig{{Name: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen2.5:7b"}},
		check: client.ProviderCheck{OK: true, Latency: 87 * time.Millisecond, Model: "qwen2.5:7b", Models: []string{"qwen2.5:7b", "llama3.2:3b"}}}
	var done int
	vm, w := welcomeWindow(t, d, func() { done++ })
	test.AssertRendersToMarkup(t, "welcome.xml", w.Canvas())

	test.Tap(uiButton(t, w, "Use ollama (qwen2.5:7b) at http://127.0.0.1:11434/v1"))
	if u := uiEntry(t, w, "e.g. https://api.openai.com/v1").Text; u != "http://127.0.0.1:11434/v1" {
		t.Errorf("base URL entry = %q", u)
	}
	test.Tap(uiButton(t, w, "Test connection"))
	vm.Wait()
	if !uiHasText(w, "Connection OK: qwen2.5:7b answered in 87 ms.") {
		t.Errorf("no test result shown: %q", uiTexts(w))
	}
	test.Tap(uiButton(t, w, "Save and start chatting"))
	vm.Wait()
	if done != 1 {
		t.Errorf("done called %d times", done)
	}
	if _, ok := f.ProviderConfig("ollama"); !ok {
		t.Error("provider not saved in the kernel")
	}
}

func TestWelcomeViewTyped(t *testing.T) {
	f, c := uiKernel(t)
	d := &uiDesktop{Service: c}
	var done int
	vm, w := welcomeWindow(t, d, func() { done++ })
	if !uiHasText(w, "No local model server found") {
		t.Errorf("no 'none found' message: %q", uiTexts(w))
	}

	// A model is missing: the message shows, nothing is saved, done is not called.
	test.Type(uiEntry(t, w, "e.g. https://api.openai.com/v1"), "https://api.deepseek.com/v1")
	test.Tap(uiButton(t, w, "Save and start chatting"))
	vm.Wait()
	if !uiHasText(w, "Enter a model name") || done != 0 {
		t.Errorf("done %d, labels %q", done, uiTexts(w))
	}

	test.Type(uiEntry(t, w, "e.g. gpt-4o-mini, qwen2.5:7b"), "deepseek-chat")
	test.Type(uiEntry(t, w, "Not needed for local servers"), "sk-typed")
	test.Tap(uiButton(t, w, "Save and start chatting"))
	vm.Wait()
	if done != 1 {
		t.Fatalf("done called %d times; labels %q", done, uiTexts(w))
	}
	p, ok := f.ProviderConfig("deepseek")
	if !ok || p.APIKey != "sk-typed" || p.Model != "deepseek-chat" {
		t.Errorf("kernel has %+v", p)
	}
	if e := uiEntry(t, w, "Not needed for local servers"); e.Text != "" {
		t.Errorf("key entry still holds %q", e.Text)
	}
}

// TestWelcomeFormHelps: the placeholders read as examples; typing a well-known provider's
// base URL offers its models before any test (the list was empty until a test succeeded);
// a red failure goes away once the owner edits the form instead of staying stale.
func TestWelcomeFormHelps(t *testing.T) {
	_, c := uiKernel(t)
	d := &uiDesktop{Service: c, check: client.ProviderCheck{OK: true, Latency: time.Millisecond, Model: "deepseek-chat", Models: []string{"deepseek-chat", "deepseek-coder"}}}
	vm, w := welcomeWindow(t, d, nil)
	urlEntry := uiEntry(t, w, "e.g. https://api.openai.com/v1")
	modelEntry := uiEntry(t, w, "e.g. gpt-4o-mini, qwen2.5:7b")
	if urlEntry.Text != "" || modelEntry.Text != "" {
		t.Fatalf("the form starts filled in: %q %q", urlEntry.Text, modelEntry.Text)
	}

	test.Type(urlEntry, "https://api.deepseek.com/v1")
	if m := uiGet[[]string](t, vm.Models); !slices.Contains(m, "deepseek-chat") {
		t.Errorf("models offered for DeepSeek before a test: %q", m)
	}

	// Saved without a model: red. Typing the model clears it.
	test.Tap(uiButton(t, w, "Save and start chatting"))
	vm.Wait()
	if !uiGet[bool](t, vm.Failed) || !uiHasText(w, "Enter a model name") {
		t.Fatalf("no failure shown: %q", uiTexts(w))
	}
	test.Type(modelEntry, "deepseek-chat")
	if uiGet[bool](t, vm.Failed) || uiHasText(w, "Enter a model name") {
		t.Errorf("the failure stays after the form was edited: %q", uiTexts(w))
	}

	// A test lists the server's own models; they stay while the URL is that server's.
	test.Tap(uiButton(t, w, "Test connection"))
	vm.Wait()
	if m := uiGet[[]string](t, vm.Models); !slices.Equal(m, []string{"deepseek-chat", "deepseek-coder"}) {
		t.Errorf("models after the test: %q", m)
	}
	urlEntry.SetText("http://127.0.0.1:11434/v1")
	if m := uiGet[[]string](t, vm.Models); !slices.Contains(m, "qwen2.5:7b") {
		t.Errorf("models offered for Ollama: %q", m)
	}
	urlEntry.SetText("https://llm.internal.example/v1")
	if m := uiGet[[]string](t, vm.Models); len(m) != 0 {
		t.Errorf("models offered for an unknown server: %q", m)
	}
}
