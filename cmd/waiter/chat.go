package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/hologramagent/hologram/kernel/client"
)

// notifyInterrupt delivers SIGINT on the returned channel until stop is called. Tests replace it.
var notifyInterrupt = func() (sigs <-chan os.Signal, stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	return ch, func() { signal.Stop(ch) }
}

// printer shows a turn's events: reply deltas on out (when streaming), tool calls, results and
// reasoning on side, dimmed when side is a terminal.
type printer struct {
	out, side io.Writer
	stream    bool // print deltas as they come
	dim       bool
	printed   bool // a delta was printed
	midLine   bool // the last delta did not end a line
}

func newPrinter(out, side io.Writer, getenv func(string) string, stream bool) *printer {
	return &printer{out: out, side: side, stream: stream,
		dim: isTerminal(side) && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"}
}

func (p *printer) sideLine(s string) {
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
	if p.dim {
		s = "\x1b[2m" + s + "\x1b[0m"
	}
	fmt.Fprintln(p.side, s)
}

func (p *printer) event(ev client.ChatEvent) {
	switch ev.Type {
	case client.EventDelta:
		if p.stream && ev.Text != "" {
			fmt.Fprint(p.out, ev.Text)
			p.printed = true
			p.midLine = !strings.HasSuffix(ev.Text, "\n")
		}
	case client.EventReasoning:
		if p.stream && strings.TrimSpace(ev.Text) != "" {
			p.sideLine("… " + oneLine(ev.Text, 200))
		}
	case client.EventToolCall:
		if ev.Tool != nil {
			args := ev.Tool.Arguments
			if args == "" {
				args = "{}"
			}
			p.sideLine("→ " + ev.Tool.Name + " " + oneLine(args, 200))
		}
	case client.EventToolResult:
		if ev.Tool != nil {
			p.sideLine("← " + ev.Tool.Status + ": " + oneLine(ev.Tool.Result, 200))
		}
	case client.EventApproval:
		if ev.Approval != nil {
			p.sideLine(approvalLine(ev.Approval))
		}
	case client.EventNotice:
		p.sideLine("note: " + ev.Text)
	case client.EventTranscript:
		p.sideLine("heard: " + ev.Text)
	}
}

// finish ends the reply: prints the final text when no delta carried it, and the last newline.
func (p *printer) finish(res client.ChatResult) {
	if !p.printed && res.Text != "" {
		fmt.Fprint(p.out, res.Text)
		p.midLine = !strings.HasSuffix(res.Text, "\n")
	}
	if p.midLine {
		fmt.Fprintln(p.out)
	}
	p.printed, p.midLine = false, false
}

// chat is the interactive loop: one turn per stdin line. Ctrl-C cancels a running turn; at the
// prompt it leaves, as do EOF and /quit.
func (a *app) chat(ctx context.Context, args []string) error {
	fs := newFlags("chat")
	session := fs.String("session", "", "session id (default: the kernel's main session)")
	if pos, err := parse(fs, args, true); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("chat takes no arguments (type your messages on stdin)")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	if _, err := svc.Health(ctx); err != nil {
		return err
	}
	sigs, stopSigs := notifyInterrupt()
	defer stopSigs()

	interactive := isTerminal(a.stdin)
	if interactive {
		fmt.Fprintln(a.stderr, "waiter: type a message; /quit or Ctrl-D leaves, Ctrl-C cancels a running reply")
	}
	// The reader owns stdin until EOF; a Read blocked on a terminal ends with the process.
	lines := make(chan string)
	readErr := make(chan error, 1)
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		sc := bufio.NewScanner(a.stdin)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-quit:
				return
			}
		}
		readErr <- sc.Err()
	}()

	p := newPrinter(a.stdout, a.stderr, a.getenv, true)
	for {
		if interactive {
			fmt.Fprint(a.stderr, "› ")
		}
		var line string
		select {
		case <-ctx.Done():
			return nil
		case <-sigs:
			fmt.Fprintln(a.stderr)
			return nil
		case err := <-readErr:
			if interactive {
				fmt.Fprintln(a.stderr)
			}
			if err != nil {
				return fmt.Errorf("read stdin: %w", err)
			}
			return nil
		case line = <-lines:
		}
		line = strings.TrimSpace(line)
		switch line {
		case "":
			continue
		case "/quit", "/exit", "/q":
			return nil
		}
		if err := a.turn(ctx, svc, p, sigs, client.ChatRequest{Session: *session, Input: line, Channel: "waiter"}); err != nil {
			return err
		}
	}
}

// turn runs one chat turn, cancelling it on SIGINT. Turn failures are shown and the chat goes on;
// only a lost kernel ends it.
func (a *app) turn(ctx context.Context, svc client.Service, p *printer, sigs <-chan os.Signal, req client.ChatRequest) error {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-sigs:
			cancel()
		case <-done:
		}
	}()
	res, err := svc.Chat(tctx, req, p.event)
	close(done)
	wg.Wait()
	switch {
	case err == nil:
		p.finish(res)
	case ctx.Err() != nil:
		return nil
	case tctx.Err() != nil:
		p.finish(client.ChatResult{})
		fmt.Fprintln(a.stderr, "(cancelled)")
	case errors.Is(err, client.ErrUnavailable):
		p.finish(client.ChatResult{})
		return err
	default:
		p.finish(client.ChatResult{})
		fmt.Fprintf(a.stderr, "waiter: %s\n", err)
	}
	return nil
}
