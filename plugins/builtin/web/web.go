package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/hologramagent/hologram/plugins/builtin/internal/toolargs"
	"github.com/hologramagent/hologram/plugins/sdk"
)

// Bounds of the tools' arguments.
const (
	defaultMaxChars = 50_000
	maxMaxChars     = 1_000_000
	maxSelector     = 512
)

// web is the plugin: a fetcher and a browser sharing one guard.
type web struct {
	fetcher *Fetcher
	browser *Browser
}

// newWeb builds the plugin from its configuration.
func newWeb(c Config, log *slog.Logger) *web {
	g := NewGuard(c.Allow, c.Deny, nil)
	return &web{fetcher: NewFetcher(g, c.Timeout, c.MaxBytes, log), browser: NewBrowser(g, c.Chromium, c.Timeout, log)}
}

const fetchSchema = `{"type":"object","properties":{
 "url":{"type":"string","description":"the http:// or https:// URL to read"},
 "max_chars":{"type":"integer","minimum":1,"maximum":1000000,"description":"cut the text at this many characters (default 50000)"}},
 "required":["url"],"additionalProperties":false}`

const browseSchema = `{"type":"object","properties":{
 "url":{"type":"string","description":"the http:// or https:// URL to load"},
 "wait_for":{"type":"string","description":"a CSS selector to wait for (visible) before reading, for pages that fill in late"},
 "screenshot":{"type":"boolean","description":"also return a PNG screenshot of the page (1280x800)"},
 "max_chars":{"type":"integer","minimum":1,"maximum":1000000,"description":"cut the text at this many characters (default 50000)"}},
 "required":["url"],"additionalProperties":false}`

// plugin is the web plugin's definition.
func (w *web) plugin() sdk.Plugin {
	return sdk.Plugin{
		Name:    "web",
		Version: "1.0.0",
		Instructions: "web_fetch reads a web page's main text quickly (no JavaScript). web_browse renders a page in a " +
			"headless browser, for pages that need JavaScript, and can take a screenshot. Local and private-network " +
			"addresses are refused unless the owner allow-listed them.",
		Tools: []sdk.Tool{
			{Name: "web_fetch", Title: "Read a web page", Description: "Fetches an http(s) URL and returns its title and readable text " +
				"(the main content, without menus and scripts). Does not run JavaScript: use web_browse for pages that need it.",
				InputSchema: json.RawMessage(fetchSchema), ReadOnly: true, Run: w.fetch},
			{Name: "web_browse", Title: "Render a web page", Description: "Loads an http(s) URL in a headless browser, runs its JavaScript " +
				"and returns the rendered text, optionally with a PNG screenshot.",
				InputSchema: json.RawMessage(browseSchema), ReadOnly: true, Run: w.browse},
		},
	}
}

// maxChars checks a max_chars argument (0: the default).
func maxChars(n int) (int, error) {
	switch {
	case n == 0:
		return defaultMaxChars, nil
	case n < 0 || n > maxMaxChars:
		return 0, fmt.Errorf("max_chars must be from 1 to %d, got %d", maxMaxChars, n)
	}
	return n, nil
}

func (w *web) fetch(ctx context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct {
		URL      string `json:"url"`
		MaxChars int    `json:"max_chars"`
	}
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	n, err := maxChars(a.MaxChars)
	if err != nil {
		return sdk.Result{}, err
	}
	p, err := w.fetcher.Fetch(ctx, a.URL)
	if err != nil {
		return sdk.Result{}, err
	}
	return sdk.Text(p.Render(n)), nil
}

func (w *web) browse(ctx context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct {
		URL        string `json:"url"`
		WaitFor    string `json:"wait_for"`
		Screenshot bool   `json:"screenshot"`
		MaxChars   int    `json:"max_chars"`
	}
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	n, err := maxChars(a.MaxChars)
	if err != nil {
		return sdk.Result{}, err
	}
	if len(a.WaitFor) > maxSelector {
		return sdk.Result{}, fmt.Errorf("wait_for has %d bytes, at most %d", len(a.WaitFor), maxSelector)
	}
	res, err := w.browser.Browse(ctx, BrowseRequest{URL: a.URL, WaitFor: strings.TrimSpace(a.WaitFor), Screenshot: a.Screenshot})
	if err != nil {
		if errors.Is(err, ErrNoChromium) {
			return sdk.Result{}, fmt.Errorf("web_browse: %w", err)
		}
		return sdk.Result{}, err
	}
	text := res.Page.Render(n)
	if len(res.Refused) > 0 {
		text += fmt.Sprintf("\n\n[%d requests of the page were refused by the address guard; the first: %s]", len(res.Refused), res.Refused[0])
	}
	out := sdk.Text(text)
	if res.Screenshot != nil {
		out.Content = append(out.Content, sdk.Content{Type: "image", MIME: "image/png", Data: res.Screenshot})
	}
	return out, nil
}
