package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/provstore"
	"github.com/hologramagent/hologram/memory"
)

// Providers are stored as settings (kernel/provstore); the key is sealed by the Codec and never
// leaves the kernel.
const (
	providerPrefix    = provstore.Prefix
	providerKeyDomain = provstore.KeyDomain
)

var providerNameRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

type storedProvider = provstore.Record

func validateProvider(p client.ProviderConfig) error {
	if !providerNameRe.MatchString(p.Name) {
		return invalid("invalid provider name %q (letters, digits and . _ -, at most 64)", p.Name)
	}
	u, err := url.Parse(p.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid("provider %s: base URL %q must be an http:// or https:// URL", p.Name, p.BaseURL)
	}
	if strings.TrimSpace(p.Model) == "" {
		return invalid("provider %s: a model is required (--model)", p.Name)
	}
	if p.Proxy != "" {
		if u, err := url.Parse(p.Proxy); err != nil || u.Host == "" {
			return invalid("provider %s: proxy %q is not a URL", p.Name, p.Proxy)
		}
	}
	return nil
}

// reloadProviders reads the provider list from the store, opening keys, and drops built clients.
func (k *Kernel) reloadProviders(ctx context.Context) error {
	raw, err := k.store.ListSettings(ctx, providerPrefix)
	if err != nil {
		return err
	}
	var list []ProviderSettings
	for key, v := range raw {
		var sp storedProvider
		if err := json.Unmarshal([]byte(v), &sp); err != nil {
			k.log.Error("skipping unreadable provider setting", "key", key, "err", err)
			continue
		}
		apiKey := ""
		if sp.SealedKey != "" {
			apiKey, err = k.sealer.OpenString(providerKeyDomain, sp.SealedKey)
			if err != nil {
				k.log.Error("cannot open provider key (was the key file replaced?)", "provider", sp.Name, "err", err)
				continue
			}
		}
		list = append(list, ProviderSettings{Name: sp.Name, BaseURL: sp.BaseURL, Model: sp.Model, APIKey: apiKey, Proxy: sp.Proxy, Priority: sp.Priority, Vision: sp.Vision})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Priority != list[j].Priority {
			return list[i].Priority < list[j].Priority
		}
		return list[i].Name < list[j].Name
	})
	k.provMu.Lock()
	k.providers = list
	k.built = map[string]llm.Provider{}
	k.provMu.Unlock()
	return nil
}

// Providers implements client.Service.
func (k providerRole) Providers(ctx context.Context) ([]client.Provider, error) {
	k.provMu.Lock()
	defer k.provMu.Unlock()
	out := make([]client.Provider, 0, len(k.providers))
	for _, p := range k.providers {
		out = append(out, toClientProvider(p))
	}
	return out, nil
}

func toClientProvider(p ProviderSettings) client.Provider {
	return client.Provider{Name: p.Name, BaseURL: p.BaseURL, Model: p.Model, Proxy: p.Proxy, Priority: p.Priority, HasKey: p.APIKey != "", Vision: p.Vision}
}

// keepKey gives p, when it asks to keep the key and carries none, the key of the provider of its
// name.
func (k providerRole) keepKey(p *client.ProviderConfig) {
	if p.KeepKey && p.APIKey == "" {
		k.provMu.Lock()
		defer k.provMu.Unlock()
		for _, old := range k.providers {
			if old.Name == p.Name {
				p.APIKey = old.APIKey
			}
		}
	}
}

// AddProvider implements client.Service.
func (k providerRole) AddProvider(ctx context.Context, p client.ProviderConfig) (client.Provider, error) {
	p.BaseURL = strings.TrimRight(strings.TrimSpace(p.BaseURL), "/")
	p.Model = strings.TrimSpace(p.Model)
	p.APIKey = strings.TrimSpace(p.APIKey)
	if err := validateProvider(p); err != nil {
		return client.Provider{}, err
	}
	k.keepKey(&p) // an edit that does not touch the key
	ps := ProviderSettings{Name: p.Name, BaseURL: p.BaseURL, Model: p.Model, APIKey: p.APIKey, Proxy: p.Proxy, Priority: p.Priority, Vision: p.Vision}
	if _, err := k.newProv(ps); err != nil {
		return client.Provider{}, invalid("provider %s: %v", p.Name, err)
	}
	sp := storedProvider{Name: p.Name, BaseURL: p.BaseURL, Model: p.Model, Proxy: p.Proxy, Priority: p.Priority, Vision: p.Vision}
	if p.APIKey != "" {
		sealed, err := k.sealer.SealString(providerKeyDomain, p.APIKey)
		if err != nil {
			return client.Provider{}, fmt.Errorf("sealing provider key: %w", err)
		}
		sp.SealedKey = sealed
	}
	b, err := json.Marshal(sp)
	if err != nil {
		return client.Provider{}, err
	}
	if err := k.store.SetSetting(ctx, providerPrefix+p.Name, string(b)); err != nil {
		return client.Provider{}, mapErr(err)
	}
	if err := k.reloadProviders(ctx); err != nil {
		return client.Provider{}, err
	}
	k.log.Info("provider saved", "provider", p.Name, "base_url", p.BaseURL, "model", p.Model, "has_key", p.APIKey != "")
	return toClientProvider(ps), nil
}

// RemoveProvider implements client.Service.
func (k providerRole) RemoveProvider(ctx context.Context, name string) error {
	if err := k.store.DeleteSetting(ctx, providerPrefix+name); err != nil {
		if errors.Is(err, memory.ErrNotFound) {
			return fmt.Errorf("%w: no provider named %q", client.ErrNotFound, name)
		}
		return mapErr(err)
	}
	return k.reloadProviders(ctx)
}

// resolveProvider returns the fallback chain for a session model: providers configured with that
// model first, then the others in priority order.
func (k *Kernel) resolveProvider(model string) (llm.Provider, error) {
	k.provMu.Lock()
	defer k.provMu.Unlock()
	if len(k.providers) == 0 {
		return nil, llm.ErrNoProvider
	}
	var first, rest []llm.Provider
	for _, ps := range k.providers {
		p := k.built[ps.Name]
		if p == nil {
			var err error
			if p, err = k.newProv(ps); err != nil {
				k.log.Error("provider unusable", "provider", ps.Name, "err", err)
				continue
			}
			k.built[ps.Name] = p
		}
		if model != "" && ps.Model == model {
			first = append(first, p)
		} else {
			rest = append(rest, p)
		}
	}
	all := append(first, rest...)
	switch len(all) {
	case 0:
		return nil, llm.ErrNoProvider
	case 1:
		return all[0], nil
	}
	return llm.NewFallback(all...), nil
}

// Models implements client.CompletionService: the model of every provider, deduplicated.
func (k completionRole) Models(ctx context.Context) ([]string, error) {
	k.provMu.Lock()
	defer k.provMu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, p := range k.providers {
		if !seen[p.Model] {
			seen[p.Model] = true
			out = append(out, p.Model)
		}
	}
	return out, nil
}
