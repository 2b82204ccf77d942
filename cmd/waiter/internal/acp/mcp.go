package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/hologramagent/hologram/kernel/client"
)

// The editor's MCP servers (session/new and session/load's mcpServers): each stdio server is
// added to the kernel as a plugin scoped to the session (client.PluginConfig.Session): its tools
// are offered in that session only, it is not remembered, and the bridge removes it when the
// editor disconnects. Over --remote they are refused: the command would run on the kernel's
// machine, not the editor's.

// maxMCPServers bounds the servers one session may bring.
const maxMCPServers = 16

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// pluginName is the kernel plugin name of an editor's server: acp-<connection>-<name>.
func (a *Agent) pluginName(name string) string {
	n := strings.Trim(unsafeName.ReplaceAllString(name, "-"), "-.")
	if n == "" {
		n = "mcp"
	}
	n = "acp-" + a.connID + "-" + n
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// checkMCP refuses servers the bridge cannot start, before any session is made.
func (a *Agent) checkMCP(servers []sdk.McpServer) error {
	if len(servers) == 0 {
		return nil
	}
	if a.opts.Remote {
		return sdk.NewInvalidParams(map[string]any{"error": "the editor's MCP servers cannot run on a remote kernel (waiter acp --remote): " +
			"add them on the kernel's machine with `waiter plugin add`, or connect over the local socket"})
	}
	if len(servers) > maxMCPServers {
		return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%d MCP servers, at most %d per session", len(servers), maxMCPServers)})
	}
	for i, s := range servers {
		if s.Stdio == nil {
			return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("mcpServers[%d]: only stdio servers are supported (the agent does not advertise http or sse)", i)})
		}
		if strings.TrimSpace(s.Stdio.Command) == "" {
			return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("mcpServers[%d] (%s): the command is empty", i, s.Stdio.Name)})
		}
	}
	return nil
}

// startMCP adds the session's servers (checked by checkMCP) as session-scoped plugins; on an
// error the ones added are removed again.
func (a *Agent) startMCP(ctx context.Context, session string, servers []sdk.McpServer) error {
	var added []string
	for _, s := range servers {
		cfg := client.PluginConfig{Name: a.pluginName(s.Stdio.Name), Command: append([]string{s.Stdio.Command}, s.Stdio.Args...), Session: session}
		for _, e := range s.Stdio.Env {
			cfg.Env = append(cfg.Env, e.Name+"="+e.Value)
		}
		if _, err := a.k.AddPlugin(ctx, cfg); err != nil {
			a.removePlugins(added)
			return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("MCP server %q: %v", s.Stdio.Name, err)})
		}
		added = append(added, cfg.Name)
	}
	a.mu.Lock()
	a.plugins = append(a.plugins, added...)
	a.mu.Unlock()
	return nil
}

// removePlugins removes the named session plugins (the connection ended, or a start failed).
func (a *Agent) removePlugins(names []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range names {
		if _, err := a.k.PluginAction(ctx, n, client.PluginRemove); err != nil && !errors.Is(err, client.ErrNotFound) {
			a.opts.Log.Warn("acp: remove the session's MCP server", "plugin", n, "err", err)
		}
	}
}

// newConnID is a short random id that keeps two editors' plugin names apart.
func newConnID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
