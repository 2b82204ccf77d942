package gui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2/data/binding"

	"github.com/hologramagent/hologram/kernel/client"
)

// vmCallTimeout bounds one kernel call a view starts (TestProvider waits for a real model).
const vmCallTimeout = 2 * time.Minute

// vmTasks runs a view-model's kernel calls off the UI goroutine, so a slow kernel never freezes
// a window.
type vmTasks struct{ wg sync.WaitGroup }

// spawn runs fn on its own goroutine with a context bounded by vmCallTimeout.
func (t *vmTasks) spawn(fn func(ctx context.Context)) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), vmCallTimeout)
		defer cancel()
		fn(ctx)
	}()
}

// Wait blocks until every kernel call the view started so far has returned (tests and
// shutdown use it).
func (t *vmTasks) Wait() { t.wg.Wait() }

// newSliceBinding returns a bound slice whose listeners run when its contents change (a
// binding.List only tells its own listeners about changes of length).
func newSliceBinding[T any]() binding.Item[[]T] {
	return binding.NewItem(func(a, b []T) bool { return reflect.DeepEqual(a, b) })
}

// providerInput is a provider as a person types it into a form.
type providerInput struct {
	Name, BaseURL, Model, APIKey string
	Priority                     int
}

// providerNameRe is the kernel's rule for provider names.
var providerNameRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// config checks the input and returns the provider to send to the kernel; its errors are the
// messages to show, in the current language. An empty name is derived from the base URL.
func (in providerInput) config() (client.ProviderConfig, error) {
	raw := strings.TrimSpace(in.BaseURL)
	if raw == "" {
		return client.ProviderConfig{}, errors.New(T("Enter the server's base URL, e.g. https://api.openai.com/v1."))
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return client.ProviderConfig{}, errors.New(T("The base URL must start with http:// or https://."))
	}
	if u.Hostname() == "" {
		return client.ProviderConfig{}, errors.New(T("The base URL has no host name."))
	}
	model := strings.TrimSpace(in.Model)
	if model == "" {
		return client.ProviderConfig{}, errors.New(T("Enter a model name, e.g. gpt-4o-mini or qwen2.5:7b."))
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		name = providerNameFor(u)
	}
	if !providerNameRe.MatchString(name) {
		return client.ProviderConfig{}, errors.New(T("A provider name uses letters, digits, '.', '_' and '-' only (at most 64)."))
	}
	if in.Priority < 0 {
		return client.ProviderConfig{}, errors.New(T("The priority cannot be negative."))
	}
	return client.ProviderConfig{
		Name: name, BaseURL: strings.TrimRight(raw, "/"), Model: model,
		APIKey: strings.TrimSpace(in.APIKey), Priority: in.Priority,
	}, nil
}

// providerNameFor names a provider after its server: "openai" for api.openai.com, "ollama" and
// "llamacpp" for their usual local ports, "local" for another local server.
func providerNameFor(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || (net.ParseIP(host) != nil && net.ParseIP(host).IsLoopback()) {
		switch u.Port() {
		case "11434":
			return "ollama"
		case "8080":
			return "llamacpp"
		}
		return "local"
	}
	if net.ParseIP(host) != nil {
		return "server"
	}
	labels := strings.Split(strings.TrimPrefix(host, "api."), ".")
	name := labels[0]
	if len(labels) > 2 && len(labels[0]) <= 3 { // e.g. "ai.example.com" → "example"
		name = labels[1]
	}
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return -1
	}, name)
	if name == "" {
		return "provider"
	}
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

// WelcomeVM is the first-run screen's state: the form for the first provider, the connection
// test's outcome and the local servers the kernel found. Its methods block on the kernel; the
// view runs them off the UI goroutine. It is safe for concurrent use.
type WelcomeVM struct {
	vmTasks
	svc client.Service

	// BaseURL, Model and APIKey are the form's fields. The key only passes through to the
	// kernel, which seals it; Save clears it.
	BaseURL, Model, APIKey binding.String
	// Models are the model names to offer (what the tested or detected server serves).
	Models binding.Item[[]string]
	// Status is the outcome of the last action ("Connection OK …", a validation message, an
	// error); Failed says whether it is an error.
	Status binding.String
	Failed binding.Bool
	// Busy is true while a test or save runs.
	Busy binding.Bool
	// Detecting is true while the kernel looks for local servers; DetectStatus says what it found.
	Detecting    binding.Bool
	DetectStatus binding.String
	// Detected holds the local servers found.
	Detected binding.Item[[]client.ProviderConfig]

	mu       sync.Mutex
	name     string // the name of the detected server the form was filled from,
	nameBase string // while the base URL is still that server's
	// testedURL is the base URL whose connection test filled Models.
	testedURL string
}

// NewWelcomeVM returns the welcome screen's view-model over svc.
func NewWelcomeVM(svc client.Service) *WelcomeVM {
	return &WelcomeVM{
		svc: svc, BaseURL: binding.NewString(), Model: binding.NewString(), APIKey: binding.NewString(),
		Models: newSliceBinding[string](), Status: binding.NewString(), Failed: binding.NewBool(),
		Busy: binding.NewBool(), Detecting: binding.NewBool(), DetectStatus: binding.NewString(),
		Detected: newSliceBinding[client.ProviderConfig](),
	}
}

// input reads the form.
func (vm *WelcomeVM) input() providerInput {
	u, _ := vm.BaseURL.Get()
	m, _ := vm.Model.Get()
	k, _ := vm.APIKey.Get()
	vm.mu.Lock()
	name := ""
	if strings.TrimSpace(u) == vm.nameBase {
		name = vm.name
	}
	vm.mu.Unlock()
	return providerInput{Name: name, BaseURL: u, Model: m, APIKey: k}
}

// report sets the status line.
func (vm *WelcomeVM) report(msg string, failed bool) {
	_ = vm.Failed.Set(failed)
	_ = vm.Status.Set(msg)
}

// Detect asks the kernel for local OpenAI-compatible servers and lists them in Detected.
func (vm *WelcomeVM) Detect(ctx context.Context) error {
	_ = vm.Detecting.Set(true)
	defer vm.Detecting.Set(false)
	_ = vm.DetectStatus.Set(T("Looking for local model servers…"))
	found, err := vm.svc.DetectProviders(ctx)
	if err != nil {
		_ = vm.DetectStatus.Set(Tf("Could not look for local servers: %v", err))
		return fmt.Errorf("detect providers: %w", err)
	}
	_ = vm.Detected.Set(found)
	if len(found) == 0 {
		_ = vm.DetectStatus.Set(T("No local model server found (Ollama on port 11434, llama.cpp on port 8080). Enter a provider below."))
	} else {
		_ = vm.DetectStatus.Set(Tf("Found %d local server(s). Pick one to fill in the form:", len(found)))
	}
	return nil
}

// Use fills the form from a detected local server.
func (vm *WelcomeVM) Use(p client.ProviderConfig) {
	vm.mu.Lock()
	vm.name, vm.nameBase = p.Name, p.BaseURL
	vm.mu.Unlock()
	_ = vm.BaseURL.Set(p.BaseURL)
	_ = vm.Model.Set(p.Model)
	_ = vm.APIKey.Set(p.APIKey)
	if p.Model != "" {
		_ = vm.Models.Set([]string{p.Model})
	}
	vm.report(Tf("Filled in %s at %s.", p.Name, p.BaseURL), false)
}

// Test checks the form and makes one real request through the kernel. A server that answers
// with an error is a failed check (Status says why), not an error of Test; the error is for a
// form that does not validate or a kernel that cannot be reached.
func (vm *WelcomeVM) Test(ctx context.Context) (client.ProviderCheck, error) {
	p, err := vm.input().config()
	if err != nil {
		vm.report(err.Error(), true)
		return client.ProviderCheck{}, err
	}
	_ = vm.Busy.Set(true)
	defer vm.Busy.Set(false)
	vm.report(Tf("Testing %s…", p.BaseURL), false)
	check, err := vm.svc.TestProvider(ctx, p)
	if err != nil {
		vm.report(Tf("Could not test the connection: %v", err), true)
		return client.ProviderCheck{}, fmt.Errorf("test provider %s: %w", p.Name, err)
	}
	if len(check.Models) > 0 {
		_ = vm.Models.Set(check.Models)
		vm.mu.Lock()
		vm.testedURL = p.BaseURL
		vm.mu.Unlock()
	}
	vm.report(describeCheck(check), !check.OK)
	return check, nil
}

// describeCheck says in words what a connection test found.
func describeCheck(c client.ProviderCheck) string {
	if !c.OK {
		return Tf("Connection failed: %s", c.Error)
	}
	ms := strconv.FormatInt(c.Latency.Milliseconds(), 10)
	if c.Model == "" {
		return Tf("Connection OK: the server answered in %s ms.", ms)
	}
	return Tf("Connection OK: %s answered in %s ms.", c.Model, ms)
}

// Save checks the form and adds the provider to the kernel, which seals its key; the key is
// then cleared from the form.
func (vm *WelcomeVM) Save(ctx context.Context) (client.Provider, error) {
	p, err := vm.input().config()
	if err != nil {
		vm.report(err.Error(), true)
		return client.Provider{}, err
	}
	_ = vm.Busy.Set(true)
	defer vm.Busy.Set(false)
	saved, err := vm.svc.AddProvider(ctx, p)
	if err != nil {
		vm.report(Tf("Could not save the provider: %v", err), true)
		return client.Provider{}, fmt.Errorf("add provider %s: %w", p.Name, err)
	}
	_ = vm.APIKey.Set("")
	vm.report(Tf("Saved provider %s.", saved.Name), false)
	return saved, nil
}
