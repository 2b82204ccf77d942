package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// ChromiumFlags are the command-line flags web_browse starts chromium with (besides a fresh
// --user-data-dir, and the --remote-debugging-pipe chromedp talks over). Without the networking
// ones Chromium keeps calling home, which fails offline.
var ChromiumFlags = []string{"headless", "no-sandbox", "disable-gpu", "disable-background-networking",
	"disable-component-update", "no-first-run"}

// noWebRTC runs before every page's scripts: WebRTC could send UDP past the proxy.
const noWebRTC = `(() => { for (const k of ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel"]) { try { delete window[k]; } catch (e) {} } })();`

// Viewport is the size of the page web_browse renders (and screenshots).
const (
	viewportWidth  = 1280
	viewportHeight = 800
)

// BrowseRequest is one web_browse call.
type BrowseRequest struct {
	URL string
	// WaitFor, when set, is a CSS selector to wait for (visible) before reading the page.
	WaitFor string
	// Screenshot asks for a PNG of the viewport.
	Screenshot bool
}

// BrowseResult is what web_browse read.
type BrowseResult struct {
	Page
	Screenshot []byte   // PNG, when asked for
	Refused    []string // requests of the page the guard refused
	// Process is the browser's pid and UserDataDir its profile directory (removed when Browse
	// returns), for tests and logs.
	Process     int
	UserDataDir string
}

// Browser renders pages in a headless chromium through the DevTools protocol (chromedp): one
// fresh browser per call, with a fresh profile directory removed afterwards, all its traffic
// through a guarded [Proxy]. Calls run one at a time. Safe for concurrent use.
type Browser struct {
	guard   *Guard
	exec    string
	timeout time.Duration
	tmpDir  string // parent of the profile directories ("": the system's)
	log     *slog.Logger
	sem     chan struct{}
	// started, when set, is called with the browser's pid and profile directory once it runs.
	started func(pid int, dir string)
}

// NewBrowser returns a browser running the chromium at exec ("" : web_browse fails with a
// clear error).
func NewBrowser(g *Guard, exec string, timeout time.Duration, log *slog.Logger) *Browser {
	return &Browser{guard: g, exec: exec, timeout: timeout, log: log, sem: make(chan struct{}, 1)}
}

// ErrNoChromium is web_browse's error when no chromium is installed.
var ErrNoChromium = errors.New("no chromium found: install Debian's chromium (apt-get install chromium) or set HOLOGRAM_WEB_CHROMIUM")

// Browse loads req.URL in a fresh headless chromium and reads its rendered text (and a
// screenshot when asked).
func (b *Browser) Browse(ctx context.Context, req BrowseRequest) (res BrowseResult, err error) {
	u, err := ParseTarget(req.URL)
	if err != nil {
		return BrowseResult{}, err
	}
	if err := b.guard.PreCheck(u.Hostname(), port(u)); err != nil {
		return BrowseResult{}, err
	}
	if b.exec == "" {
		return BrowseResult{}, ErrNoChromium
	}
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	select {
	case b.sem <- struct{}{}:
		defer func() { <-b.sem }()
	case <-ctx.Done():
		return BrowseResult{}, fmt.Errorf("browse %s: waited for another page to finish: %w", u.Redacted(), ctx.Err())
	}

	proxy, err := StartProxy(b.guard, b.log)
	if err != nil {
		return BrowseResult{}, err
	}
	defer proxy.Close()
	dir, err := os.MkdirTemp(b.tmpDir, "hologram-web-chromium-")
	if err != nil {
		return BrowseResult{}, fmt.Errorf("browser profile directory: %w", err)
	}
	res.UserDataDir = dir
	defer func() {
		if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
			err = fmt.Errorf("removing the browser profile %s: %w", dir, rerr)
		}
	}()

	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(b.exec), chromedp.UserDataDir(dir)}
	for _, f := range ChromiumFlags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc() // waits for the browser to exit
	debugf := func(format string, args ...any) { b.log.Debug("chromedp: " + fmt.Sprintf(format, args...)) }
	bctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(debugf), chromedp.WithErrorf(debugf))
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil {
		return BrowseResult{}, fmt.Errorf("starting chromium (%s): %w", b.exec, err)
	}
	if p := chromedp.FromContext(bctx).Browser.Process(); p != nil {
		res.Process = p.Pid
		if b.started != nil {
			b.started(p.Pid, dir)
		}
	}
	// The page runs in its own browser context whose proxy is ours; "<-loopback>" removes
	// Chromium's implicit bypass of loopback addresses, so those go through the proxy too.
	tctx, cancelTab := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext(func(p *target.CreateBrowserContextParams) {
		p.ProxyServer = "http://" + proxy.Addr()
		p.ProxyBypassList = "<-loopback>"
	}))
	defer cancelTab()
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(viewportWidth, viewportHeight)); err != nil {
		return BrowseResult{}, fmt.Errorf("opening a tab: %w", err)
	}
	if _, err := chromedp.Call(tctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: noWebRTC}); err != nil {
		return BrowseResult{}, fmt.Errorf("preparing the tab: %w", err)
	}

	resp, err := chromedp.Run(tctx, chromedp.NavigateResponse(u.String()))
	if err != nil {
		if refused := proxy.Refused(); len(refused) > 0 {
			return BrowseResult{}, fmt.Errorf("browse %s: %s", u.Redacted(), refused[len(refused)-1])
		}
		return BrowseResult{}, b.timeoutErr(ctx, fmt.Errorf("browse %s: %w", u.Redacted(), err))
	}
	if resp != nil && refusedByProxy(resp.Headers) {
		reason := "refused by the address guard"
		if refused := proxy.Refused(); len(refused) > 0 {
			reason = refused[len(refused)-1]
		}
		return BrowseResult{}, fmt.Errorf("browse %s: %s", u.Redacted(), reason)
	}
	if resp != nil && resp.Status >= 400 {
		return BrowseResult{}, fmt.Errorf("browse %s: HTTP %d %s", u.Redacted(), resp.Status, http.StatusText(int(resp.Status)))
	}
	if req.WaitFor != "" {
		if err := chromedp.Do(tctx, chromedp.WaitVisible(chromedp.CSS(req.WaitFor))); err != nil {
			return BrowseResult{}, b.timeoutErr(ctx, fmt.Errorf("browse %s: waiting for %q: %w", u.Redacted(), req.WaitFor, err))
		}
	}
	if res.Title, err = chromedp.Run(tctx, chromedp.Title()); err != nil {
		return BrowseResult{}, b.timeoutErr(ctx, fmt.Errorf("browse %s: reading the title: %w", u.Redacted(), err))
	}
	if res.URL, err = chromedp.Run(tctx, chromedp.Location()); err != nil {
		return BrowseResult{}, b.timeoutErr(ctx, fmt.Errorf("browse %s: reading the location: %w", u.Redacted(), err))
	}
	if res.Text, err = chromedp.Run(tctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`)); err != nil {
		return BrowseResult{}, b.timeoutErr(ctx, fmt.Errorf("browse %s: reading the text: %w", u.Redacted(), err))
	}
	res.Text, res.Title = strings.TrimSpace(res.Text), strings.TrimSpace(res.Title)
	if req.Screenshot {
		if res.Screenshot, err = chromedp.Run(tctx, chromedp.CaptureScreenshot()); err != nil {
			return BrowseResult{}, b.timeoutErr(ctx, fmt.Errorf("browse %s: screenshot: %w", u.Redacted(), err))
		}
	}
	res.Refused = proxy.Refused()
	b.log.Info("browsed", "url", res.URL, "chars", len(res.Text), "screenshot", len(res.Screenshot), "refused", len(res.Refused))
	return res, nil
}

// refusedByProxy reports whether response headers carry the proxy's refusal mark.
func refusedByProxy(h network.Headers) bool {
	for k := range h {
		if strings.EqualFold(k, RefusedHeader) {
			return true
		}
	}
	return false
}

// timeoutErr says so when the call's time ran out.
func (b *Browser) timeoutErr(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w (the page did not finish within %s)", err, b.timeout)
	}
	return err
}
