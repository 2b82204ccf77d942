package main

// waiter memory export and import: backups and chat histories to and from files, tars and directories.

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// memoryExport writes an export to stdout, a file (atomically, never over an existing file
// without --force) or, for markdown, into a directory.
func (a *app) memoryExport(ctx context.Context, args []string) error {
	fs := newFlags("memory export")
	format := fs.String("format", client.FormatJSON, "json (full backup), jsonl (MCP memory server) or markdown (a tar)")
	secrets := fs.Bool("include-secrets", false, "put provider keys into a json backup, in clear text")
	out := fs.String("out", "-", "a file, - for stdout, or for markdown a directory to extract into (FILE.tar keeps the tar)")
	force := fs.Bool("force", false, "overwrite existing files")
	if pos, err := parse(fs, args, true); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("memory export takes no arguments (use --out FILE)")
	}
	switch *format {
	case client.FormatJSON, client.FormatJSONL, client.FormatMarkdown:
	default:
		return usagef("--format must be json, jsonl or markdown, got %q", *format)
	}
	if *secrets && *format != client.FormatJSON {
		return usagef("--include-secrets is only for --format json")
	}
	if *out == "" {
		return usagef("--out must not be empty (- is stdout)")
	}
	req := client.ExportRequest{Format: *format, IncludeSecrets: *secrets}
	toDir := *format == client.FormatMarkdown && *out != "-" && !strings.HasSuffix(*out, ".tar")
	if *out != "-" && !toDir && !*force {
		if _, err := os.Lstat(*out); err == nil {
			return fmt.Errorf("refusing to overwrite %s (use --force)", *out)
		}
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	switch {
	case *out == "-":
		return svc.ExportMemory(ctx, req, a.stdout)
	case toDir:
		n, err := exportToDir(ctx, svc, req, *out, *force)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "exported %s into %s\n", plural(n, "file"), *out)
		return nil
	}
	if err := exportToFile(ctx, svc, req, *out, *force); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "exported to %s\n", *out)
	return nil
}

// exportToFile writes the export to a temporary file beside dst and renames it into place, so a
// failed export never leaves a partial file nor replaces a good one. Without force an existing
// dst is refused (the name is reserved before the export starts).
func exportToFile(ctx context.Context, svc client.Service, req client.ExportRequest, dst string, force bool) (err error) {
	if !force {
		f, oerr := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if oerr != nil {
			if errors.Is(oerr, fs.ErrExist) {
				return fmt.Errorf("refusing to overwrite %s (use --force)", dst)
			}
			return fmt.Errorf("export: %w", oerr)
		}
		f.Close()
		defer func() {
			if err != nil {
				os.Remove(dst)
			}
		}()
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.part")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := svc.ExportMemory(ctx, req, tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// exportToDir streams a markdown export (a tar) into dir and returns how many files it wrote.
// Entries must be relative paths without ".." (checked here, and enforced by os.Root); only
// regular files and directories are extracted; an existing file is refused unless force.
func exportToDir(ctx context.Context, svc client.Service, req client.ExportRequest, dir string, force bool) (int, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	defer root.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		pw.CloseWithError(svc.ExportMemory(ctx, req, pw))
	}()
	n, err := extractTar(root, pr, force)
	if err == nil {
		// Tar padding after the end-of-archive marker; a late export error shows here.
		_, err = io.Copy(io.Discard, pr)
	}
	if err != nil {
		cancel()
		pr.CloseWithError(err)
	}
	<-done
	if err != nil {
		return n, fmt.Errorf("export into %s: %w", dir, err)
	}
	return n, nil
}

// extractTar writes the regular files and directories of a tar stream under root.
func extractTar(root *os.Root, r io.Reader, force bool) (int, error) {
	tr := tar.NewReader(r)
	files := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return files, err
		}
		name, err := safeEntryName(h.Name)
		if err != nil {
			return files, err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o700); err != nil {
				return files, err
			}
		case tar.TypeReg:
			if d := path.Dir(name); d != "." {
				if err := root.MkdirAll(d, 0o700); err != nil {
					return files, err
				}
			}
			flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if force {
				flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			f, err := root.OpenFile(name, flags, 0o600)
			if err != nil {
				if errors.Is(err, fs.ErrExist) {
					return files, fmt.Errorf("refusing to overwrite %s (use --force)", name)
				}
				return files, err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return files, fmt.Errorf("write %s: %w", name, err)
			}
			files++
		default:
			return files, fmt.Errorf("refusing tar entry %q of type %q: only files and directories are extracted", h.Name, h.Typeflag)
		}
	}
}

// safeEntryName cleans a tar entry name, refusing absolute paths and "..".
func safeEntryName(name string) (string, error) {
	switch {
	case name == "":
		return "", errors.New("refusing a tar entry without a name")
	case strings.HasPrefix(name, "/") || filepath.IsAbs(name):
		return "", fmt.Errorf("refusing tar entry %q: an absolute path", name)
	case slices.Contains(strings.Split(strings.ReplaceAll(name, `\`, "/"), "/"), ".."):
		return "", fmt.Errorf("refusing tar entry %q: it climbs out with \"..\"", name)
	}
	clean := path.Clean(name)
	if clean == "." {
		return "", fmt.Errorf("refusing tar entry %q: it names the directory itself", name)
	}
	return clean, nil
}

func (a *app) memoryImport(ctx context.Context, args []string) error {
	fs := newFlags("memory import")
	format := fs.String("format", "", "json (a full backup, into an empty memory), jsonl (MCP memory server, merged), chatgpt or openwebui (chat histories, merged); default: jsonl for .jsonl, chatgpt for .zip and conversations.json, else json")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: waiter memory import [--format json|jsonl|chatgpt|openwebui] FILE|-")
	}
	f := *format
	if f == "" {
		f = client.FormatJSON
		switch ext := strings.ToLower(filepath.Ext(pos[0])); {
		case ext == ".jsonl" || ext == ".ndjson":
			f = client.FormatJSONL
		case ext == ".zip" || filepath.Base(pos[0]) == "conversations.json":
			f = client.FormatChatGPT // a ChatGPT export
		}
	}
	switch f {
	case client.FormatJSON, client.FormatJSONL:
	case client.FormatChatGPT, client.FormatOpenWebUI:
		return a.importChats(ctx, f, pos[0], *asJSON) // memory_import.go
	case client.FormatMarkdown:
		return usagef("markdown is an export format only: import json, jsonl, chatgpt or openwebui")
	default:
		return usagef("--format must be json, jsonl, chatgpt or openwebui, got %q", f)
	}
	var r io.Reader = a.stdin
	if pos[0] != "-" {
		file, err := os.Open(pos[0])
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer file.Close()
		r = file
	} else if r == nil {
		return usagef("import: no stdin")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	rep, err := svc.ImportMemory(ctx, f, r)
	if err != nil {
		return err
	}
	if *asJSON {
		return a.writeJSON(rep)
	}
	fmt.Fprintf(a.stdout, "imported %s, %s, %s, %s, %s, %s and %s; %d already present\n",
		plural(rep.Sessions, "session"), plural(rep.Events, "event"), plural(rep.Blocks, "block"), plural(rep.Entities, "entity"),
		plural(rep.Triples, "triple"), plural(rep.Scenes, "scene"), plural(rep.Settings, "setting"), rep.Skipped)
	return nil
}
