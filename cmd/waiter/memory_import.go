package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// progressEvery is how often a long import or cool-all prints how far it is on stderr.
const progressEvery = time.Second

// importChats imports a chat history file (a ChatGPT export's conversations.json or .zip, or
// Open WebUI's chat export), streamed to the kernel, printing how much was sent on stderr.
func (a *app) importChats(ctx context.Context, format, name string, asJSON bool) error {
	var in io.Reader
	size := int64(-1)
	what := "stdin"
	if name == "-" {
		if a.stdin == nil {
			return usagef("import: no stdin")
		}
		in = a.stdin
	} else {
		f, err := client.OpenImportFile(name, format)
		if err != nil {
			return err
		}
		defer f.Close()
		in, size, what = f, f.Size, f.Name
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	var n atomic.Int64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(a.stderr, "import: read %s\n", sizeOf(n.Load(), size))
			}
		}
	}()
	rep, err := svc.ImportMemory(ctx, format, &countReader{r: in, n: &n})
	close(done)
	<-stopped
	if err != nil {
		return fmt.Errorf("import %s: %w", what, err)
	}
	fmt.Fprintf(a.stderr, "import: read %s\n", sizeOf(n.Load(), size))
	if asJSON {
		return a.writeJSON(rep)
	}
	c := rep.Chats
	if c == nil {
		c = &client.ChatsReport{}
	}
	fmt.Fprintf(a.stdout, "read %s: %d imported, %d unchanged, %d empty, %d refused\n",
		plural(c.Conversations, "conversation"), c.Imported, c.Unchanged, c.Empty, c.RefusedCount)
	fmt.Fprintf(a.stdout, "stored %s, %s and %s; %d messages were there already\n",
		plural(rep.Sessions, "new session"), plural(rep.Events, "message"), plural(rep.Blocks, "block"), rep.Skipped)
	if len(c.SkippedBy) > 0 {
		reasons := make([]string, 0, len(c.SkippedBy))
		for r := range c.SkippedBy {
			reasons = append(reasons, r)
		}
		slices.Sort(reasons)
		parts := make([]string, len(reasons))
		for i, r := range reasons {
			parts[i] = fmt.Sprintf("%s %d", r, c.SkippedBy[r])
		}
		fmt.Fprintf(a.stdout, "skipped: %s\n", strings.Join(parts, ", "))
	}
	for _, r := range c.Refused {
		fmt.Fprintf(a.stdout, "refused conversation %d at byte %d (%s %q): %s\n", r.Index, r.Offset, orDash(r.ID), r.Title, r.Reason)
	}
	if more := c.RefusedCount - len(c.Refused); more > 0 {
		fmt.Fprintf(a.stdout, "… and %d more refused\n", more)
	}
	return nil
}

// coolAll runs CoolAll, printing its progress on stderr at most once a second (and the end of
// each phase).
func (a *app) coolAll(ctx context.Context, svc client.Service) (client.GCReport, error) {
	var last time.Time
	var phase string
	var lastP client.GCProgress
	show := func(p client.GCProgress) {
		switch p.Phase {
		case client.GCPhaseCooling:
			fmt.Fprintf(a.stderr, "gc: cooled %d of %s\n", p.Done, plural(p.Total, "session"))
		default:
			fmt.Fprintf(a.stderr, "gc: distilled %s\n", plural(p.Done, "event"))
		}
	}
	rep, err := svc.CoolAll(ctx, func(p client.GCProgress) {
		if phase != "" && p.Phase != phase {
			show(lastP) // the end of the phase before
		}
		phase, lastP = p.Phase, p
		if time.Since(last) >= progressEvery {
			last = time.Now()
			show(p)
		}
	})
	if phase != "" {
		show(lastP)
	}
	return rep, err
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// sizeOf is "12.3 MB of 200.0 MB (6%)", or "12.3 MB" when the total is unknown.
func sizeOf(n, total int64) string {
	mb := func(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
	if total <= 0 {
		return mb(n)
	}
	return fmt.Sprintf("%s of %s (%d%%)", mb(n), mb(total), n*100/total)
}
