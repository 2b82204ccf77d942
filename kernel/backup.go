package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory/backup"
)

// ExportMemory implements client.Service.
func (k memoryRole) ExportMemory(ctx context.Context, req client.ExportRequest, w io.Writer) error {
	opts := backup.Options{Clock: k.clock, Secrets: kernelSecrets{k.Kernel}, IncludeSecrets: req.IncludeSecrets}
	switch req.Format {
	case client.FormatJSON, "":
		return backup.ExportJSON(ctx, k.db, w, opts)
	case client.FormatJSONL:
		return backup.ExportJSONL(ctx, k.db, w)
	case client.FormatMarkdown:
		return backup.ExportMarkdown(ctx, k.db, w, opts)
	}
	return invalid("unknown export format %q (json, jsonl or markdown)", req.Format)
}

// ImportMemory implements client.Service. A full backup needs an empty memory; JSONL merges.
func (k memoryRole) ImportMemory(ctx context.Context, format string, r io.Reader) (client.ImportReport, error) {
	var (
		rep backup.Report
		err error
	)
	switch format {
	case client.FormatJSON, "":
		rep, err = backup.RestoreJSON(ctx, k.db, r, backup.Options{Clock: k.clock, Secrets: kernelSecrets{k.Kernel}})
		if err == nil {
			err = k.afterRestore(ctx)
		}
	case client.FormatJSONL:
		rep, err = backup.ImportJSONL(ctx, k.db, r)
	case client.FormatChatGPT, client.FormatOpenWebUI:
		return k.importChats(ctx, format, r) // memimport.go
	case client.FormatMarkdown:
		return client.ImportReport{}, invalid("markdown is an export format only (import json, jsonl, chatgpt or openwebui)")
	default:
		return client.ImportReport{}, invalid("unknown import format %q (json, jsonl, chatgpt or openwebui)", format)
	}
	if errors.Is(err, backup.ErrNotEmpty) {
		return client.ImportReport{}, fmt.Errorf("%w: %w", client.ErrInvalid, err)
	}
	if err != nil {
		return client.ImportReport{}, mapErr(err)
	}
	k.log.Info("memory imported", "format", format, "sessions", rep.Sessions, "events", rep.Events, "entities", rep.Entities,
		"triples", rep.Triples, "skipped", rep.Skipped)
	return client.ImportReport{Sessions: rep.Sessions, Events: rep.Events, Blocks: rep.Blocks, Entities: rep.Entities, Triples: rep.Triples,
		Scenes: rep.Scenes, Settings: rep.Settings, Skipped: rep.Skipped}, nil
}

// afterRestore drops what the kernel cached of the memory before a restore and reloads the
// providers the backup brought.
func (k *Kernel) afterRestore(ctx context.Context) error {
	k.mem.Reset()
	return k.reloadProviders(ctx)
}

// kernelSecrets decides what of the settings a backup holds: provider keys (sealed by the
// codec) and plugin environments (they often carry tokens) are secrets, left out unless the
// owner asks, then written in clear text and sealed again on import.
type kernelSecrets struct{ k *Kernel }

// Export implements backup.Secrets.
func (s kernelSecrets) Export(key, value string, include bool) (string, bool, bool, error) {
	switch {
	case strings.HasPrefix(key, providerPrefix):
		var p map[string]any
		if err := json.Unmarshal([]byte(value), &p); err != nil {
			return "", false, false, fmt.Errorf("setting %s: %w", key, err)
		}
		sealed, _ := p["api_key_sealed"].(string)
		delete(p, "api_key_sealed")
		if include && sealed != "" {
			plain, err := s.k.sealer.OpenString(providerKeyDomain, sealed)
			if err != nil {
				return "", false, false, fmt.Errorf("setting %s: opening the key: %w", key, err)
			}
			p["api_key"] = plain
		}
		b, err := json.Marshal(p)
		return string(b), include && sealed != "", true, err
	case strings.HasPrefix(key, pluginPrefix):
		var p map[string]any
		if err := json.Unmarshal([]byte(value), &p); err != nil {
			return "", false, false, fmt.Errorf("setting %s: %w", key, err)
		}
		_, hasEnv := p["env"]
		if !include {
			delete(p, "env")
		}
		b, err := json.Marshal(p)
		return string(b), include && hasEnv, true, err
	}
	return value, false, true, nil
}

// Import implements backup.Secrets: a provider key in clear text is sealed again.
func (s kernelSecrets) Import(key, value string, secret bool) (string, error) {
	if !strings.HasPrefix(key, providerPrefix) {
		return value, nil
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(value), &p); err != nil {
		return "", fmt.Errorf("setting %s: %w", key, err)
	}
	plain, _ := p["api_key"].(string)
	delete(p, "api_key")
	if plain != "" {
		sealed, err := s.k.sealer.SealString(providerKeyDomain, plain)
		if err != nil {
			return "", fmt.Errorf("setting %s: sealing the key: %w", key, err)
		}
		p["api_key_sealed"] = sealed
	}
	b, err := json.Marshal(p)
	return string(b), err
}
