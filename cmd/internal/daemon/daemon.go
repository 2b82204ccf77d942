// Package daemon is the kernel's composition root shared by homed and the desktop app: it
// chooses the SQLite store, the OpenAI-compatible client and the security codec, builds the
// kernel on a data dir and serves its API (unix socket, optional TCP with token and TLS).
package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
	"unicode"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/a2a"
	"github.com/hologramagent/hologram/kernel/api"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/openai"
	"github.com/hologramagent/hologram/kernel/provstore"
	"github.com/hologramagent/hologram/kernel/security"
	"github.com/hologramagent/hologram/kernel/webui"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/graph"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// DrainGrace is how long a stop lets in-flight turns finish before cancelling them.
const DrainGrace = 10 * time.Second

// ErrRunning is wrapped by Start's error when another kernel holds the data dir (the
// *kernel.LockedError says which, and its socket).
var ErrRunning = errors.New("a kernel is already running on this data dir")

// Version is the product version: the link-time kernel.Version, else the module's.
func Version() string {
	if kernel.Version != "dev" {
		return kernel.Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return kernel.Version
}

// NewLogger is the text logger at level.
func NewLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// Daemon is a started kernel with its store and API.
type Daemon struct {
	Kernel *kernel.Kernel
	Store  *sqlite.Store
	Log    *slog.Logger

	lock        *kernel.DirLock
	notify      func(state string) error
	mem         MemoryAssets
	srv         *api.Server
	stopServing context.CancelFunc
	unreap      func() // ends the subreaper's reaping (security.BecomeSubreaper)
	stopBackups func() // ends the daily backups and waits for one in progress
	errc        chan error
}

// Start locks cfg.DataDir, opens the store, builds and starts the kernel and serves its API on
// cfg.Socket (and cfg.Listen). It logs "<name> ready" when done. The caller must Stop it.
func Start(ctx context.Context, name string, cfg config.Config, env func(string) string, stdout, stderr io.Writer) (_ *Daemon, err error) {
	t0 := time.Now()
	log := NewLogger(stderr, cfg.LogLevel)
	kernel.Version = Version()
	d := &Daemon{Log: log, errc: make(chan error, 2), notify: notifyFrom(ctx)}
	lock, err := kernel.LockDataDir(cfg.DataDir, cfg.Socket)
	if err != nil {
		var le *kernel.LockedError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("%w: %w", ErrRunning, err)
		}
		return nil, err
	}
	d.lock = lock
	defer func() {
		if err != nil {
			d.close()
		}
	}()
	// Plugins are never the owner (ARCHITECTURE.md §5): as a child subreaper the kernel keeps
	// every process its plugins start in its own process tree, so the API can tell them from
	// the owner's clients by their pid.
	if d.unreap, err = security.BecomeSubreaper(log); err != nil {
		return nil, fmt.Errorf("plugin identity: %w", err)
	}
	d.mem = NewMemoryAssets(cfg, log)
	if d.mem.Embedding, err = NewEmbedding(cfg, env, log); err != nil { // embedding.go
		return nil, err
	}
	d.mem.OCR = NewOCR(env, d.mem.Embedding.Runtime, log)
	d.mem.STT = NewSTT(env, d.mem.Embedding, log)
	// The store opens before the key file: a missing key file is only made anew when the store
	// holds no secret the old key sealed (loadKeys).
	if d.Store, err = OpenStore(ctx, cfg, log, d.mem); err != nil {
		return nil, err
	}
	keys, err := loadKeys(ctx, cfg, d.Store, log)
	if err != nil {
		return nil, err
	}
	if sameDir(cfg.KeyFile, cfg.DataDir) {
		log.Warn("the key file is inside the data dir: a copy of the data dir would reveal sealed secrets", "key_file", cfg.KeyFile)
	}
	if d.Kernel, err = NewKernel(cfg, log, d.mem, d.Store, security.NewCodec(keys), NewProvider(log)); err != nil {
		return nil, err
	}
	var (
		ln      net.Listener
		tlsConf *tls.Config
		token   string
	)
	if cfg.Listen != "" {
		if ln, tlsConf, token, err = tcpListener(cfg, env, log, stdout); err != nil {
			return nil, err
		}
	}
	opts := api.Options{Logger: log, Token: token, MaxBodyBytes: cfg.API.MaxBodyBytes, AllowedOrigins: cfg.API.AllowedOrigins, Version: kernel.Version,
		Settings: d.Store} // the /v1 client tokens
	if cfg.A2A.On(cfg.Listen) { // other agents, on the TCP listener (docs/channels.md)
		if opts.A2A, err = a2a.New(ctx, a2a.Options{Backend: d.Kernel.Service(), Settings: d.Store, Version: kernel.Version,
			RatePerMinute: cfg.A2A.RatePerMinute, MaxBodyBytes: cfg.API.MaxBodyBytes, Logger: log}); err != nil {
			if ln != nil {
				ln.Close()
			}
			return nil, err
		}
	}
	if ln != nil { // the web UI, on the TCP listener (docs/web.md)
		wo := webui.Options{Settings: d.Store, Token: token, Logger: log, Addr: ln.Addr().String(), TLS: tlsConf != nil}
		if tlsConf != nil && len(tlsConf.Certificates) > 0 && len(tlsConf.Certificates[0].Certificate) > 0 {
			wo.Fingerprint = security.Fingerprint(tlsConf.Certificates[0].Certificate[0])
		}
		if opts.Web, err = webui.New(wo); err != nil {
			ln.Close()
			return nil, err
		}
	}
	d.srv = api.New(d.Kernel.Service(), opts)
	var sctx context.Context
	sctx, d.stopServing = context.WithCancel(context.WithoutCancel(ctx))
	unixLn, err := d.srv.ListenUnix(ctx, cfg.Socket)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return nil, err
	}
	go func() { d.errc <- d.srv.ServeUnixListener(sctx, unixLn) }()
	if ln != nil {
		go func() { d.errc <- d.srv.ServeTCP(sctx, ln, tlsConf, cfg.Insecure) }()
	}
	if err := d.Kernel.Start(ctx); err != nil {
		return nil, err
	}
	if cfg.Memory.BackupKeep > 0 {
		bctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() {
			defer close(done)
			d.Store.RunBackups(bctx, sqlite.BackupOptions{Dir: filepath.Join(cfg.DataDir, "backups"), Keep: cfg.Memory.BackupKeep})
		}()
		d.stopBackups = func() { stop(); <-done }
	}
	// The service manager hears first (a failed notification is logged before the ready line,
	// which tests and scripts wait for).
	d.tell("READY=1\nSTATUS=serving on " + cfg.Socket)
	log.Info(name+" ready", "pid", os.Getpid(), "data", cfg.DataDir, "socket", cfg.Socket, "listen", cfg.Listen,
		"version", kernel.Version, "startup_ms", time.Since(t0).Milliseconds())
	return d, nil
}

type notifyKey struct{}

// WithNotify returns a context that makes [Start] report the daemon's state to notify, in the
// words of systemd's sd_notify: "READY=1" once the API serves and the kernel has started, and
// "STOPPING=1" when [Daemon.Stop] begins. A failed notify is logged, never fatal.
func WithNotify(ctx context.Context, notify func(state string) error) context.Context {
	return context.WithValue(ctx, notifyKey{}, notify)
}

func notifyFrom(ctx context.Context) func(string) error {
	n, _ := ctx.Value(notifyKey{}).(func(string) error)
	return n
}

// tell sends state to the notify function of [WithNotify], if any.
func (d *Daemon) tell(state string) {
	if d.notify == nil {
		return
	}
	if err := d.notify(state); err != nil {
		d.Log.Warn("service manager notification", "err", err)
	}
}

// Err reports the API servers' failures.
func (d *Daemon) Err() <-chan error { return d.errc }

// Stop reports STOPPING=1 (see [WithNotify]), lets in-flight turns finish (DrainGrace), stops
// serving, closes the kernel, checkpoints and closes the store, and releases the data dir.
func (d *Daemon) Stop() error {
	d.tell("STOPPING=1")
	dctx, cancel := context.WithTimeout(context.Background(), DrainGrace)
	defer cancel()
	d.Kernel.Drain(dctx)
	if d.stopServing != nil {
		d.stopServing()
	}
	if err := d.srv.Shutdown(dctx); err != nil && !errors.Is(err, context.Canceled) {
		d.Log.Warn("api shutdown", "err", err)
	}
	if err := d.Kernel.Close(); err != nil {
		d.Log.Warn("kernel close", "err", err)
	}
	if d.stopBackups != nil {
		d.stopBackups()
		d.stopBackups = nil
	}
	if err := d.Store.Checkpoint(context.Background()); err != nil {
		d.Log.Warn("store checkpoint", "err", err)
	}
	err := d.Store.Close()
	d.Store = nil
	d.close()
	if err != nil {
		return fmt.Errorf("closing store: %w", err)
	}
	return nil
}

// close releases what Start acquired (after a failed Start, or at the end of Stop).
func (d *Daemon) close() {
	if d.stopBackups != nil {
		d.stopBackups()
		d.stopBackups = nil
	}
	if d.stopServing != nil {
		d.stopServing()
	}
	if d.Kernel != nil && d.Store != nil {
		d.Kernel.Close()
	}
	if d.Store != nil {
		d.Store.Close()
	}
	if d.mem.Tok != nil {
		d.mem.Close()
	}
	if d.lock != nil {
		d.lock.Release()
	}
	if d.unreap != nil {
		d.unreap()
	}
}

func sameDir(file, dir string) bool {
	rel, err := filepath.Rel(dir, file)
	return err == nil && !strings.HasPrefix(rel, "..")
}

// NewProvider is the provider factory: every provider is an OpenAI-compatible server.
func NewProvider(log *slog.Logger) kernel.ProviderFactory {
	return func(ps kernel.ProviderSettings) (llm.Provider, error) {
		return openai.New(openai.Config{Name: ps.Name, BaseURL: ps.BaseURL, Model: ps.Model, APIKey: ps.APIKey, Proxy: ps.Proxy, Vision: ps.Vision,
			Logger: log.With("provider", ps.Name)})
	}
}

// tcpListener opens --listen with its token and TLS material. The token comes from --token-file or
// HOLOGRAM_TOKEN, else one is generated into the default token file. Off loopback TLS is always
// on: the given certificate or a self-signed one whose fingerprint is printed for pinning.
func tcpListener(cfg config.Config, env func(string) string, log *slog.Logger, stdout io.Writer) (net.Listener, *tls.Config, string, error) {
	token := strings.TrimSpace(env("HOLOGRAM_TOKEN"))
	switch {
	case cfg.TokenFile != "" && token == "":
		t, err := security.LoadOrCreateToken(cfg.TokenFile)
		if err != nil {
			return nil, nil, "", fmt.Errorf("token file: %w", err)
		}
		token = t
	case token == "":
		return nil, nil, "", errors.New("--listen needs a token: give --token-file F (created if missing) or set HOLOGRAM_TOKEN")
	}
	if err := security.CheckToken(token); err != nil {
		return nil, nil, "", fmt.Errorf("the remote API token: %w", err)
	}
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, nil, "", fmt.Errorf("--listen %q: %w", cfg.Listen, err)
	}
	var (
		tlsConf *tls.Config
		fp      string
	)
	loopback := isLoopbackHost(host)
	switch {
	case cfg.TLSCert != "":
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, nil, "", fmt.Errorf("loading TLS certificate: %w", err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		fp = security.Fingerprint(cert.Certificate[0])
	case !loopback && !cfg.Insecure:
		hosts := []string{}
		if host != "" && host != "0.0.0.0" && host != "::" {
			hosts = append(hosts, host)
		}
		if hn, err := os.Hostname(); err == nil {
			hosts = append(hosts, hn)
		}
		var cert tls.Certificate
		cert, fp, err = security.LoadOrCreateSelfSigned(filepath.Join(cfg.DataDir, "tls", "cert.pem"), filepath.Join(cfg.DataDir, "tls", "key.pem"), hosts)
		if err != nil {
			return nil, nil, "", fmt.Errorf("self-signed certificate: %w", err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		log.Info("serving TLS with a self-signed certificate; clients pin it with --fingerprint", "fingerprint", fp)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, nil, "", fmt.Errorf("--listen: %w", err)
	}
	// Printed for people and scripts, and logged (before "homed ready") for tests and journals.
	if fp != "" {
		fmt.Fprintf(stdout, "TLS certificate fingerprint (sha256): %s\n", fp)
	}
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())
	log.Info("api listening", "addr", ln.Addr().String(), "tls", tlsConf != nil, "fingerprint", fp)
	return ln, tlsConf, token, nil
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// MemoryAssets are the memory's tokenizer (jieba for Chinese, loaded on the first Chinese text)
// and English lexicon (WordNet, loaded in the background after start).
type MemoryAssets struct {
	Tok *embed.Tokenizer
	Lex *embed.Lexicon
	// Embedding is the dense side (ONNX Runtime and the model manager, embedding.go); the zero
	// value keeps the memory sparse.
	Embedding kernel.EmbeddingDeps
	// OCR reads images' text (embedding.go); the zero value: images keep no text.
	OCR kernel.OCRDeps
	// STT transcribes voice messages (embedding.go); the zero value: audio keeps no text.
	STT kernel.STTDeps
}

// NewMemoryAssets prepares the assets (nothing loads yet).
func NewMemoryAssets(cfg config.Config, log *slog.Logger) MemoryAssets {
	lex := embed.NewLexicon(embed.LexiconOptions{Dir: cfg.Memory.WordNetDir, Logger: log})
	// Irregular English forms are not lemmatised: measured on the LoCoMo dev split, it did not
	// help (docs/benchmarks.md).
	tok := embed.NewTokenizer(embed.TokenizerOptions{JiebaDir: cfg.Memory.JiebaDir, Logger: log})
	return MemoryAssets{Tok: tok, Lex: lex}
}

// facilities: the lexicon (≈ 0.3 s alone, 1–5 s on a busy machine) loads in the background
// after start, so that the first turn finds it loaded rather than load it (it waited 5.1 s for
// WordNet on a busy machine). jieba (≈ 1 s, ≈ 110 MB of C++ dictionaries) loads after start only
// where Chinese is expected (see [expectChinese]); elsewhere it stays lazy and loads with the
// first Han text, which waits for it, so an installation that never sees Chinese never holds it.
// A text that needs one while it still loads waits for the rest of the load: the index and the
// graph never depend on when a text came.
func (m MemoryAssets) facilities(chinese bool) []kernel.Facility {
	lex := kernel.Facility{Name: "lexicon", Loaded: m.Lex.Loaded, Load: func(ctx context.Context) error {
		err := m.Lex.Load(ctx)
		// Parsing the database peaks at ≈ 70 MB of heap for ≈ 15 MB kept; the runtime would
		// hold the freed pages for minutes, so an idle kernel gives them back now.
		debug.FreeOSMemory()
		return err
	}}
	jieba := kernel.Facility{Name: "jieba", Loaded: m.Tok.Loaded}
	if chinese {
		jieba.Load = m.Tok.Load
	}
	return []kernel.Facility{lex, jieba}
}

// recentForLanguage is how many of the newest events [expectChinese] reads.
const recentForLanguage = 200

// expectChinese reports whether Chinese text is likely soon: a Chinese locale (LC_ALL, else
// LC_MESSAGES, else LANG, as the UI picks its language), or Han text among the store's newest
// events.
func expectChinese(ctx context.Context, store *sqlite.Store, getenv func(string) string) bool {
	if config.LocaleLanguage(getenv) == "zh" {
		return true
	}
	if store == nil {
		return false
	}
	texts, err := store.RecentContents(ctx, recentForLanguage)
	if err != nil {
		return false
	}
	for _, t := range texts {
		if strings.ContainsFunc(t, func(r rune) bool { return unicode.Is(unicode.Han, r) }) {
			return true
		}
	}
	return false
}

// tags are jieba's parts of speech as the fact extraction reads them (nil when jieba cannot
// load).
func (m MemoryAssets) tags(text string) []graph.Tagged {
	tags, err := m.Tok.Tag(text)
	if err != nil {
		return nil
	}
	out := make([]graph.Tagged, len(tags))
	for i, t := range tags {
		out[i] = graph.Tagged{Word: t.Word, POS: t.POS}
	}
	return out
}

// Close releases the tokenizer.
func (m MemoryAssets) Close() { m.Tok.Close() }

// BuildKernel opens the store in cfg.DataDir and builds the kernel on it, exactly as homed runs
// it (the benchmarks use it too, so they measure the product's configuration).
func BuildKernel(ctx context.Context, cfg config.Config, log *slog.Logger, mem MemoryAssets, sealer kernel.Sealer, newProv kernel.ProviderFactory) (*kernel.Kernel, *sqlite.Store, error) {
	store, err := OpenStore(ctx, cfg, log, mem)
	if err != nil {
		return nil, nil, err
	}
	k, err := NewKernel(cfg, log, mem, store, sealer, newProv)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return k, store, nil
}

// OpenStore opens DATA/hologram.db. A file it cannot trust (empty, not SQLite, malformed) is
// refused, never replaced, with an error that says what the owner can do (storeHelp).
func OpenStore(ctx context.Context, cfg config.Config, log *slog.Logger, mem MemoryAssets) (*sqlite.Store, error) {
	path := filepath.Join(cfg.DataDir, "hologram.db")
	store, err := sqlite.Open(ctx, path, sqlite.Options{Logger: log, Tokenize: mem.Tok.Tokens, Expand: mem.Lex.Expand})
	if err != nil {
		return nil, fmt.Errorf("opening store: %w%s", err, storeHelp(err, path, filepath.Join(cfg.DataDir, "backups")))
	}
	return store, nil
}

// storeHelp is the recovery advice appended to an error of [sqlite.Open] about the file.
func storeHelp(err error, path, backups string) string {
	switch {
	case errors.Is(err, sqlite.ErrEmptyFile), errors.Is(err, sqlite.ErrNotDatabase):
		return fmt.Sprintf("\n  %s is not a HologramAgent database; refusing to start rather than begin a fresh one over it."+
			"\n  - to restore a backup: stop the kernel, then cp %s/<newest>.db %s"+
			"\n  - to start afresh (everything remembered is lost): move the file away, e.g. mv %s %s.bad", path, backups, path, path, path)
	case errors.Is(err, sqlite.ErrMalformed):
		return fmt.Sprintf("\n  %s is damaged. To recover what it holds:"+
			"\n  1. stop the kernel and keep a copy: cp %s %s.damaged"+
			"\n  2. sqlite3 %s .recover | sqlite3 %s.recovered && mv %s.recovered %s"+
			"\n  or restore the newest daily backup: cp %s/<newest>.db %s", path, path, path, path, path, path, path, backups, path)
	}
	return ""
}

// NewKernel builds the kernel on an open store.
func NewKernel(cfg config.Config, log *slog.Logger, mem MemoryAssets, store *sqlite.Store, sealer kernel.Sealer, newProv kernel.ProviderFactory) (*kernel.Kernel, error) {
	return kernel.New(cfg, kernel.Deps{Store: store, Sealer: sealer, NewProvider: newProv, Logger: log,
		Tokens: mem.Tok.Tokens, Facilities: mem.facilities(expectChinese(context.Background(), store, os.Getenv)), Embedding: mem.Embedding, OCR: mem.OCR, STT: mem.STT,
		Lexicon: mem.Lex, Tag: mem.tags})
}

// loadKeys reads the key file, or makes a new one when it is missing and nothing in the store
// was sealed by the lost one. With sealed secrets in the store a missing key file is refused
// (a new key would silently make them unreadable: the providers would vanish), unless
// cfg.ResetSecrets, which drops those secrets first.
func loadKeys(ctx context.Context, cfg config.Config, store *sqlite.Store, log *slog.Logger) (security.KeySet, error) {
	if _, err := os.Stat(cfg.KeyFile); errors.Is(err, fs.ErrNotExist) {
		sealed, err := provstore.Sealed(ctx, store)
		if err != nil {
			return security.KeySet{}, fmt.Errorf("key file: looking for sealed secrets: %w", err)
		}
		if len(sealed) > 0 && !cfg.ResetSecrets {
			return security.KeySet{}, fmt.Errorf("key file %s is missing, but the store holds secrets it sealed (API keys of providers %s)"+
				"\n  - restore the key file to %s, or point to it with --key-file FILE"+
				"\n  - or start with --reset-secrets to drop those secrets and make a new key (then give the API keys again: waiter provider add)",
				cfg.KeyFile, strings.Join(sealed, ", "), cfg.KeyFile)
		}
		if len(sealed) > 0 {
			dropped, err := provstore.DropSealed(ctx, store)
			if err != nil {
				return security.KeySet{}, fmt.Errorf("--reset-secrets: %w", err)
			}
			log.Warn("key file missing: --reset-secrets dropped the secrets it sealed; give the providers' API keys again",
				"key_file", cfg.KeyFile, "providers", strings.Join(dropped, ","))
		}
	}
	keys, err := security.LoadOrCreateKeyFile(cfg.KeyFile)
	if err != nil {
		return security.KeySet{}, fmt.Errorf("key file: %w", err)
	}
	return keys, nil
}

// BenchKernel is a started kernel for the benchmarks: homed's configuration on cfg.DataDir, a key
// in keyFile, no LLM provider, and the lexicon loaded (so ingest expands as homed's does once
// warm).
func BenchKernel(ctx context.Context, cfg config.Config, log *slog.Logger, mem MemoryAssets, keyFile string) (*kernel.Kernel, *sqlite.Store, error) {
	keys, err := security.LoadOrCreateKeyFile(keyFile)
	if err != nil {
		return nil, nil, err
	}
	noLLM := func(kernel.ProviderSettings) (llm.Provider, error) { return nil, llm.ErrNoProvider }
	k, store, err := BuildKernel(ctx, cfg, log, mem, security.NewCodec(keys), noLLM)
	if err != nil {
		return nil, nil, err
	}
	if err := k.Start(ctx); err == nil {
		err = mem.Lex.Load(ctx)
	}
	if err != nil {
		k.Close()
		store.Close()
		return nil, nil, err
	}
	return k, store, nil
}
