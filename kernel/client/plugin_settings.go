package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// PluginSettings is a built-in plugin's options: the JSON Schema its plugin.json declares
// (config_schema), the values of its configuration file and where that file is on the
// kernel's machine.
type PluginSettings struct {
	Plugin string `json:"plugin"`
	// Path is <config dir>/plugins/<name>.toml; Exists is false while it is missing (the
	// plugin's defaults apply).
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	// Schema is a JSON Schema (draft 2020-12) of an object: one property per key of the file.
	// A string array whose items have "format": "directory" holds folders.
	Schema json.RawMessage `json:"schema"`
	// Values are the file's keys (only those set; the schema's defaults are the plugin's).
	Values map[string]any `json:"values"`
}

// SetPluginSettingsRequest is the body of PUT /api/v1/plugins/{name}/settings.
type SetPluginSettingsRequest struct {
	Values map[string]any `json:"values"`
}

// PluginSettingsService reads and writes built-in plugins' settings (kernel/api serves it at
// /api/v1/plugins/{name}/settings; the GUI's Plugins view and `waiter plugin config` use it).
type PluginSettingsService interface {
	// PluginSettings returns the plugin's schema and current values (ErrNotFound for an
	// unknown plugin, ErrInvalid for one that declares no settings).
	PluginSettings(ctx context.Context, name string) (PluginSettings, error)
	// SetPluginSettings validates values against the schema (ErrInvalid, naming the key),
	// writes the file and restarts the plugin if it is enabled; a plugin that then does not
	// start gets its previous file back, and the error says why it refused.
	SetPluginSettings(ctx context.Context, name string, values map[string]any) (PluginSettings, error)
}

var _ PluginSettingsService = (*HTTP)(nil)

// PluginSettings implements PluginSettingsService (GET /api/v1/plugins/{name}/settings).
func (c *HTTP) PluginSettings(ctx context.Context, name string) (PluginSettings, error) {
	var out PluginSettings
	err := c.do(ctx, http.MethodGet, "/api/v1/plugins/"+url.PathEscape(name)+"/settings", nil, &out)
	return out, err
}

// SetPluginSettings implements PluginSettingsService (PUT /api/v1/plugins/{name}/settings).
func (c *HTTP) SetPluginSettings(ctx context.Context, name string, values map[string]any) (PluginSettings, error) {
	var out PluginSettings
	err := c.do(ctx, http.MethodPut, "/api/v1/plugins/"+url.PathEscape(name)+"/settings", SetPluginSettingsRequest{Values: values}, &out)
	return out, err
}
