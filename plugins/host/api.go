// Package host supervises plugins (ARCHITECTURE.md §5): separate processes that speak JSON-RPC
// 2.0 over stdin/stdout (MCP-compatible), started, watched, restarted and stopped by the kernel.
//
// The kernel wires the host through the small interfaces declared here (Registry, Publisher);
// this package never imports kernel/*.
package host

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// Kind is the kind of a plugin.
type Kind string

// Kinds.
const (
	KindMCP    Kind = "mcp"    // any stdio MCP server, started from a command line
	KindNative Kind = "native" // a directory with plugin.json and a binary built on plugins/sdk
)

// Plugin states.
const (
	StateStarting = "starting"
	StateRunning  = "running"
	StateBackoff  = "backoff"  // crashed; restarting after a delay
	StateTripped  = "tripped"  // the breaker holds: too many crashes, restarts stopped until re-enabled
	StateFailed   = "failed"   // never answered its handshake: not restarted until restarted or re-enabled
	StateStopped  = "stopped"  // stopped by the owner or at shutdown
	StateDisabled = "disabled" // configured but not to run
)

// Errors callers test with errors.Is.
var (
	ErrNotFound = errors.New("no such plugin")
	ErrExists   = errors.New("plugin already exists")
)

// Permissions are what a native plugin says it needs (its manifest's "permissions"), checked
// when the plugin is added; a Status shows them with the paths expanded.
type Permissions = protocol.Permissions

// PathPermission is one path of [Permissions].
type PathPermission = protocol.PathPermission

// Manifest is a native plugin's plugin.json.
type Manifest struct {
	Name         string      `json:"name"`
	Version      string      `json:"version"`
	Entry        string      `json:"entry"` // the binary, relative to the plugin directory
	Capabilities []string    `json:"capabilities,omitempty"`
	Permissions  Permissions `json:"permissions,omitempty"`
	// Tools declares, by the plugin's own tool name, who may call each tool; a tool it does
	// not list keeps what the plugin declares over the protocol, and a tool nobody declares
	// is owner-only.
	Tools map[string]ToolDecl `json:"tools,omitempty"`
	// ConfigSchema is the JSON Schema of a built-in plugin's settings file (an object, one
	// property per key); the kernel shows, checks and writes the file with it.
	ConfigSchema json.RawMessage `json:"config_schema,omitempty"`
}

// ToolDecl is what a manifest declares of one tool.
type ToolDecl struct {
	// Visibility is VisibilityOwner or VisibilityAny.
	Visibility string `json:"visibility"`
}

// Tool visibilities (who may call a tool; ARCHITECTURE.md §5).
const (
	VisibilityOwner = "owner" // the owner's sessions only (the default)
	VisibilityAny   = "any"   // any session: a group's, an end user's, a public one
)

// validVisibility reports whether v is a visibility a manifest or a spec may declare.
func validVisibility(v string) bool { return v == VisibilityOwner || v == VisibilityAny }

// Spec configures one plugin.
type Spec struct {
	Name     string   `json:"name"`
	Kind     Kind     `json:"kind"`
	Command  []string `json:"command,omitempty"` // MCP: the server's argv
	Dir      string   `json:"dir,omitempty"`     // native: the plugin directory (plugin.json)
	Env      []string `json:"env,omitempty"`     // extra environment, KEY=VALUE
	Disabled bool     `json:"disabled,omitempty"`
	MaxFrame int      `json:"max_frame,omitempty"` // bytes per message; 0: 1 MiB native, 64 MiB MCP
	// Visibility is who may call an MCP server's tools: VisibilityOwner (also when empty) or
	// VisibilityAny, the owner's choice when adding it. Native plugins declare theirs per tool.
	Visibility string `json:"visibility,omitempty"`
}

// ToolInfo is a tool a plugin offers.
type ToolInfo struct {
	Name        string          // the plugin's own name for it
	Description string          //
	InputSchema json.RawMessage // JSON Schema of the arguments
	ReadOnly    bool            // the plugin says the tool does not modify anything (MCP readOnlyHint)
	Visibility  string          // VisibilityOwner or VisibilityAny (never empty)
}

// CallFunc calls a plugin's tool. The result is the tool's text (images and other content
// summarised); a tool-reported error (MCP isError) or a dead plugin is an error.
type CallFunc func(ctx context.Context, args json.RawMessage) (string, error)

// Registry is where the host attaches plugin tools (the kernel implements it with the agent's
// tool set). AddTool returns the name the model sees (namespaced when two plugins collide).
type Registry interface {
	AddTool(plugin string, t ToolInfo, call CallFunc) (string, error)
	RemoveTools(plugin string) int
}

// ToolSetter is implemented by registries that can swap a plugin's whole tool set at once, so
// that a turn never sees it half re-listed; the host uses it when the Registry has it. It returns
// the names the model sees, in the order of tools.
type ToolSetter interface {
	SetTools(plugin string, tools []ToolInfo, calls []CallFunc) ([]string, error)
}

// Publisher receives plugin lifecycle events (plugin_started, plugin_crashed, plugin_tripped,
// plugin_stopped) for the kernel's event bus.
type Publisher interface {
	Publish(event string, payload map[string]any)
}

// Status is a plugin's state as listed.
type Status struct {
	Name        string      `json:"name"`
	Kind        Kind        `json:"kind"`
	State       string      `json:"state"`
	PID         int         `json:"pid,omitempty"`
	Restarts    int         `json:"restarts"`
	LastError   string      `json:"last_error,omitempty"`
	Tools       []string    `json:"tools"` // names as the model sees them
	Permissions Permissions `json:"permissions"`
	Started     time.Time   `json:"started,omitempty"`
	Command     []string    `json:"command,omitempty"`
	Dir         string      `json:"dir,omitempty"`
}

// LogLine is one line a plugin wrote to stderr.
type LogLine struct {
	Time time.Time `json:"time"`
	Line string    `json:"line"`
}
