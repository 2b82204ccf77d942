package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// pause runs `waiter pause`: channel input and scheduled jobs stop until `waiter resume`.
func (a *app) pause(ctx context.Context, args []string) error {
	return a.setPaused(ctx, "pause", args, true,
		"kernel paused: channel input and scheduled jobs stop; your own chat keeps working (`waiter resume` resumes)")
}

// resume runs `waiter resume`.
func (a *app) resume(ctx context.Context, args []string) error {
	return a.setPaused(ctx, "resume", args, false, "kernel resumed")
}

func (a *app) setPaused(ctx context.Context, name string, args []string, paused bool, done string) error {
	if pos, err := parse(newFlags(name), args, true); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("%s takes no arguments", name)
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	if err := svc.SetPaused(ctx, paused); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, done)
	return nil
}

// providerTest runs `waiter provider test [NAME] --base-url URL --model M`: one real request to a
// provider that is not saved. A provider that does not answer is a failure (exit 1).
func (a *app) providerTest(ctx context.Context, args []string) error {
	fs := newFlags("provider test")
	baseURL := fs.String("base-url", "", "OpenAI-compatible base URL, e.g. https://api.example.com/v1")
	model := fs.String("model", "", "model id")
	proxy := fs.String("proxy", "", "proxy URL for this provider")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("usage: waiter provider test [NAME] --base-url URL --model M [--proxy URL] [--json] (the key comes from HOLOGRAM_API_KEY or stdin)")
	}
	if *baseURL == "" || *model == "" {
		return usagef("provider test needs --base-url and --model")
	}
	name := "test"
	if len(pos) == 1 {
		name = pos[0]
	}
	key, err := a.readAPIKey(name)
	if err != nil {
		return err
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	check, err := svc.TestProvider(ctx, client.ProviderConfig{Name: name, BaseURL: *baseURL, Model: *model, APIKey: key, Proxy: *proxy})
	if err != nil {
		return err
	}
	if *asJSON {
		if err := a.writeJSON(check); err != nil {
			return err
		}
	} else if check.OK {
		fmt.Fprintf(a.stdout, "ok: %s answered in %s: %q\n", check.Model, check.Latency.Round(time.Millisecond), oneLine(check.Reply, 72))
		if len(check.Models) > 0 {
			fmt.Fprintf(a.stdout, "models: %s\n", strings.Join(check.Models, ", "))
		}
	}
	if !check.OK {
		return fmt.Errorf("provider test failed after %s: %s", check.Latency.Round(time.Millisecond), check.Error)
	}
	return nil
}

// providerDetect runs `waiter provider detect`: the local servers the kernel can use.
func (a *app) providerDetect(ctx context.Context, args []string) error {
	return runListing(ctx, a, args, listing[client.ProviderConfig]{
		name:   "provider detect",
		fetch:  client.Service.DetectProviders,
		header: []string{"NAME", "MODEL", "BASE URL"},
		row:    func(p client.ProviderConfig) []string { return []string{p.Name, p.Model, p.BaseURL} },
		empty: "no local server found (looked for Ollama on 127.0.0.1:11434 and llama.cpp's server on 127.0.0.1:8080); " +
			"add one with `waiter provider add NAME --base-url URL --model M`",
	})
}
