package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Plugins lists the plugins (GET /api/v1/plugins).
func (c *HTTP) Plugins(ctx context.Context) ([]Plugin, error) {
	var out struct {
		Plugins []Plugin `json:"plugins"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/plugins", nil, &out)
	return out.Plugins, err
}

// AddPlugin adds a plugin (POST /api/v1/plugins).
func (c *HTTP) AddPlugin(ctx context.Context, p PluginConfig) (Plugin, error) {
	if p.Name == "" {
		return Plugin{}, fmt.Errorf("add plugin: empty name: %w", ErrInvalid)
	}
	var out Plugin
	err := c.do(ctx, http.MethodPost, "/api/v1/plugins", p, &out)
	return out, err
}

// PluginAction runs restart, enable, disable or remove on a plugin
// (POST /api/v1/plugins/{name}/{action}).
func (c *HTTP) PluginAction(ctx context.Context, name, action string) (Plugin, error) {
	if name == "" {
		return Plugin{}, fmt.Errorf("plugin %s: empty name: %w", action, ErrInvalid)
	}
	switch action {
	case PluginRestart, PluginEnable, PluginDisable, PluginRemove:
	default:
		return Plugin{}, fmt.Errorf("unknown plugin action %q (restart, enable, disable, remove): %w", action, ErrInvalid)
	}
	var out Plugin
	err := c.do(ctx, http.MethodPost, "/api/v1/plugins/"+url.PathEscape(name)+"/"+action, nil, &out)
	return out, err
}

// PluginLogs returns the last n stderr lines of a plugin (GET /api/v1/plugins/{name}/logs?n=N;
// n <= 0: all kept).
func (c *HTTP) PluginLogs(ctx context.Context, name string, n int) ([]LogLine, error) {
	if name == "" {
		return nil, fmt.Errorf("plugin logs: empty name: %w", ErrInvalid)
	}
	path := "/api/v1/plugins/" + url.PathEscape(name) + "/logs"
	if n > 0 {
		path += "?n=" + strconv.Itoa(n)
	}
	var out struct {
		Lines []LogLine `json:"lines"`
	}
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out.Lines, err
}
