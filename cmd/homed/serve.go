package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/api"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/openai"
	"github.com/hologramagent/hologram/kernel/security"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// drainGrace is how long SIGTERM lets in-flight turns finish before cancelling them.
const drainGrace = 10 * time.Second

func version() string {
	if kernel.Version != "dev" {
		return kernel.Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return kernel.Version
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// serve is the composition root: it chooses the SQLite store, the OpenAI-compatible client and the
// security codec, builds the kernel and serves the API until ctx is done.
func serve(ctx context.Context, cfg config.Config, env func(string) string, stdout, stderr io.Writer) error {
	t0 := time.Now()
	log := newLogger(stderr, cfg.LogLevel)
	kernel.Version = version()

	lock, err := kernel.LockDataDir(cfg.DataDir, cfg.Socket)
	if err != nil {
		return err
	}
	defer lock.Release()

	keys, err := security.LoadOrCreateKeyFile(cfg.KeyFile)
	if err != nil {
		return fmt.Errorf("key file: %w", err)
	}
	if sameDir(cfg.KeyFile, cfg.DataDir) {
		log.Warn("the key file is inside the data dir: a copy of the data dir would reveal sealed secrets", "key_file", cfg.KeyFile)
	}
	codec := security.NewCodec(keys)

	mem := newMemoryAssets(cfg, log)
	defer mem.close()
	k, store, err := buildKernel(ctx, cfg, log, mem, codec, newProvider(log))
	if err != nil {
		return err
	}
	defer store.Close()
	defer k.Close()

	var (
		ln      net.Listener
		tlsConf *tls.Config
		token   string
	)
	if cfg.Listen != "" {
		if ln, tlsConf, token, err = tcpListener(cfg, env, log, stdout); err != nil {
			return err
		}
	}
	srv := api.New(k, api.Options{Logger: log, Token: token, MaxBodyBytes: cfg.API.MaxBodyBytes, AllowedOrigins: cfg.API.AllowedOrigins, Version: kernel.Version})
	sctx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServing()
	errc := make(chan error, 2)
	unixLn, err := srv.ListenUnix(ctx, cfg.Socket)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return err
	}
	go func() { errc <- srv.ServeUnixListener(sctx, unixLn) }()
	if ln != nil {
		go func() { errc <- srv.ServeTCP(sctx, ln, tlsConf, cfg.Insecure) }()
	}
	if err := k.Start(ctx); err != nil {
		return err
	}
	log.Info("homed ready", "pid", os.Getpid(), "data", cfg.DataDir, "socket", cfg.Socket, "listen", cfg.Listen,
		"version", kernel.Version, "startup_ms", time.Since(t0).Milliseconds())

	select {
	case <-ctx.Done():
		log.Info("stopping: finishing in-flight turns", "grace", drainGrace)
	case err := <-errc:
		if err != nil {
			return fmt.Errorf("api: %w", err)
		}
	}
	dctx, cancel := context.WithTimeout(context.Background(), drainGrace)
	defer cancel()
	k.Drain(dctx)
	stopServing()
	if err := srv.Shutdown(dctx); err != nil && !errors.Is(err, context.Canceled) {
		log.Warn("api shutdown", "err", err)
	}
	if err := k.Close(); err != nil {
		log.Warn("kernel close", "err", err)
	}
	if err := store.Checkpoint(context.Background()); err != nil {
		log.Warn("store checkpoint", "err", err)
	}
	if err := store.Close(); err != nil {
		return fmt.Errorf("closing store: %w", err)
	}
	log.Info("homed stopped")
	return nil
}

func sameDir(file, dir string) bool {
	rel, err := filepath.Rel(dir, file)
	return err == nil && !strings.HasPrefix(rel, "..")
}

// newProvider is the provider factory: every provider is an OpenAI-compatible server.
func newProvider(log *slog.Logger) kernel.ProviderFactory {
	return func(ps kernel.ProviderSettings) (llm.Provider, error) {
		return openai.New(openai.Config{Name: ps.Name, BaseURL: ps.BaseURL, Model: ps.Model, APIKey: ps.APIKey, Proxy: ps.Proxy,
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

// memoryAssets are the memory's tokenizer (jieba for Chinese, loaded on the first Chinese text)
// and English lexicon (WordNet, loaded in the background after start).
type memoryAssets struct {
	tok *embed.Tokenizer
	lex *embed.Lexicon
}

func newMemoryAssets(cfg config.Config, log *slog.Logger) memoryAssets {
	lex := embed.NewLexicon(embed.LexiconOptions{Dir: cfg.Memory.WordNetDir, Logger: log})
	// Irregular English forms are not lemmatised: measured on the LoCoMo dev split, it did not
	// help (docs/benchmarks.md).
	tok := embed.NewTokenizer(embed.TokenizerOptions{JiebaDir: cfg.Memory.JiebaDir, Logger: log})
	return memoryAssets{tok: tok, lex: lex}
}

// facilities: both load lazily — the lexicon (≈ 0.3 s, ≈ 70 MB) with the first memory text,
// jieba (≈ 1 s, ≈ 130 MB) with the first Chinese text — so an idle kernel stays small.
func (m memoryAssets) facilities() []kernel.Facility {
	return []kernel.Facility{{Name: "lexicon", Loaded: m.lex.Loaded}, {Name: "jieba", Loaded: m.tok.Loaded}}
}

func (m memoryAssets) close() { m.tok.Close() }

// buildKernel opens the store in cfg.DataDir and builds the kernel on it, exactly as homed runs
// it (the benchmarks use it too, so they measure the product's configuration).
func buildKernel(ctx context.Context, cfg config.Config, log *slog.Logger, mem memoryAssets, sealer kernel.Sealer, newProv kernel.ProviderFactory) (*kernel.Kernel, *sqlite.Store, error) {
	store, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "hologram.db"), sqlite.Options{Logger: log, Tokenize: mem.tok.Tokens, Expand: mem.lex.Expand})
	if err != nil {
		return nil, nil, fmt.Errorf("opening store: %w", err)
	}
	k, err := kernel.New(cfg, kernel.Deps{Store: store, Sealer: sealer, NewProvider: newProv, Logger: log,
		Tokens: mem.tok.Tokens, Facilities: mem.facilities()})
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return k, store, nil
}

// benchKernel is a started kernel for the benchmarks: homed's configuration on cfg.DataDir, a key
// in keyFile, no LLM provider, and the lexicon loaded (so ingest expands as homed's does once
// warm).
func benchKernel(ctx context.Context, cfg config.Config, log *slog.Logger, mem memoryAssets, keyFile string) (*kernel.Kernel, *sqlite.Store, error) {
	keys, err := security.LoadOrCreateKeyFile(keyFile)
	if err != nil {
		return nil, nil, err
	}
	noLLM := func(kernel.ProviderSettings) (llm.Provider, error) { return nil, llm.ErrNoProvider }
	k, store, err := buildKernel(ctx, cfg, log, mem, security.NewCodec(keys), noLLM)
	if err != nil {
		return nil, nil, err
	}
	if err := k.Start(ctx); err == nil {
		err = mem.lex.Load(ctx)
	}
	if err != nil {
		k.Close()
		store.Close()
		return nil, nil, err
	}
	return k, store, nil
}
