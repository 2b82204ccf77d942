package protocol

import (
	"encoding/json"
	"slices"
)

// LatestVersion is the MCP protocol version HologramAgent speaks and offers. A server that speaks
// an older one answers initialize with it, and the host goes on in that version if it is one of
// [SupportedVersions] (negotiating down to 2024-11-05). What 2025-11-25 adds that the host reads
// (structured output, resource links, _meta) is optional in the protocol; tool results keep
// their text content for older servers.
const LatestVersion = "2025-11-25"

// SupportedVersions lists the MCP protocol versions accepted in
// initialize, newest first. Callers must not modify it.
var SupportedVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// NegotiateVersion returns the version a server answers to an initialize
// request asking for requested: requested itself when supported, otherwise
// [LatestVersion] (the client then decides whether it can continue).
func NegotiateVersion(requested string) string {
	if slices.Contains(SupportedVersions, requested) {
		return requested
	}
	return LatestVersion
}

// MCP method and notification names. MethodShutdown is a native-plugin
// extension; MCP servers are stopped by closing their stdin.
const (
	MethodInitialize      = "initialize"
	NotifInitialized      = "notifications/initialized"
	MethodPing            = "ping"
	MethodToolsList       = "tools/list"
	MethodToolsCall       = "tools/call"
	NotifToolsListChanged = "notifications/tools/list_changed"
	NotifMessage          = "notifications/message"
	NotifCancelled        = "notifications/cancelled"
	MethodShutdown        = "shutdown"
)

// Implementation names a client or server and its version.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ClientCapabilities is what a client announces in initialize.
type ClientCapabilities struct {
	Roots *struct {
		ListChanged bool `json:"listChanged,omitempty"`
	} `json:"roots,omitempty"`
	Sampling     json.RawMessage            `json:"sampling,omitempty"`
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
}

// ServerCapabilities is what a server announces in its initialize result.
// Native plugins announce their extensions under Experimental.
type ServerCapabilities struct {
	Tools        *ToolsCapability           `json:"tools,omitempty"`
	Logging      json.RawMessage            `json:"logging,omitempty"`
	Prompts      json.RawMessage            `json:"prompts,omitempty"`
	Resources    json.RawMessage            `json:"resources,omitempty"`
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
}

// ToolsCapability says that a server offers tools and whether it sends
// notifications/tools/list_changed.
type ToolsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// InitializeParams are the params of initialize.
type InitializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
}

// Tool describes one tool offered by a server.
type Tool struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	InputSchema json.RawMessage  `json:"inputSchema"`
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
	// Visibility is a native plugin's declaration of who may call the tool: "owner" (also
	// when empty) or "any" (ARCHITECTURE.md §5). The kernel ignores it from MCP servers: the
	// owner sets theirs when adding them.
	Visibility string `json:"visibility,omitempty"`
}

// Tool visibilities ([Tool.Visibility]).
const (
	VisibilityOwner = "owner"
	VisibilityAny   = "any"
)

// ToolAnnotations are the behaviour hints of a tool; nil means unspecified.
type ToolAnnotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// ListToolsParams are the params of tools/list.
type ListToolsParams struct {
	Cursor string `json:"cursor,omitempty"`
}

// ListToolsResult is the result of tools/list; a non-empty NextCursor asks
// for another page.
type ListToolsResult struct {
	Tools      []Tool `json:"tools"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// CallToolParams are the params of tools/call.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Meta carries the native extensions' request metadata (the turn); only native plugins
	// receive it.
	Meta *RequestMeta `json:"_meta,omitempty"`
}

// CallToolResult is the result of tools/call. A tool failure is a result with
// IsError set (shown to the model), not a JSON-RPC error.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// Content is one content block: "text" (Text), "image" or "audio" (Data in
// base64, MimeType), "resource_link" (URI, Name, MimeType) or "resource"
// (Resource). Between the kernel and a native plugin with a shared-memory
// region, a text or a media item over [InlineMax] bytes carries Ref instead
// of Text or Data: the text's UTF-8 bytes, or the media's raw (not base64)
// bytes, in the sender's arena.
type Content struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	Data     string          `json:"data,omitempty"`
	MimeType string          `json:"mimeType,omitempty"`
	URI      string          `json:"uri,omitempty"`
	Name     string          `json:"name,omitempty"`
	Resource json.RawMessage `json:"resource,omitempty"`
	Ref      *Ref            `json:"ref,omitempty"`
}

// LoggingMessageParams are the params of notifications/message.
type LoggingMessageParams struct {
	Level  string          `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// CancelledParams are the params of notifications/cancelled.
type CancelledParams struct {
	RequestID ID     `json:"requestId"`
	Reason    string `json:"reason,omitempty"`
}
