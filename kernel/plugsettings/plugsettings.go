// Package plugsettings reads, checks and writes a built-in plugin's settings file.
//
// A built-in plugin declares its options in plugin.json as a JSON Schema (config_schema): the
// kernel can show and check them without running the plugin, so a plugin that does not start
// because of its settings can still be fixed from the GUI or waiter. The file is the plugin's
// own, <config dir>/plugins/<name>.toml, which it reads at start.
package plugsettings

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

	"github.com/BurntSushi/toml"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/plugins/host"
)

// maxBytes bounds the settings file and the manifest read.
const maxBytes = 1 << 20

// File is one plugin's settings: its schema and its file.
type File struct {
	plugin, path string
	raw          json.RawMessage
	schema       *jsonschema.Resolved
}

// Open reads the config_schema of the plugin in dir (its plugin.json); path is its settings
// file. A plugin that declares none is client.ErrInvalid.
func Open(plugin, dir, path string) (*File, error) {
	raw, err := readBounded(filepath.Join(dir, "plugin.json"))
	if err != nil {
		return nil, fmt.Errorf("plugin %s: manifest: %w", plugin, err)
	}
	var m host.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("plugin %s: plugin.json: %w", plugin, err)
	}
	if len(m.ConfigSchema) == 0 {
		return nil, fmt.Errorf("%w: plugin %s declares no settings", client.ErrInvalid, plugin)
	}
	rs, err := resolve(m.ConfigSchema)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: config_schema: %w", plugin, err)
	}
	return &File{plugin: plugin, path: path, raw: m.ConfigSchema, schema: rs}, nil
}

func resolve(raw json.RawMessage) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxBytes)
	}
	return b, nil
}

// Read returns the schema and the file's values (none while the file is missing).
func (f *File) Read() (client.PluginSettings, error) {
	out := client.PluginSettings{Plugin: f.plugin, Path: f.path, Schema: f.raw, Values: map[string]any{}}
	raw, err := readBounded(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return out, nil
	case err != nil:
		return client.PluginSettings{}, fmt.Errorf("plugin %s: %w", f.plugin, err)
	}
	out.Exists = true
	var v map[string]any
	if err := toml.Unmarshal(raw, &v); err != nil {
		return client.PluginSettings{}, fmt.Errorf("%w: plugin %s: %s is not valid TOML (fix or delete it): %v", client.ErrInvalid, f.plugin, f.path, err)
	}
	if out.Values, err = jsonValues(v); err != nil {
		return client.PluginSettings{}, fmt.Errorf("plugin %s: %s: %w", f.plugin, f.path, err)
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

// Write checks values against the schema (client.ErrInvalid, naming the key), writes the file
// atomically (0600, its directory 0700) and calls restart (nil: the plugin is not running). If
// restart fails, the previous file is put back, restart called again, and the error says why
// the plugin refused.
func (f *File) Write(ctx context.Context, values map[string]any, restart func(context.Context) error) (client.PluginSettings, error) {
	values, err := jsonValues(values)
	if err != nil {
		return client.PluginSettings{}, fmt.Errorf("%w: plugin %s: settings: %v", client.ErrInvalid, f.plugin, err)
	}
	if err := f.schema.Validate(values); err != nil {
		return client.PluginSettings{}, fmt.Errorf("%w: plugin %s: %v", client.ErrInvalid, f.plugin, err)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Settings of the %s plugin, written by HologramAgent (Settings, or waiter plugin config %s).\n", f.plugin, f.plugin)
	if err := toml.NewEncoder(&buf).Encode(tomlValues(values)); err != nil {
		return client.PluginSettings{}, fmt.Errorf("%w: plugin %s: settings: %v", client.ErrInvalid, f.plugin, err)
	}
	if buf.Len() > maxBytes {
		return client.PluginSettings{}, fmt.Errorf("%w: plugin %s: the settings take %d bytes, more than %d", client.ErrInvalid, f.plugin, buf.Len(), maxBytes)
	}
	old, oldErr := readBounded(f.path)
	if oldErr != nil && !errors.Is(oldErr, fs.ErrNotExist) {
		return client.PluginSettings{}, fmt.Errorf("plugin %s: %w", f.plugin, oldErr)
	}
	if err := writeAtomic(f.path, buf.Bytes()); err != nil {
		return client.PluginSettings{}, fmt.Errorf("plugin %s: %w", f.plugin, err)
	}
	if restart != nil {
		if rerr := restart(ctx); rerr != nil {
			// Give the plugin its previous settings back, so it works as before.
			if errors.Is(oldErr, fs.ErrNotExist) {
				err = os.Remove(f.path)
			} else {
				err = writeAtomic(f.path, old)
			}
			if err == nil {
				err = restart(context.WithoutCancel(ctx))
			}
			if err != nil {
				return client.PluginSettings{}, fmt.Errorf("plugin %s did not start with these settings (%v), nor with the previous ones: %w", f.plugin, rerr, err)
			}
			return client.PluginSettings{}, fmt.Errorf("%w: plugin %s did not start with these settings (the previous ones are back): %v", client.ErrInvalid, f.plugin, rerr)
		}
	}
	return f.Read()
}

// Host is what Restart needs of the plugin host.
type Host interface {
	Restart(ctx context.Context, name string) (host.Status, error)
	Logs(name string, n int) ([]host.LogLine, error)
}

// Restart is the restart Write calls for the plugin name of h, now in state: nil when it is
// disabled (it reads the file when enabled); else it fails unless the plugin then runs, with
// its last error and log line.
func Restart(h Host, name, state string) func(context.Context) error {
	if state == host.StateDisabled {
		return nil
	}
	return func(ctx context.Context) error {
		st, err := h.Restart(ctx, name)
		if err == nil && st.State != host.StateRunning {
			err = fmt.Errorf("it is %s: %s", st.State, st.LastError)
			if lines, lerr := h.Logs(name, 1); lerr == nil && len(lines) == 1 {
				err = fmt.Errorf("%w; its log: %s", err, lines[0].Line)
			}
		}
		return err
	}
}

// writeAtomic replaces path with data (0600, its directory 0700).
func writeAtomic(path string, data []byte) error {
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
