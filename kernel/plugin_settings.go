package kernel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/plugins/host"
)

// Built-in plugins declare their options in plugin.json as a JSON Schema (config_schema): the
// kernel can show and check them without running the plugin, so a plugin that does not start
// because of its settings can still be fixed from the GUI or waiter. The kernel writes the
// plugin's own file, <config dir>/plugins/<name>.toml, which the plugin reads at start.

// maxPluginSettings bounds the settings file and the manifest the kernel reads.
const maxPluginSettings = 1 << 20

var _ client.PluginSettingsService = pluginRole{}

// pluginSettingsOf returns the plugin's resolved schema, the raw schema and its settings file.
func (k pluginRole) pluginSettingsOf(name string) (*jsonschema.Resolved, json.RawMessage, string, error) {
	st, err := k.plugins.host.Get(name)
	if err != nil {
		return nil, nil, "", hostErr(err)
	}
	if !k.plugins.isBuiltin(name) || st.Dir == "" {
		return nil, nil, "", invalid("plugin %s is not built in: its options are its own (its command line or its files)", name)
	}
	raw, err := readBounded(filepath.Join(st.Dir, "plugin.json"))
	if err != nil {
		return nil, nil, "", fmt.Errorf("plugin %s: manifest: %w", name, err)
	}
	var m host.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, "", fmt.Errorf("plugin %s: plugin.json: %w", name, err)
	}
	if len(m.ConfigSchema) == 0 {
		return nil, nil, "", invalid("plugin %s declares no settings", name)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(m.ConfigSchema, &s); err != nil {
		return nil, nil, "", fmt.Errorf("plugin %s: config_schema: %w", name, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, nil, "", fmt.Errorf("plugin %s: config_schema: %w", name, err)
	}
	if !filepath.IsAbs(k.cfg.ConfigFile) {
		return nil, nil, "", fmt.Errorf("%w: plugin %s: the kernel's config file %q is not an absolute path, so the plugins' config dir is unknown", client.ErrUnavailable, name, k.cfg.ConfigFile)
	}
	return rs, m.ConfigSchema, filepath.Join(filepath.Dir(k.cfg.ConfigFile), "plugins", name+".toml"), nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPluginSettings+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxPluginSettings {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxPluginSettings)
	}
	return b, nil
}

// PluginSettings implements client.PluginSettingsService.
func (k pluginRole) PluginSettings(ctx context.Context, name string) (client.PluginSettings, error) {
	_, schema, path, err := k.pluginSettingsOf(name)
	if err != nil {
		return client.PluginSettings{}, err
	}
	out := client.PluginSettings{Plugin: name, Path: path, Schema: schema, Values: map[string]any{}}
	raw, err := readBounded(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return out, nil
	case err != nil:
		return client.PluginSettings{}, fmt.Errorf("plugin %s: %w", name, err)
	}
	out.Exists = true
	var v map[string]any
	if err := toml.Unmarshal(raw, &v); err != nil {
		return client.PluginSettings{}, invalid("plugin %s: %s is not valid TOML (fix or delete it): %v", name, path, err)
	}
	if out.Values, err = jsonValues(v); err != nil {
		return client.PluginSettings{}, fmt.Errorf("plugin %s: %s: %w", name, path, err)
	}
	return out, nil
}

// jsonValues is v as JSON decodes it (float64 numbers, []any arrays), what the schema checks.
func jsonValues(v map[string]any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = json.Unmarshal(b, &out)
	return out, err
}

// tomlValues turns JSON numbers that are whole into integers, so the file says 1024 rather
// than 1024.0 (the plugins decode integer options into int64 fields).
func tomlValues(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = tomlValues(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for key, e := range x {
			out[key] = tomlValues(e)
		}
		return out
	}
	return v
}

// SetPluginSettings implements client.PluginSettingsService.
func (k pluginRole) SetPluginSettings(ctx context.Context, name string, values map[string]any) (client.PluginSettings, error) {
	rs, _, path, err := k.pluginSettingsOf(name)
	if err != nil {
		return client.PluginSettings{}, err
	}
	values, err = jsonValues(values)
	if err != nil {
		return client.PluginSettings{}, invalid("plugin %s: settings: %v", name, err)
	}
	if err := rs.Validate(values); err != nil {
		return client.PluginSettings{}, invalid("plugin %s: %v", name, err)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Settings of the %s plugin, written by HologramAgent (Settings, or waiter plugin config %s).\n", name, name)
	if err := toml.NewEncoder(&buf).Encode(tomlValues(values)); err != nil {
		return client.PluginSettings{}, invalid("plugin %s: settings: %v", name, err)
	}
	if buf.Len() > maxPluginSettings {
		return client.PluginSettings{}, invalid("plugin %s: the settings take %d bytes, more than %d", name, buf.Len(), maxPluginSettings)
	}
	old, oldErr := readBounded(path)
	if oldErr != nil && !errors.Is(oldErr, fs.ErrNotExist) {
		return client.PluginSettings{}, fmt.Errorf("plugin %s: %w", name, oldErr)
	}
	if err := writeSettingsFile(path, buf.Bytes()); err != nil {
		return client.PluginSettings{}, fmt.Errorf("plugin %s: %w", name, err)
	}
	st, err := k.plugins.host.Get(name)
	if err != nil {
		return client.PluginSettings{}, hostErr(err)
	}
	if st.State != host.StateDisabled {
		rst, rerr := k.plugins.host.Restart(ctx, name)
		if rerr == nil && rst.State != host.StateRunning {
			rerr = fmt.Errorf("it is %s", rst.State)
		}
		if rerr != nil {
			why := rerr.Error()
			if st, err := k.plugins.host.Get(name); err == nil && st.LastError != "" && !strings.Contains(why, st.LastError) {
				why += ": " + st.LastError
			}
			if lines, err := k.plugins.host.Logs(name, 1); err == nil && len(lines) == 1 {
				why += "; its log: " + lines[0].Line
			}
			// Give the plugin its previous settings back, so it works as before.
			if errors.Is(oldErr, fs.ErrNotExist) {
				err = os.Remove(path)
			} else {
				err = writeSettingsFile(path, old)
			}
			if err != nil {
				k.log.Warn("plugin settings not restored", "plugin", name, "path", path, "err", err)
			}
			if _, err := k.plugins.host.Restart(context.WithoutCancel(ctx), name); err != nil {
				k.log.Warn("plugin not restarted with its previous settings", "plugin", name, "err", err)
			}
			return client.PluginSettings{}, invalid("plugin %s did not start with these settings (the previous ones are back): %s", name, why)
		}
	}
	k.log.Info("plugin settings written", "plugin", name, "path", path)
	return k.PluginSettings(ctx, name)
}

// writeSettingsFile replaces path with data (0600, its directory 0700), atomically.
func writeSettingsFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
