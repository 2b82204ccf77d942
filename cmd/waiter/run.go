package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// version is set at build time with -ldflags "-X main.version=…"; empty: from the build info.
var version = ""

const usageText = `usage: waiter [--socket PATH | --remote URL --token-file F [--fingerprint SHA256] [--insecure]] COMMAND

commands:
  chat [--session ID]                     interactive chat (the default); /quit or Ctrl-D leaves,
                                          Ctrl-C cancels the running turn
  ask [--session ID] [--attach FILE]... TEXT...
                                          one turn; prints the final reply on stdout; files are
                                          text, images or audio (a voice message without TEXT is
                                          transcribed: wav, ogg/opus, mp3, m4a, webm)
  status [--json]                         the kernel's state
  provider add NAME --base-url URL --model M [--proxy URL] [--priority N] [--vision yes|no|auto]
                                          the API key is read from HOLOGRAM_API_KEY or stdin
  provider list [--json]
  provider remove NAME
  provider test [NAME] --base-url URL --model M [--proxy URL] [--json]
                                          one real request to a provider, not saved (key as for add)
  provider detect [--json]                local Ollama or llama.cpp servers the kernel can use
  tools [--json]
  say TEXT... --out F.wav|F.ogg [--format wav|ogg] [--voice V] [--force]
                                          the text spoken (espeak-ng on the kernel's machine); the
                                          voice used is named on stderr
  session list [--json]
  session new [--title T] [--system-prompt P] [--model M] [--channel C] [--partner P] [--scope S] [ID]
                                          scope: private (default), public or group:<id>
  session rename ID TITLE...
  session delete ID [--forget]            remove a chat from the list; its memory stays
                                          unless --forget
  session instructions ID [--system-prompt P] [--model M]
  history [--session ID] [--limit N] [--json]
  window [--session ID] [--json]          what the session's next prompt holds and why
  memory search [--session ID] [--k N] [--scope S] [--layer 1|2] [--json] [--thumbnails DIR] TEXT...
                                          recall events as the agent does (--session: as that
                                          session sees them; default: the owner, every scope),
                                          with their images (--thumbnails: saved in DIR)
  memory graph|entity|merge|triple|pin|unpin|forget|scenes|gc|export|import ...
                                          the memory graph, edits, backups (waiter memory help)
  plugin list [--json]                    name, kind (builtin: ships with HologramAgent), state, pid,
                                          restarts, tools, last error
  plugin show NAME [--json]               one plugin: state, tools and its permissions (paths it
                                          reads, writes or runs from; env; network; programs)
  plugin add NAME --command "CMD ARGS..." | --dir PATH [--env K=V]... [--disabled]
                                          an MCP stdio server (quoted as in a shell) or a native plugin
  plugin restart|enable|disable|remove NAME
  plugin logs NAME [-n N]                 the plugin's stderr
  plugin config NAME [schema | set KEY VALUE | unset KEY | add KEY VALUE | del KEY VALUE]
                                          a built-in plugin's settings (its plugin.json's schema);
                                          a change is checked, written and the plugin restarted
  model list [--json]                     embedding and speech-to-text models: size, state (active,
                                          installed, partial download), SHA-256 and how it was checked;
                                          an installed speech model (whisper-base) transcribes voice messages
  model install ID [--json]               download a model (progress on a terminal; resumes)
  model import ID DIR [--json]            install a model from a directory of its files
  model use ID [--json]                   embed memory with this model (re-embeds in the background);
                                          model use "" returns to sparse (BM25-only) recall
  model remove ID
  a2a peer add NAME [--json]              let another agent talk to this one over A2A: prints its
                                          token once (its own session, scope group:a2a-NAME)
  a2a peer list [--json] | remove NAME
  assistant add NAME... [--instructions TEXT | --instructions-file F] [--model M] [--tool T]... [--id ID]
                                          a chat preset; --tool (a tool or a plugin, repeatable)
                                          limits its chats' tools (none: every tool)
  assistant list [--json] | rm ID
  assistant start ID [--title T] [--json] a new chat from a preset; prints its session id
  approvals [--json]                      plugins' requests for your approval (e.g. a shell command)
  approve ID [--deny]                     approve (or deny) one of them
  acp [--socket PATH | --remote URL ...]  the agent for editors (ACP over stdio; docs/channels.md)
  acp permissions [list|revoke PROJECT [KIND]]
                                          the "always" answers given in editors, per project
  pause                                   stop channel input and scheduled jobs (your chat works)
  resume                                  undo pause
  token                                   print a new random API token (256 bits), e.g. for
                                          homed --listen: waiter token > F; homed --token-file F
  token add NAME [--owner] [--json]       a token for an OpenAI-compatible app (/v1 only), printed
                                          once; --owner lets its requests without "user" see the
                                          owner's memory and tools (else scope group:token:NAME)
  token list [--json] | remove NAME
  pair [--host H] [--png FILE] [--json]   pair a phone with the web UI: a QR code of a single-use
                                          sign-in link (5 minutes) and its short code
  version

environment:
  HOLOGRAM_SOCKET   the kernel socket (default $XDG_RUNTIME_DIR/hologram/homed.sock)
  HOLOGRAM_TOKEN    bearer token for --remote (instead of --token-file)
  HOLOGRAM_API_KEY  provider key for "provider add" and "provider test"
`

// usageError is a command-line mistake: run prints it with a hint and exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// app carries what the commands share.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	opts           client.Options
	svc            client.Service
}

// run is waiter without the process: it parses args, runs one command and returns the exit code
// (0 ok, 1 failure, 2 usage).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	err := a.main(ctx, args)
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usageText)
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "waiter: %s\n\n%s", ue.msg, usageText)
		return 2
	}
	fmt.Fprintf(stderr, "waiter: %s\n", err)
	return 1
}

// newFlags returns a flag set that reports errors as usage errors (run prints the usage).
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args with fs; interspersed allows flags after positional arguments. Flags that
// would put a secret on the command line are refused before anything else.
func parse(fs *flag.FlagSet, args []string, interspersed bool) ([]string, error) {
	if err := refuseSecretFlags(args); err != nil {
		return nil, err
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, flag.ErrHelp
			}
			return nil, usagef("%s: %v", fs.Name(), err)
		}
		rest := fs.Args()
		if !interspersed || len(rest) == 0 {
			return append(pos, rest...), nil
		}
		if i := len(args) - len(rest) - 1; i >= 0 && args[i] == "--" {
			return append(pos, rest...), nil // everything after "--" is positional
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// refuseSecretFlags refuses --key, --api-key and --token: argv is visible to every user through
// ps and /proc and lands in shell history.
func refuseSecretFlags(args []string) error {
	for _, arg := range args {
		if arg == "--" {
			return nil
		}
		if !strings.HasPrefix(arg, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		switch name {
		case "key", "api-key", "apikey":
			return usagef("refusing --%s: a key on the command line is visible in ps and shell history; "+
				"pass it in HOLOGRAM_API_KEY or on stdin", name)
		case "token":
			return usagef("refusing --token: a token on the command line is visible in ps and shell history; " +
				"use --token-file F or HOLOGRAM_TOKEN")
		}
	}
	return nil
}

func (a *app) main(ctx context.Context, args []string) error {
	fs := newFlags("waiter")
	socket := fs.String("socket", "", "kernel unix socket")
	remote := fs.String("remote", "", "remote kernel URL")
	tokenFile := fs.String("token-file", "", "file holding the bearer token")
	fingerprint := fs.String("fingerprint", "", "pinned SHA-256 of the server certificate")
	insecure := fs.Bool("insecure", false, "allow plain HTTP off loopback")
	showVersion := fs.Bool("version", false, "print the version")
	if err := refuseSecretFlags(args); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return flag.ErrHelp
		}
		return usagef("%v", err)
	}
	if *showVersion {
		fmt.Fprintf(a.stdout, "waiter %s\n", buildVersion())
		return nil
	}
	rest := fs.Args()
	cmd := "chat"
	if len(rest) > 0 {
		cmd, rest = rest[0], rest[1:]
	}
	if cmd == "token" && len(rest) == 0 { // offline: no kernel needed (token add|list|remove: tokens.go)
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return fmt.Errorf("token: %w", err)
		}
		fmt.Fprintln(a.stdout, base64.RawURLEncoding.EncodeToString(b))
		return nil
	}
	if cmd == "version" || cmd == "help" {
		if len(rest) > 0 {
			return usagef("%s takes no arguments", cmd)
		}
		if cmd == "help" {
			fmt.Fprint(a.stdout, usageText)
		} else {
			fmt.Fprintf(a.stdout, "waiter %s\n", buildVersion())
		}
		return nil
	}
	commands := map[string]func(context.Context, []string) error{
		"chat": a.chat, "ask": a.ask, "status": a.status, "provider": a.provider, "tools": a.tools,
		"session": a.session, "history": a.history, "window": a.window, "memory": a.memory,
		"plugin": a.plugin, "pause": a.pause, "resume": a.resume,
		"assistant": a.assistant, "approvals": a.approvals, "approve": a.approve, // assistants.go, approvals.go
		"model": a.model, // model.go
		"acp":   a.acp,   // acp.go
		"a2a":   a.a2a,   // a2a.go
		"token": a.token, // tokens.go
		"pair":  a.pair,  // pair.go
		"say":   a.say,   // say.go
	}
	fn, ok := commands[cmd]
	if !ok {
		return usagef("unknown command %q", cmd)
	}
	opts, err := a.options(*socket, *remote, *tokenFile, *fingerprint, *insecure)
	if err != nil {
		return err
	}
	a.opts = opts
	return fn(ctx, rest)
}

// options builds the client options from the global flags and the environment.
func (a *app) options(socket, remote, tokenFile, fingerprint string, insecure bool) (client.Options, error) {
	if remote == "" {
		if tokenFile != "" || fingerprint != "" || insecure {
			return client.Options{}, usagef("--token-file, --fingerprint and --insecure need --remote")
		}
		if socket == "" {
			socket = defaultSocket(a.getenv)
		}
		return client.Options{Socket: socket}, nil
	}
	if socket != "" {
		return client.Options{}, usagef("--socket and --remote exclude each other")
	}
	opts := client.Options{URL: remote, Fingerprint: fingerprint, Insecure: insecure}
	switch {
	case tokenFile != "":
		tok, err := client.ReadTokenFile(tokenFile)
		if err != nil {
			return client.Options{}, err
		}
		opts.Token = tok
	case strings.TrimSpace(a.getenv("HOLOGRAM_TOKEN")) != "":
		opts.Token = strings.TrimSpace(a.getenv("HOLOGRAM_TOKEN"))
	default:
		return client.Options{}, usagef("--remote needs --token-file F or HOLOGRAM_TOKEN")
	}
	return opts, nil
}

// service dials the kernel on first use (Dial does no I/O; failures show on the first call).
func (a *app) service() (client.Service, error) {
	if a.svc != nil {
		return a.svc, nil
	}
	c, err := client.Dial(a.opts)
	if err != nil {
		return nil, err
	}
	a.svc = c
	return c, nil
}

// defaultSocket is HOLOGRAM_SOCKET, else $XDG_RUNTIME_DIR/hologram/homed.sock, else
// /tmp/hologram-UID/homed.sock (the same rule as the kernel's).
func defaultSocket(getenv func(string) string) string {
	if s := getenv("HOLOGRAM_SOCKET"); s != "" {
		return s
	}
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "hologram", "homed.sock")
	}
	return filepath.Join("/tmp", "hologram-"+strconv.Itoa(os.Getuid()), "homed.sock")
}

// buildVersion is the -X version, the module version, or the VCS revision.
func buildVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "devel-" + s.Value[:12]
		}
	}
	return "devel"
}
