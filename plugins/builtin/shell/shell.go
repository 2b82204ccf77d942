package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugconf"
	"github.com/hologramagent/hologram/plugins/builtin/internal/toolargs"
	"github.com/hologramagent/hologram/plugins/sdk"
)

// shell is the plugin: its allow-list, roots and limits.
type shell struct {
	cfg   Config
	roots []string // resolved absolute paths
	tmp   string   // the commands' TMPDIR ("": the plugin's own)
	now   func() time.Time
}

// newShell checks the roots of cfg. now is the clock (durations in results).
func newShell(cfg Config, now func() time.Time) (*shell, error) {
	s := &shell{cfg: cfg, now: now}
	for _, r := range cfg.Roots {
		r, err := plugconf.ExpandHome("root", r, cfg.home)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.path, err)
		}
		p, err := filepath.EvalSymlinks(r)
		if err != nil {
			return nil, fmt.Errorf("%s: root %q: %w", cfg.path, r, err)
		}
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%s: root %q is not a directory", cfg.path, r)
		}
		s.roots = append(s.roots, p)
	}
	return s, nil
}

// plugin returns the sdk plugin.
func (s *shell) plugin() sdk.Plugin {
	return sdk.Plugin{Name: "shell", Version: "1.0.0",
		Tools: []sdk.Tool{
			{Name: "shell_run", Title: "Run a command",
				Description: "Runs a command the owner's allow-list permits, after the owner approves it. Give argv (the " +
					"program and its arguments, no shell) or, only where the allow-list says so, command (a shell line). " +
					"cwd is a directory inside " + strings.Join(s.roots, ", ") + " (default the first). Returns the exit " +
					"status and the output (stdout and stderr together, capped). shell_allowed lists what is allowed.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{` +
					`"argv":{"type":"array","items":{"type":"string"},"minItems":1},"command":{"type":"string"},` +
					`"cwd":{"type":"string"},"timeout_seconds":{"type":"integer","minimum":1}}}`),
				Run: s.run},
			{Name: "shell_allowed", Title: "List allowed commands",
				Description: "Lists the commands the owner's allow-list permits, the working directories and the limits.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{}}`), ReadOnly: true, Run: s.allowed},
		},
		Start: func(ctx context.Context, k *sdk.Kernel) error {
			k.Logger().Info("shell started", "allow", len(s.cfg.Allow), "roots", strings.Join(s.roots, ","), "config", s.cfg.path)
			return nil
		}}
}

// allowed is shell_allowed.
func (s *shell) allowed(ctx context.Context, k *sdk.Kernel, _ json.RawMessage) (sdk.Result, error) {
	var b strings.Builder
	if len(s.cfg.Allow) == 0 {
		fmt.Fprintf(&b, "nothing is allowed: the allow-list in %s is empty\n", s.cfg.path)
	} else {
		b.WriteString("allowed (each run still needs the owner's approval):\n")
		for _, a := range s.cfg.Allow {
			b.WriteString("  " + a.String() + "\n")
		}
	}
	fmt.Fprintf(&b, "working directories: %s\ntimeout: %s by default, at most %s\noutput kept: %d bytes",
		strings.Join(s.roots, ", "), s.cfg.Timeout, s.cfg.MaxTimeout, s.cfg.MaxOutputBytes)
	return sdk.Text(b.String()), nil
}

// howTo says how the owner allows argv or a shell line.
func (s *shell) howTo(argv []string, line string) string {
	var entry string
	if line != "" {
		entry = fmt.Sprintf("[[allow]]\nshell = %q", line)
	} else {
		entry = fmt.Sprintf("[[allow]]\nprogram = %q", argv[0])
	}
	return fmt.Sprintf("the owner can allow it by adding to %s:\n%s\nand restarting the plugin (waiter plugin restart shell)", s.cfg.path, entry)
}

// match returns the program to execute for argv or line, or why it is not allowed.
func (s *shell) match(argv []string, line string) (prog string, args []string, err error) {
	if len(s.cfg.Allow) == 0 {
		return "", nil, fmt.Errorf("refused: the shell plugin's allow-list is empty, so every command is refused; %s", s.howTo(argv, line))
	}
	if line != "" {
		for _, a := range s.cfg.Allow {
			if a.Shell != "" && (a.Shell == "*" || a.Shell == line) {
				return "/bin/sh", []string{"-c", line}, nil
			}
		}
		return "", nil, fmt.Errorf("refused: the shell line %q is not on the allow-list (shell lines run only when an entry names them exactly); %s",
			line, s.howTo(nil, line))
	}
	for _, a := range s.cfg.Allow {
		if a.Program == "" || a.Program != argv[0] || len(argv)-1 < len(a.Args) || !slices.Equal(argv[1:1+len(a.Args)], a.Args) {
			continue
		}
		prog := a.Program
		if !filepath.IsAbs(prog) {
			p, err := exec.LookPath(prog)
			if err != nil {
				return "", nil, fmt.Errorf("program %q is allowed but not found: %w", prog, err)
			}
			prog = p
		}
		return prog, argv[1:], nil
	}
	return "", nil, fmt.Errorf("refused: %q is not on the allow-list; %s", strings.Join(argv, " "), s.howTo(argv, ""))
}

// workDir resolves cwd to a directory inside a root.
func (s *shell) workDir(cwd string) (string, error) {
	cwd = strings.TrimSpace(cwd)
	if cwd == "" {
		return s.roots[0], nil
	}
	p := cwd
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.roots[0], p)
	}
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("cwd %q: %w", cwd, err)
	}
	for _, r := range s.roots {
		if rel, err := filepath.Rel(r, resolved); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			if fi, err := os.Stat(resolved); err != nil || !fi.IsDir() {
				return "", fmt.Errorf("cwd %q is not a directory", cwd)
			}
			return resolved, nil
		}
	}
	return "", fmt.Errorf("cwd %q (%s) is outside the working directories %s", cwd, resolved, strings.Join(s.roots, ", "))
}

// capped keeps the first max bytes written to it and counts them all. Safe for concurrent use
// (stdout and stderr share it).
type capped struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += len(p)
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// run is shell_run.
func (s *shell) run(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct {
		Argv           []string `json:"argv"`
		Command        string   `json:"command"`
		Cwd            string   `json:"cwd"`
		TimeoutSeconds int      `json:"timeout_seconds"`
	}
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	line := strings.TrimSpace(a.Command)
	switch {
	case len(a.Argv) == 0 && line == "":
		return sdk.Result{}, errors.New("give argv (the program and its arguments) or command (a shell line)")
	case len(a.Argv) > 0 && line != "":
		return sdk.Result{}, errors.New("give argv or command, not both")
	case len(a.Argv) > 0 && strings.TrimSpace(a.Argv[0]) == "":
		return sdk.Result{}, errors.New("argv[0], the program, is empty")
	case a.TimeoutSeconds < 0:
		return sdk.Result{}, fmt.Errorf("timeout_seconds must be positive, got %d", a.TimeoutSeconds)
	}
	for _, v := range append(slices.Clone(a.Argv), line) {
		if strings.ContainsRune(v, 0) {
			return sdk.Result{}, errors.New("the command contains a NUL byte")
		}
	}
	timeout := s.cfg.Timeout
	if a.TimeoutSeconds > 0 {
		timeout = time.Duration(a.TimeoutSeconds) * time.Second
		if timeout > s.cfg.MaxTimeout {
			return sdk.Result{}, fmt.Errorf("timeout_seconds %d is more than the %s the owner allows", a.TimeoutSeconds, s.cfg.MaxTimeout)
		}
	}
	prog, progArgs, err := s.match(a.Argv, line)
	if err != nil {
		return sdk.Result{}, err
	}
	dir, err := s.workDir(a.Cwd)
	if err != nil {
		return sdk.Result{}, err
	}
	shown := line
	if shown == "" {
		shown = quoteArgv(a.Argv)
	}
	ans, err := k.Approve(ctx, sdk.Approval{Title: "Run a command",
		Detail: fmt.Sprintf("$ %s\nin %s (timeout %s)", shown, dir, timeout)})
	if err != nil {
		return sdk.Result{}, fmt.Errorf("not run: the owner's approval could not be asked: %w", err)
	}
	if !ans.Approved {
		k.Logger().Info("command not approved", "command", shown, "reason", ans.Reason)
		return sdk.Result{IsError: true, Content: []sdk.Content{{Type: "text", Text: "not run: " + ans.Reason}}}, nil
	}
	return s.exec(ctx, k, prog, progArgs, dir, shown, timeout), nil
}

// quoteArgv renders argv for people (quoted where a shell would need it).
func quoteArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>*?()[]{}#~!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// childEnv is the plugin's environment without the kernel's variables, with TMPDIR the
// plugin's private temporary directory when it has one (the only writable place besides the
// roots under its confinement).
func (s *shell) childEnv() []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "HOLOGRAM_") && (s.tmp == "" || !strings.HasPrefix(e, "TMPDIR=")) {
			env = append(env, e)
		}
	}
	if s.tmp != "" {
		env = append(env, "TMPDIR="+s.tmp)
	}
	return env
}

// exec runs an approved command in its own process group, killed as a whole at the timeout
// (and once it exits, so that nothing it started lingers), and reports its status and output.
func (s *shell) exec(ctx context.Context, k *sdk.Kernel, prog string, args []string, dir, shown string, timeout time.Duration) sdk.Result {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := &capped{max: s.cfg.MaxOutputBytes}
	cmd := exec.CommandContext(rctx, prog, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, s.childEnv(), out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	start := s.now()
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // its leftovers, if any
	}
	took := s.now().Sub(start).Round(time.Millisecond)
	var status string
	isErr := false
	var exitErr *exec.ExitError
	switch {
	case rctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		status, isErr = fmt.Sprintf("timed out after %s: killed", timeout), true
	case ctx.Err() != nil:
		status, isErr = "cancelled: killed", true
	case err == nil:
		status = "exit 0"
	case errors.As(err, &exitErr):
		status, isErr = fmt.Sprintf("exit %d", exitErr.ExitCode()), true
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = "killed by " + ws.Signal().String()
		}
	default:
		status, isErr = "failed to run: "+err.Error(), true
	}
	k.Logger().Info("command ran", "command", shown, "dir", dir, "status", status, "took", took)
	out.mu.Lock()
	text := strings.ToValidUTF8(string(out.buf), "\uFFFD")
	total := out.total
	out.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "$ %s\n(in %s) %s after %s\n", shown, dir, status, took)
	b.WriteString(text)
	if total > len(out.buf) {
		fmt.Fprintf(&b, "\n[output truncated: %d bytes, the first %d shown]", total, len(out.buf))
	}
	return sdk.Result{IsError: isErr, Content: []sdk.Content{{Type: "text", Text: b.String()}}}
}
