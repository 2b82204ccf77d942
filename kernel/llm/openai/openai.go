// Package openai implements [llm.Provider] for OpenAI-compatible chat-completions servers
// (OpenAI, DeepSeek, Qwen, Moonshot, OpenRouter, Ollama, vLLM, llama.cpp, …) with net/http and a
// hand-written SSE parser. It handles the quirks such servers have: reasoning_content deltas,
// tool-call fragments without ids, usage-only chunks and keep-alive comments.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/llm"
)

// Defaults applied by [New] to zero [Config] fields.
const (
	DefaultTimeout     = 60 * time.Second
	DefaultIdleTimeout = 120 * time.Second
	DefaultMaxRetries  = 2
	// DefaultMaxReplyBytes caps the text of one reply (content, reasoning and tool-call
	// arguments together): a runaway model streaming hundreds of megabytes is cut there.
	DefaultMaxReplyBytes = 1 << 20
)

const (
	baseBackoff   = 500 * time.Millisecond
	maxBackoff    = 10 * time.Second
	maxRetryAfter = 60 * time.Second
	maxErrorBody  = 64 << 10
	maxExcerpt    = 300
)

// ErrTimeout is wrapped by errors when the server sent no response headers within Config.Timeout.
var ErrTimeout = errors.New("no response headers within timeout")

// ErrIdle is wrapped by errors when the server sent no bytes for Config.IdleTimeout.
var ErrIdle = errors.New("server sent nothing within idle timeout")

// Config configures a [Client]. Name and BaseURL are required.
type Config struct {
	Name    string // provider name for logs and errors
	BaseURL string // e.g. https://api.openai.com/v1 (the part before /chat/completions)
	Model   string // used when a request names no model
	APIKey  string // sent as a bearer token; empty sends no Authorization header
	// Proxy is a proxy URL for this provider only (http, https or socks5). Empty uses the
	// environment (HTTPS_PROXY, HTTP_PROXY, NO_PROXY) like [http.ProxyFromEnvironment].
	Proxy string
	// Timeout bounds the wait for response headers (default 60s).
	Timeout time.Duration
	// IdleTimeout bounds the silence while reading a body or stream (default 120s).
	IdleTimeout time.Duration
	// MaxRetries is the number of retries on the same provider after 429, 5xx and network
	// errors (0 means the default 2; negative disables retries).
	MaxRetries int
	// HTTPClient replaces the client New builds; Proxy must then be empty.
	HTTPClient *http.Client
	// Sleep waits between retries; it must return early with ctx's error. Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives retry logs; default discards.
	Logger *slog.Logger
	// MaxTokens is sent when a request sets none (0: not sent).
	MaxTokens int
	// Vision says whether the model takes images (image_url parts); nil detects it from the
	// server's model list ([Client.Vision]).
	Vision *bool
	// MaxReplyBytes caps one reply's text (default [DefaultMaxReplyBytes]): past it the stream
	// is closed and the reply ends with [ReplyCutNote], finish reason "length". A non-streamed
	// body over four times the cap is an error (a cut JSON document cannot be read).
	MaxReplyBytes int
}

// Client is an OpenAI-compatible chat-completions client. It is safe for concurrent use.
type Client struct {
	cfg   Config
	base  string
	hc    *http.Client
	sleep func(ctx context.Context, d time.Duration) error
	log   *slog.Logger
	// format is the structured output the server accepts (formatSchema until it refuses).
	format atomic.Int32
	// vision caches what the server says of its models' input (model id → bool).
	vision sync.Map
}

// New validates cfg, applies defaults and returns a Client.
func New(cfg Config) (*Client, error) {
	if cfg.Name == "" {
		return nil, errors.New("openai: provider name is empty")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("provider %s: base URL %q must be an http or https URL", cfg.Name, cfg.BaseURL)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxReplyBytes <= 0 {
		cfg.MaxReplyBytes = DefaultMaxReplyBytes
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	c := &Client{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/"), hc: cfg.HTTPClient, sleep: cfg.Sleep, log: cfg.Logger}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	if c.hc != nil {
		if cfg.Proxy != "" {
			return nil, fmt.Errorf("provider %s: Proxy and HTTPClient are exclusive", cfg.Name)
		}
		return c, nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyFromEnvironment
	if cfg.Proxy != "" {
		pu, err := url.Parse(cfg.Proxy)
		if err != nil || pu.Host == "" || (pu.Scheme != "http" && pu.Scheme != "https" && pu.Scheme != "socks5") {
			return nil, fmt.Errorf("provider %s: proxy %q must be an http, https or socks5 URL", cfg.Name, cfg.Proxy)
		}
		tr.Proxy = http.ProxyURL(pu)
	}
	c.hc = &http.Client{Transport: tr}
	return c, nil
}

// Name returns the configured provider name.
func (c *Client) Name() string { return c.cfg.Name }

// Chat sends req to {BaseURL}/chat/completions, streamed when onDelta is non-nil. It retries
// 429, 5xx and network errors with exponential backoff (honouring Retry-After) unless a delta
// was already passed to onDelta. Server errors are returned as [*llm.APIError].
func (c *Client) Chat(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	if len(req.ResponseSchema) == 0 {
		return c.chat(ctx, req, nil, onDelta)
	}
	// Structured output: the schema where the server accepts it, else a JSON object, else
	// neither (the prompt still asks for the JSON). A refusal (HTTP 400) is remembered, so
	// later requests start with what the server takes.
	for {
		level := c.format.Load()
		var rf *wireResponseFormat
		switch level {
		case formatSchema:
			rf = &wireResponseFormat{Type: "json_schema", JSONSchema: &wireJSONSchema{Name: "reply", Schema: req.ResponseSchema, Strict: true}}
		case formatObject:
			rf = &wireResponseFormat{Type: "json_object"}
		}
		resp, err := c.chat(ctx, req, rf, onDelta)
		var ae *llm.APIError
		if err == nil || level == formatNone || !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
			return resp, err
		}
		c.log.Info("llm server refuses a response_format; asking with less", "provider", c.cfg.Name, "format", rf.Type, "err", ae.Message)
		c.format.CompareAndSwap(level, level+1)
	}
}

// Levels of structured output a server accepts ([Client.Chat]).
const (
	formatSchema int32 = iota
	formatObject
	formatNone
)

// chat sends one chat request (with retries) with response format rf (nil: none).
func (c *Client) chat(ctx context.Context, req llm.Request, rf *wireResponseFormat, onDelta func(llm.Delta)) (llm.Response, error) {
	vision := false
	if hasImages(req.Messages) {
		vision = c.Vision(ctx, req.Model)
	}
	body, err := c.encodeRequest(req, onDelta != nil, rf, vision)
	if err != nil {
		return llm.Response{}, err
	}
	for attempt := 0; ; attempt++ {
		emitted := false
		var cb func(llm.Delta)
		if onDelta != nil {
			cb = func(d llm.Delta) {
				emitted = true
				onDelta(d)
			}
		}
		resp, err := c.chatOnce(ctx, body, cb)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return llm.Response{}, fmt.Errorf("provider %s: %w", c.cfg.Name, ctx.Err())
		}
		var re *retryable
		if !errors.As(err, &re) || emitted || attempt >= c.cfg.MaxRetries {
			return llm.Response{}, unwrapRetryable(err)
		}
		wait := backoff(attempt)
		var ae *llm.APIError
		if errors.As(err, &ae) && ae.RetryAfter > 0 {
			wait = ae.RetryAfter
		}
		c.log.Warn("llm request failed, retrying", "provider", c.cfg.Name, "attempt", attempt+1, "wait", wait, "err", re.err)
		if err := c.sleep(ctx, wait); err != nil {
			return llm.Response{}, fmt.Errorf("provider %s: %w", c.cfg.Name, err)
		}
	}
}

// Models lists the model ids the server offers (GET {BaseURL}/models), e.g. to test a connection.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	err := c.do(ctx, http.MethodGet, "/models", nil, func(resp *http.Response) error {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &out); err != nil {
			return c.invalidJSON(err, b)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("provider %s: %w", c.cfg.Name, ctx.Err())
		}
		return nil, unwrapRetryable(err)
	}
	ids := make([]string, 0, len(out.Data))
	for _, m := range out.Data {
		ids = append(ids, m.ID)
	}
	return ids, nil
}

// retryable marks an error worth another attempt.
type retryable struct{ err error }

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

func unwrapRetryable(err error) error {
	var re *retryable
	if errors.As(err, &re) {
		return re.err
	}
	return err
}

func backoff(attempt int) time.Duration {
	d := baseBackoff << attempt
	if d > maxBackoff || d <= 0 {
		return maxBackoff
	}
	return d
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) chatOnce(ctx context.Context, body []byte, onDelta func(llm.Delta)) (llm.Response, error) {
	var out llm.Response
	err := c.do(ctx, http.MethodPost, "/chat/completions", body, func(resp *http.Response) error {
		var err error
		ct := resp.Header.Get("Content-Type")
		if strings.Contains(ct, "event-stream") || (onDelta != nil && !strings.Contains(ct, "json")) {
			out, err = c.parseStream(resp.Body, onDelta)
		} else {
			out, err = c.parseJSON(resp.Body, onDelta)
		}
		return err
	})
	out.Provider = c.cfg.Name
	return out, err
}

// do sends one request and hands a 2xx response to read, enforcing the header and idle timeouts.
// Errors worth a retry come back wrapped in *retryable.
func (c *Client) do(ctx context.Context, method, path string, body []byte, read func(*http.Response) error) error {
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(rctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("provider %s: %w", c.cfg.Name, err)
	}
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	hreq.Header.Set("Accept", "application/json, text/event-stream")
	if c.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	timer := time.AfterFunc(c.cfg.Timeout, func() { cancel(ErrTimeout) })
	resp, err := c.hc.Do(hreq)
	fired := !timer.Stop()
	if err != nil {
		return c.transportErr(rctx, err)
	}
	defer resp.Body.Close()
	if fired { // the headers came just as the timeout cancelled the request
		return c.transportErr(rctx, ErrTimeout)
	}
	idle := time.AfterFunc(c.cfg.IdleTimeout, func() { cancel(ErrIdle) })
	defer idle.Stop()
	resp.Body = &idleReader{rc: resp.Body, t: idle, d: c.cfg.IdleTimeout}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		ae := c.apiError(resp)
		if ae.Retryable() {
			return &retryable{ae}
		}
		return ae
	}
	if err := read(resp); err != nil {
		if cause := context.Cause(rctx); ctx.Err() == nil && cause != nil {
			return c.transportErr(rctx, err)
		}
		return err
	}
	return nil
}

// transportErr words a network-level failure; timeouts name the limit that was hit.
func (c *Client) transportErr(rctx context.Context, err error) error {
	switch cause := context.Cause(rctx); {
	case errors.Is(cause, ErrTimeout):
		return &retryable{fmt.Errorf("provider %s: %w (%s)", c.cfg.Name, ErrTimeout, c.cfg.Timeout)}
	case errors.Is(cause, ErrIdle):
		return &retryable{fmt.Errorf("provider %s: %w (%s)", c.cfg.Name, ErrIdle, c.cfg.IdleTimeout)}
	}
	return &retryable{fmt.Errorf("provider %s: %w", c.cfg.Name, err)}
}

// idleReader re-arms the idle timer whenever bytes arrive.
type idleReader struct {
	rc io.ReadCloser
	t  *time.Timer
	d  time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	if n > 0 {
		r.t.Reset(r.d)
	}
	return n, err
}

func (r *idleReader) Close() error { return r.rc.Close() }

// apiError turns a non-2xx response into an *llm.APIError carrying the server's own message.
func (c *Client) apiError(resp *http.Response) *llm.APIError {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	ae := &llm.APIError{Provider: c.cfg.Name, Status: resp.StatusCode, Message: errorMessage(b)}
	if ae.Message == "" {
		ae.Message = http.StatusText(resp.StatusCode)
	}
	ae.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	return ae
}

// errorMessage extracts error.message (or a similar field) from a JSON error body, or returns a
// trimmed excerpt of a body that is not JSON.
func errorMessage(b []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(b, &e) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return s
		case e.Message != "":
			return e.Message
		case e.Detail != nil:
			d, _ := json.Marshal(e.Detail)
			return excerpt(d)
		}
	}
	return excerpt(b)
}

// excerpt trims b to at most maxExcerpt bytes of valid UTF-8 on one line.
func excerpt(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > maxExcerpt {
		cut := maxExcerpt
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return strings.ToValidUTF8(s, "?")
}

// parseRetryAfter reads a Retry-After header (seconds or an HTTP date), capped at a minute.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		d = time.Duration(secs * float64(time.Second))
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}

func (c *Client) invalidJSON(err error, data []byte) error {
	return fmt.Errorf("provider %s returned invalid JSON: %w (%q)", c.cfg.Name, err, excerpt(data))
}

var _ llm.Provider = (*Client)(nil)
