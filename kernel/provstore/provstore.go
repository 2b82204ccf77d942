// Package provstore is how the kernel stores its LLM providers: one setting per provider,
// Prefix+name, holding a JSON [Record] whose API key is sealed by the kernel's Codec under
// KeyDomain. The daemon reads it before the kernel starts (a key file gone while sealed keys
// exist is refused, kernel/security's safe start).
package provstore

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
)

// Setting names and the sealing domain.
const (
	Prefix    = "provider/"
	KeyDomain = "provider-key"
)

// Record is one provider as stored: the setting Prefix+name, JSON. SealedKey is its API key
// sealed by the kernel's Codec under KeyDomain.
type Record struct {
	Name      string `json:"name"`
	BaseURL   string `json:"base_url"`
	Model     string `json:"model"`
	Proxy     string `json:"proxy,omitempty"`
	Priority  int    `json:"priority"`
	Vision    *bool  `json:"vision,omitempty"`
	SealedKey string `json:"api_key_sealed,omitempty"`
}

// Settings is the part of the memory store providers live in.
type Settings interface {
	ListSettings(ctx context.Context, prefix string) (map[string]string, error)
	SetSetting(ctx context.Context, key, value string) error
}

// Sealed returns, sorted, the names of the stored providers whose API key is sealed (by
// the key file's Codec): a kernel started without that key file could not open them.
func Sealed(ctx context.Context, st Settings) ([]string, error) {
	raw, err := st.ListSettings(ctx, Prefix)
	if err != nil {
		return nil, err
	}
	var names []string
	for key, v := range raw {
		var sp Record
		if json.Unmarshal([]byte(v), &sp) == nil && sp.SealedKey != "" {
			names = append(names, strings.TrimPrefix(key, Prefix))
		}
	}
	sort.Strings(names)
	return names, nil
}

// DropSealed removes every sealed API key from the stored providers (the providers stay,
// without a key, until the owner gives one again) and returns their names. It is the
// --reset-secrets path: the key file that sealed them is lost.
func DropSealed(ctx context.Context, st Settings) ([]string, error) {
	raw, err := st.ListSettings(ctx, Prefix)
	if err != nil {
		return nil, err
	}
	var names []string
	for key, v := range raw {
		var sp Record
		if json.Unmarshal([]byte(v), &sp) != nil || sp.SealedKey == "" {
			continue
		}
		sp.SealedKey = ""
		b, err := json.Marshal(sp)
		if err != nil {
			return nil, err
		}
		if err := st.SetSetting(ctx, key, string(b)); err != nil {
			return nil, err
		}
		names = append(names, strings.TrimPrefix(key, Prefix))
	}
	sort.Strings(names)
	return names, nil
}
