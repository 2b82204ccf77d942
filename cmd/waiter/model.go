package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// model runs `waiter model list|install|import|use|remove`: the dense embedding models.
func (a *app) model(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("model needs a subcommand: list, install, import, use or remove")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "list", "ls":
		return a.modelList(ctx, args)
	case "install":
		return a.modelInstall(ctx, args)
	case "import":
		return a.modelImport(ctx, args)
	case "use":
		return a.modelUse(ctx, args)
	case "remove", "rm":
		fs := newFlags("model remove")
		pos, err := parse(fs, args, true)
		if err != nil {
			return err
		}
		if len(pos) != 1 || pos[0] == "" {
			return usagef("usage: waiter model remove ID")
		}
		svc, err := a.service()
		if err != nil {
			return err
		}
		if err := svc.RemoveModel(ctx, pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "model %s removed\n", pos[0])
		return nil
	}
	return usagef("unknown model subcommand %q", sub)
}

func (a *app) modelList(ctx context.Context, args []string) error {
	return runListing(ctx, a, args, listing[client.EmbeddingModel]{
		name:   "model list",
		fetch:  client.Service.EmbeddingModels,
		header: []string{"ID", "KIND", "DIM", "SIZE", "STATE", "SHA256", "DESCRIPTION"},
		row: func(m client.EmbeddingModel) []string {
			size := "-"
			if m.Size > 0 {
				size = humanBytes(m.Size)
			}
			return []string{m.ID, m.Kind, strconv.Itoa(m.Dim), size, modelState(m), modelHash(m), oneLine(m.Description, 60)}
		},
	})
}

// modelState is "active", "installed", "partial N MB" (an interrupted download) or "-".
func modelState(m client.EmbeddingModel) string {
	switch {
	case m.Active && m.Installed:
		return "active"
	case m.Active:
		return "active (missing)"
	case m.Installed:
		return "installed"
	case m.Partial > 0:
		return "partial " + humanBytes(m.Partial)
	}
	return "-"
}

// modelHash is the model file's SHA-256 (abbreviated) and how it was checked; for a model not
// installed, whether the catalogue pins it.
func modelHash(m client.EmbeddingModel) string {
	if len(m.Files) == 0 {
		return "-"
	}
	f := m.Files[0] // the ONNX file comes first in the catalogue
	if m.Installed && len(f.SHA256) >= 12 {
		return f.SHA256[:12] + "… (" + f.Check + ")"
	}
	if f.Pinned != "" {
		return "pinned " + f.Pinned[:min(12, len(f.Pinned))] + "…"
	}
	return "recorded at download"
}

// humanBytes writes n bytes as "512 B", "3.4 KB", "95.0 MB" or "1.20 GB" (powers of 1000).
func humanBytes(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1e6:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	case n < 1e9:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f GB", float64(n)/1e9)
}

func (a *app) modelInstall(ctx context.Context, args []string) error {
	fs := newFlags("model install")
	asJSON := fs.Bool("json", false, "print the installed model as JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] == "" {
		return usagef("usage: waiter model install ID (waiter model list shows the IDs)")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	bar := newProgressLine(a.stderr, isTerminal(a.stderr))
	m, err := svc.InstallModel(ctx, pos[0], bar.update)
	bar.finish()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("%w (the part downloaded is kept: install again to resume)", err)
		}
		return err
	}
	if *asJSON {
		return a.writeJSON(m)
	}
	fmt.Fprintf(a.stdout, "model %s installed (%s, from %s); use it with `waiter model use %s`\n", m.ID, humanBytes(m.Size), orDash(m.Source), m.ID)
	return nil
}

func (a *app) modelImport(ctx context.Context, args []string) error {
	fs := newFlags("model import")
	asJSON := fs.Bool("json", false, "print the installed model as JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 2 || pos[0] == "" || pos[1] == "" {
		return usagef("usage: waiter model import ID DIR (DIR holds the model's files, on the kernel's machine)")
	}
	dir := pos[1]
	if !filepath.IsAbs(dir) {
		if a.opts.Socket == "" {
			return usagef("model import: with --remote, DIR must be an absolute path on the kernel's machine")
		}
		if dir, err = filepath.Abs(dir); err != nil {
			return fmt.Errorf("model import: %w", err)
		}
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	m, err := svc.ImportModel(ctx, pos[0], dir)
	if err != nil {
		return err
	}
	if *asJSON {
		return a.writeJSON(m)
	}
	fmt.Fprintf(a.stdout, "model %s imported from %s (%s); use it with `waiter model use %s`\n", m.ID, dir, humanBytes(m.Size), m.ID)
	for _, f := range m.Files {
		if strings.Contains(f.Check, "differs") {
			fmt.Fprintf(a.stderr, "waiter: note: %s %s (sha256 %s)\n", f.Path, f.Check, f.SHA256)
		}
	}
	return nil
}

func (a *app) modelUse(ctx context.Context, args []string) error {
	fs := newFlags("model use")
	asJSON := fs.Bool("json", false, "print the embedding status as JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef(`usage: waiter model use ID, or waiter model use "" for sparse mode`)
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	st, err := svc.UseModel(ctx, pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		return a.writeJSON(st)
	}
	fmt.Fprintln(a.stdout, embeddingLine(st))
	return nil
}

// embeddingLine says the embedding mode in one line, for `model use` and `status`.
func embeddingLine(st client.EmbeddingStatus) string {
	if st.Mode == client.EmbeddingDense {
		s := "dense: " + st.Model + " (space " + st.Space + ")"
		if p := st.Reembed; p.Running || p.Done < p.Total {
			s += fmt.Sprintf("; re-embedding %d of %d events in the background", p.Done, p.Total)
		} else {
			s += fmt.Sprintf("; %d events embedded", p.Done)
		}
		if p := st.Images; p != nil && (p.Running || p.Done < p.Total) {
			s += fmt.Sprintf(", %d of %d images", p.Done, p.Total)
		} else if p != nil {
			s += fmt.Sprintf(", %d images", p.Done)
		}
		return s
	}
	if st.Reason == "" {
		return "sparse"
	}
	return "sparse: " + st.Reason
}

// progressLine shows a download's progress on one terminal line, rewritten in place; on
// anything but a terminal it shows nothing (the command's result says what happened).
type progressLine struct {
	w     io.Writer
	tty   bool
	shown bool
	width int
}

func newProgressLine(w io.Writer, tty bool) *progressLine { return &progressLine{w: w, tty: tty} }

func (p *progressLine) update(pr client.ModelProgress) {
	if !p.tty {
		return
	}
	line := fmt.Sprintf("%s %s: %s", pr.Model, pr.File, humanBytes(pr.Done))
	if pr.Total > 0 {
		line += fmt.Sprintf(" of %s (%d%%)", humanBytes(pr.Total), pr.Done*100/pr.Total)
	}
	if pr.Hub != "" {
		line += " from " + pr.Hub
	}
	pad := max(0, p.width-displayWidth(line))
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
	p.width = displayWidth(line)
	p.shown = true
}

// finish ends the progress line.
func (p *progressLine) finish() {
	if p.shown {
		fmt.Fprintln(p.w)
		p.shown = false
	}
}
