package kernel

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

// pausedSetting persists the pause across restarts ("true" or "false").
const pausedSetting = "kernel/paused"

// Event types the kernel publishes when the owner pauses or resumes it.
const (
	EventKernelPaused  = "kernel_paused"
	EventKernelResumed = "kernel_resumed"
)

// Defaults of the desktop helpers (Deps zero values).
const (
	DefaultDetectTimeout       = 700 * time.Millisecond
	DefaultProviderTestTimeout = 20 * time.Second
)

// Provider tests ask for a one-word answer and keep the first characters of the reply.
const (
	testPrompt    = "Reply with the word OK."
	testMaxTokens = 8
	testReplyLen  = 200
)

// DetectTarget is a local OpenAI-compatible server DetectProviders looks for: its provider name
// and its models URL (the base URL followed by /models).
type DetectTarget struct {
	Name string
	URL  string
}

// defaultDetectTargets are Ollama's and llama.cpp's servers on their default ports.
var defaultDetectTargets = []DetectTarget{
	{Name: "ollama", URL: "http://127.0.0.1:11434/v1/models"},
	{Name: "llamacpp", URL: "http://127.0.0.1:8080/v1/models"},
}

// deskOptions are the Deps of the desktop helpers with their defaults applied.
type deskOptions struct {
	targets     []DetectTarget
	probe       time.Duration
	testTimeout time.Duration
}

func newDeskOptions(d Deps) deskOptions {
	o := deskOptions{targets: d.DetectTargets, probe: d.DetectTimeout, testTimeout: d.ProviderTestTimeout}
	if o.targets == nil {
		o.targets = defaultDetectTargets
	}
	if o.probe <= 0 {
		o.probe = DefaultDetectTimeout
	}
	if o.testTimeout <= 0 {
		o.testTimeout = DefaultProviderTestTimeout
	}
	return o
}

// loadPaused restores the pause the owner set before a restart.
func (k *Kernel) loadPaused(ctx context.Context) error {
	v, err := k.store.GetSetting(ctx, pausedSetting)
	if errors.Is(err, memory.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading setting %s: %w", pausedSetting, err)
	}
	paused, err := strconv.ParseBool(v)
	if err != nil {
		k.log.Error("ignoring unreadable setting", "key", pausedSetting, "value", v)
		return nil
	}
	k.paused.Store(paused)
	if paused {
		k.log.Info("kernel starts paused: channel input and scheduled jobs stay stopped until the owner resumes it")
	}
	return nil
}

// Paused reports whether the owner has paused the kernel.
func (k *Kernel) Paused() bool { return k.paused.Load() }

// SetPaused implements client.Service: while paused, chat on channel sessions is refused, the
// memgc schedule skips its passes, and plugins hear kernel/paused. The owner's sessions keep
// working. The state is saved, so it survives a restart.
func (k systemRole) SetPaused(ctx context.Context, paused bool) error {
	k.pauseMu.Lock()
	defer k.pauseMu.Unlock()
	if k.paused.Load() == paused {
		return nil
	}
	if err := k.store.SetSetting(ctx, pausedSetting, strconv.FormatBool(paused)); err != nil {
		return fmt.Errorf("saving the pause: %w", mapErr(err))
	}
	k.paused.Store(paused)
	typ := EventKernelResumed
	if paused {
		typ = EventKernelPaused
		k.log.Info("kernel paused: channel input and scheduled jobs stop; the owner's chat works")
	} else {
		k.log.Info("kernel resumed")
	}
	k.publish(typ, map[string]any{"paused": paused})
	return nil
}

// refusePaused refuses a turn on a channel session while the kernel is paused.
func (k *Kernel) refusePaused(sess memory.Session) error {
	if sess.Channel == "" || !k.paused.Load() {
		return nil
	}
	return fmt.Errorf("%w: the kernel is paused: input from channel %s is stopped until the owner resumes it (`waiter resume`)",
		client.ErrUnavailable, sess.Channel)
}

// TestProvider implements client.Service: it validates p like AddProvider, builds the provider
// (without saving it; keep_key tests it with the saved provider's key), sends one small non-streamed request and lists the server's models. A
// provider that fails answers OK false with the error; the call fails only for an invalid
// configuration or when ctx ends.
func (k providerRole) TestProvider(ctx context.Context, p client.ProviderConfig) (client.ProviderCheck, error) {
	p.BaseURL = strings.TrimRight(strings.TrimSpace(p.BaseURL), "/")
	p.Model = strings.TrimSpace(p.Model)
	p.APIKey = strings.TrimSpace(p.APIKey)
	if err := validateProvider(p); err != nil {
		return client.ProviderCheck{}, err
	}
	k.keepKey(&p) // a saved provider tested as it is
	prov, err := k.newProv(ProviderSettings{Name: p.Name, BaseURL: p.BaseURL, Model: p.Model, APIKey: p.APIKey, Proxy: p.Proxy})
	if err != nil {
		return client.ProviderCheck{}, invalid("provider %s: %v", p.Name, err)
	}
	tctx, cancel := context.WithTimeout(ctx, k.desk.testTimeout)
	defer cancel()

	var (
		wg        sync.WaitGroup
		models    []string
		modelsErr error
	)
	wg.Go(func() { models, modelsErr = prov.Models(tctx) })
	t0 := time.Now()
	resp, err := prov.Chat(tctx, llm.Request{MaxTokens: testMaxTokens, Messages: []llm.Message{
		{Role: "system", Content: testPrompt},
		{Role: "user", Content: "OK?"},
	}}, nil)
	latency := time.Since(t0)
	wg.Wait()
	if ctx.Err() != nil {
		return client.ProviderCheck{}, fmt.Errorf("testing provider %s: %w", p.Name, ctx.Err())
	}
	check := client.ProviderCheck{Latency: latency}
	if modelsErr == nil {
		check.Models = models
	} else {
		k.log.Debug("provider test: no model list", "provider", p.Name, "err", modelsErr)
	}
	if err != nil {
		check.Error = err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			check.Error = fmt.Sprintf("provider %s: no answer within %s", p.Name, k.desk.testTimeout)
		}
		k.log.Info("provider test failed", "provider", p.Name, "base_url", p.BaseURL, "model", p.Model, "err", check.Error)
		return check, nil
	}
	check.OK = true
	check.Model = resp.Model
	if check.Model == "" {
		check.Model = p.Model
	}
	reply := []rune(strings.TrimSpace(resp.Message.Content))
	check.Reply = string(reply[:min(len(reply), testReplyLen)])
	k.log.Info("provider test passed", "provider", p.Name, "base_url", p.BaseURL, "model", check.Model, "ms", latency.Milliseconds())
	return check, nil
}

// DetectProviders implements client.Service: it probes the detect targets concurrently, each
// within its own timeout, and offers every server that lists at least one model, with the
// first, in the targets' order. Servers that are absent, silent or answer something else are
// left out; the call fails only when ctx ends.
func (k providerRole) DetectProviders(ctx context.Context) ([]client.ProviderConfig, error) {
	found := make([]*client.ProviderConfig, len(k.desk.targets))
	var wg sync.WaitGroup
	for i, t := range k.desk.targets {
		wg.Go(func() {
			models, err := probe(ctx, k, t)
			if err != nil || len(models) == 0 {
				k.log.Debug("provider detection: nothing usable", "target", t.Name, "url", t.URL, "err", err)
				return
			}
			found[i] = &client.ProviderConfig{Name: t.Name, BaseURL: strings.TrimSuffix(t.URL, "/models"), Model: models[0]}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("detecting providers: %w", err)
	}
	out := []client.ProviderConfig{}
	for _, p := range found {
		if p != nil {
			k.log.Info("local provider detected", "provider", p.Name, "base_url", p.BaseURL, "model", p.Model)
			out = append(out, *p)
		}
	}
	return out, nil
}

// probe lists the models of a local OpenAI-compatible server through the provider factory's
// client (GET {base}/models), within the probe timeout. Loopback requests are never proxied.
func probe(ctx context.Context, k providerRole, t DetectTarget) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, k.desk.probe)
	defer cancel()
	p, err := k.newProv(ProviderSettings{Name: t.Name, BaseURL: strings.TrimSuffix(t.URL, "/models")})
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", t.URL, err)
	}
	ids, err := p.Models(ctx)
	if err != nil {
		return nil, err
	}
	out := ids[:0] // blank ids are no model to offer
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out, nil
}
