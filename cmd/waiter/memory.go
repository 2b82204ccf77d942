package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// excerptRunes bounds the content excerpts of the window and memory tables.
const excerptRunes = 60

// window prints a session's L1 context window: a header line with the budget, then one row per
// item with why it is there.
func (a *app) window(ctx context.Context, args []string) error {
	fs := newFlags("window")
	session := fs.String("session", defaultSession, "session id")
	asJSON := fs.Bool("json", false, "print JSON")
	if pos, err := parse(fs, args, true); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("window takes no arguments (use --session ID)")
	}
	if *session == "" {
		return usagef("--session must not be empty")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	w, err := svc.Window(ctx, *session)
	if err != nil {
		return err
	}
	if w.Items == nil {
		w.Items = []client.WindowItem{}
	}
	if *asJSON {
		return a.writeJSON(w)
	}
	fmt.Fprintf(a.stdout, "session %s  budget %d  used %d  pinned %d  sunk %d  items %d\n",
		w.Session, w.Budget, w.Used, w.Pinned, w.Sunk, len(w.Items))
	if w.Input != "" {
		fmt.Fprintf(a.stdout, "scored against: %s\n", oneLine(w.Input, excerptRunes))
	}
	if len(w.Items) == 0 {
		fmt.Fprintln(a.stderr, "the window is empty")
	} else {
		rows := [][]string{{"TIME", "ROLE", "TOKENS", "SCORE", "SOURCE", "REASON", "CONTENT"}}
		for _, it := range w.Items {
			rows = append(rows, []string{shortTime(it.Time), it.Role, fmt.Sprint(it.Tokens), fmt.Sprintf("%.3f", it.Score),
				orDash(it.Source), orDash(oneLine(it.Reason, 40)), excerpt(it.Content)})
		}
		if err := a.table(rows); err != nil {
			return err
		}
	}
	if tw := w.Tools; tw != nil {
		fmt.Fprintf(a.stdout, "\ntools of turn %s round %d: sent %d (%d tokens), left out %d\n", tw.TurnID, tw.Round, tw.Sent, tw.Tokens, tw.Left)
		rows := [][]string{{"TOOL", "SENT", "SCORE", "TOKENS", "REASON"}}
		for _, t := range tw.Tools {
			rows = append(rows, []string{t.Name, yesNo(t.Sent), fmt.Sprintf("%.3f", t.Score), fmt.Sprint(t.Tokens), t.Reason})
		}
		return a.table(rows)
	}
	return nil
}

// memory runs the memory subcommands.
func (a *app) memory(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("memory needs a subcommand: search, graph, entity, merge, triple, pin, unpin, forget, scenes, gc, export or import (waiter memory help)")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "search":
		return a.memorySearch(ctx, args)
	case "graph":
		return a.memoryGraph(ctx, args)
	case "entity":
		return a.memoryEntity(ctx, args)
	case "merge":
		return a.memoryMerge(ctx, args)
	case "triple":
		return a.memoryTriple(ctx, args)
	case "pin", "unpin":
		return a.memoryPin(ctx, args, sub == "pin")
	case "forget":
		return a.memoryForget(ctx, args)
	case "scenes":
		return a.memoryScenes(ctx, args)
	case "gc":
		return a.memoryGC(ctx, args)
	case "export":
		return a.memoryExport(ctx, args)
	case "import":
		return a.memoryImport(ctx, args)
	case "help":
		fmt.Fprint(a.stdout, memoryUsage)
		return nil
	}
	return usagef("unknown memory subcommand %q (waiter memory help lists them)", sub)
}

// memorySearch recalls events the way the agent does and prints them best first.
func (a *app) memorySearch(ctx context.Context, args []string) error {
	fs := newFlags("memory search")
	session := fs.String("session", "", "whose view (default: the owner's, who sees every scope)")
	k := fs.Int("k", client.DefaultMemoryK, "number of hits (1 to 100)")
	scope := fs.String("scope", "", "only events of this scope: private, public or group:<id>")
	layer := fs.Int("layer", 0, "only layer 1 (the window) or 2 (cold context); 0: both")
	asJSON := fs.Bool("json", false, "print JSON")
	thumbs := fs.String("thumbnails", "", "save the hits' image thumbnails in this directory (as BLOCK.png)")
	text, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	q := strings.TrimSpace(strings.Join(text, " "))
	switch {
	case q == "":
		return usagef("memory search needs text: waiter memory search [--session ID] [--k N] [--scope S] [--layer 1|2] [--thumbnails DIR] TEXT...")
	case *k < 1 || *k > client.MaxMemoryK:
		return usagef("--k must be from 1 to %d, got %d", client.MaxMemoryK, *k)
	case *layer < 0 || *layer > 2:
		return usagef("--layer must be 1 or 2, got %d", *layer)
	}
	if *scope != "" {
		if err := client.CheckScope(*scope); err != nil {
			return usagef("--scope must be private, public or group:<id>, got %q", *scope)
		}
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	hits, err := svc.SearchMemory(ctx, client.MemoryQuery{Text: q, Session: *session, K: *k, Scope: *scope, Layer: *layer})
	if err != nil {
		return err
	}
	if hits == nil {
		hits = []client.MemoryHit{}
	}
	if *asJSON {
		return a.writeJSON(hits)
	}
	if len(hits) == 0 {
		fmt.Fprintln(a.stderr, "no memories match")
		return nil
	}
	rows := [][]string{{"#", "SCORE", "TIME", "SESSION", "PARTNER", "LAYER", "SCOPE", "EXCERPT"}}
	images := [][]string{{"#", "IMAGE", "MATCH", "THUMBNAIL"}}
	for i, h := range hits {
		rows = append(rows, []string{strconv.Itoa(i + 1), fmt.Sprintf("%.3f", h.Score), shortTime(h.Time), h.Session, orDash(h.Partner),
			fmt.Sprintf("L%d", h.Layer), orDash(h.Scope), excerpt(h.Content)})
		for _, im := range h.Images {
			match := "text"
			if im.Matched {
				match = "image"
			}
			where := client.ThumbnailPath(im.Block)
			if *thumbs != "" {
				if where, err = a.saveThumbnail(ctx, svc, *thumbs, im.Block); err != nil {
					return err
				}
			}
			images = append(images, []string{strconv.Itoa(i + 1), orDash(excerpt(im.Name)), match, where})
		}
	}
	if err := a.table(rows); err != nil {
		return err
	}
	if len(images) == 1 {
		return nil
	}
	fmt.Fprintln(a.stdout)
	return a.table(images)
}

// saveThumbnail writes an image block's thumbnail to dir/BLOCK.png and returns the path.
func (a *app) saveThumbnail(ctx context.Context, svc client.Service, dir, block string) (string, error) {
	data, err := svc.Thumbnail(ctx, block)
	if err != nil {
		return "", fmt.Errorf("thumbnail of image %s: %w", block, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, filepath.Base(block)+".png")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// excerpt is content on one line, at most excerptRunes runes, tabs and line breaks as spaces (a
// tab would break the table's columns).
func excerpt(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > excerptRunes {
		return string(r[:excerptRunes-1]) + "…"
	}
	return s
}

// shortTime shows a time in local time to the minute.
func shortTime(t time.Time) string {
	return t.Local().Format("2006-01-02 15:04")
}
