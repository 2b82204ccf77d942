// Package client is the kernel's API as a Go interface ([Service]), its wire types, and an HTTP
// implementation that talks to a kernel over its unix socket or over TCP with a token and TLS.
//
// The package imports nothing from kernel/* or memory/*: the GUI, waiter and remote clients link
// only this. The kernel itself implements Service in-process; kernel/kerneltest checks that both
// implementations behave the same.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Service is what a user interface can ask of a kernel: every role below. Implementations are
// safe for concurrent use. The kernel hands out each role on its own (kernel.Kernel.Chat(), …)
// and all of them as one Service; [HTTP] implements every role over the API.
type Service interface {
	SystemService
	ChatService
	SessionService
	ProviderService
	PluginService
	MemoryService
	ModelService
	ApprovalService
	PromptService
	ClientToolService
}

// SystemService is the kernel's liveness, state and pause switch.
type SystemService interface {
	// Health reports liveness and readiness; it needs no authentication over HTTP.
	Health(ctx context.Context) (Health, error)
	// Status reports the kernel's version, data dir, providers, sessions and facilities.
	Status(ctx context.Context) (Status, error)

	// SetPaused pauses or resumes the kernel (Status.Paused): while paused, channel input and
	// scheduled jobs stop and plugins get kernel/paused; the owner's chat works.
	SetPaused(ctx context.Context, paused bool) error
}

// ChatService runs and cancels agent turns.
type ChatService interface {
	// Chat runs one agent turn and calls emit (from one goroutine, in order) for each event of
	// the turn: "turn" first, then deltas, tool calls and results, and "final" or "error" last.
	// Cancelling ctx cancels the turn. The returned Result is the final event's content.
	Chat(ctx context.Context, req ChatRequest, emit func(ChatEvent)) (ChatResult, error)
	// Cancel cancels a running turn by id; ErrNotFound when no such turn runs.
	Cancel(ctx context.Context, turnID string) error
	// UploadService streams large attachments ahead of their message (uploads.go).
	UploadService
}

// SessionService lists, creates and configures sessions and reads their history.
type SessionService interface {
	// Sessions lists sessions, most recently updated first.
	Sessions(ctx context.Context) ([]Session, error)
	// CreateSession creates a session (an empty ID picks a new one).
	CreateSession(ctx context.Context, s Session) (Session, error)
	// SetInstructions replaces a session's system prompt and model.
	SetInstructions(ctx context.Context, sessionID string, in Instructions) (Session, error)
	// History returns the last limit messages of a session (limit <= 0: all).
	History(ctx context.Context, sessionID string, limit int) ([]Message, error)
	// SessionAdmin renames and deletes sessions (session.go).
	SessionAdmin
}

// ProviderService configures, tests and finds LLM providers.
type ProviderService interface {
	// Providers lists the configured LLM providers in fallback order (keys are never returned).
	Providers(ctx context.Context) ([]Provider, error)
	// AddProvider adds or replaces a provider; its key is sealed at rest.
	AddProvider(ctx context.Context, p ProviderConfig) (Provider, error)
	// RemoveProvider deletes a provider; ErrNotFound when unknown.
	RemoveProvider(ctx context.Context, name string) error

	// TestProvider makes one real, minimal request to a provider that is not saved (the key
	// comes with it) and says whether it answers, how fast, and with which model.
	TestProvider(ctx context.Context, p ProviderConfig) (ProviderCheck, error)
	// DetectProviders looks for local OpenAI-compatible servers the kernel can reach (Ollama on
	// 127.0.0.1:11434, llama.cpp's server on 127.0.0.1:8080) and offers each with a model it serves.
	DetectProviders(ctx context.Context) ([]ProviderConfig, error)
}

// PluginService lists and manages plugins and the tools the agent can call.
type PluginService interface {
	// Tools lists the tools the agent can call.
	Tools(ctx context.Context) ([]Tool, error)

	// Plugins lists the plugins and their state.
	Plugins(ctx context.Context) ([]Plugin, error)
	// AddPlugin adds a plugin (an MCP server's command line, or a native plugin's directory),
	// remembers it, and starts it unless disabled.
	AddPlugin(ctx context.Context, p PluginConfig) (Plugin, error)
	// PluginAction runs "restart", "enable", "disable" or "remove" on a plugin (ErrNotFound for
	// an unknown one); remove returns the plugin as it was.
	PluginAction(ctx context.Context, name, action string) (Plugin, error)
	// PluginLogs returns the last n lines (n <= 0: all kept) the plugin wrote to stderr.
	PluginLogs(ctx context.Context, name string, n int) ([]LogLine, error)
}

// MemoryService explains and searches the memory, and is the owner's side of it.
type MemoryService interface {
	// Window explains a session's L1 context window: what the next turn's prompt holds and
	// why (each item's score, reason and source).
	Window(ctx context.Context, sessionID string) (Window, error)
	// SearchMemory recalls events (L1 and L2) the way the agent does, seen from a session's
	// scope (empty session: the owner, who sees every scope).
	SearchMemory(ctx context.Context, q MemoryQuery) ([]MemoryHit, error)
	// MemoryAdmin is the owner's side of memory (graph, forget, pins, scenes, GC, export).
	MemoryAdmin
	// BranchService pages a session's history and switches its branches (branches.go).
	BranchService
}

// ModelService is the dense-embedding side: status and the model catalogue.
type ModelService interface {
	// Embedding reports how the memory embeds text (models.go): sparse or dense, the model,
	// its vector space, why it is sparse, and the background re-embedding's progress.
	Embedding(ctx context.Context) (EmbeddingStatus, error)
	// EmbeddingModels lists the dense models of the kernel's catalogue with their state
	// (installed, active, files with sizes and SHA-256s, interrupted downloads).
	EmbeddingModels(ctx context.Context) ([]EmbeddingModel, error)
	// InstallModel downloads a catalogue model from the configured hubs (resuming an
	// interrupted download, verifying every file) and calls progress (from one goroutine, in
	// order; it may be nil) as it goes. Cancelling ctx stops the download and keeps the part.
	InstallModel(ctx context.Context, id string, progress func(ModelProgress)) (EmbeddingModel, error)
	// ImportModel installs a catalogue model from a directory on the kernel's machine.
	ImportModel(ctx context.Context, id, dir string) (EmbeddingModel, error)
	// UseModel makes an installed model the active one ("" returns to sparse mode): the model
	// is opened at once (a model that does not open leaves the mode as it was), and the events
	// are re-embedded into its space in the background.
	UseModel(ctx context.Context, id string) (EmbeddingStatus, error)
	// RemoveModel deletes an installed model; the active one cannot be removed.
	RemoveModel(ctx context.Context, id string) error
}

// Plugin actions.
const (
	PluginRestart = "restart"
	PluginEnable  = "enable"
	PluginDisable = "disable"
	PluginRemove  = "remove"
)

// PluginConfig adds a plugin: exactly one of Command (an MCP stdio server) and Dir (a native
// plugin directory with plugin.json).
type PluginConfig struct {
	Name     string   `json:"name"`
	Command  []string `json:"command,omitempty"`
	Dir      string   `json:"dir,omitempty"`
	Env      []string `json:"env,omitempty"`
	Disabled bool     `json:"disabled,omitempty"`
	// Visibility is who may call an MCP server's tools: "owner" (the default: the owner's own
	// sessions only) or "any" (groups', end users' and public sessions too). Native plugins
	// declare theirs per tool in plugin.json.
	Visibility string `json:"visibility,omitempty"`
	// Session, when set, scopes the plugin to one of the owner's sessions (an editor's MCP
	// server, added by waiter acp): it is not remembered, its tools are offered in that session
	// only, and its client removes it when the session ends.
	Session string `json:"session,omitempty"`
}

// Plugin is a plugin as listed.
type Plugin struct {
	Name        string            `json:"name"`
	Kind        string            `json:"kind"`  // "mcp" or "native"
	State       string            `json:"state"` // starting, running, backoff, tripped, stopped, disabled
	PID         int               `json:"pid,omitempty"`
	Restarts    int               `json:"restarts"`
	LastError   string            `json:"last_error,omitempty"`
	Tools       []string          `json:"tools"`
	Permissions PluginPermissions `json:"permissions"`
	Command     []string          `json:"command,omitempty"`
	Dir         string            `json:"dir,omitempty"`
	// Builtin marks a plugin that ships with HologramAgent (files, notes, shell, …): it is
	// enabled or disabled, never removed.
	Builtin bool `json:"builtin,omitempty"`
}

// PluginPermissions are what a native plugin says it needs (its plugin.json's permissions),
// with the paths expanded: the files it reads, writes or runs programs from, the environment
// variables it reads, whether it uses the network or runs programs, and notes in words for
// what its manifest cannot say statically. Built-in plugins confine themselves to them.
type PluginPermissions struct {
	Paths   []PluginPath `json:"paths,omitempty"`
	Env     []string     `json:"env,omitempty"`
	EnvOnly bool         `json:"env_only,omitempty"` // only Env is passed of the kernel's environment
	Network bool         `json:"network,omitempty"`
	Exec    bool         `json:"exec,omitempty"`
	Notes   []string     `json:"notes,omitempty"`
}

// PluginPath is one path of [PluginPermissions]; Access is "read", "write" or "exec".
type PluginPath struct {
	Path   string `json:"path"`
	Access string `json:"access"`
}

// PluginPermissionsOf builds PluginPermissions from the host's (whose path type has the same
// fields).
func PluginPermissionsOf[P ~struct {
	Path   string `json:"path"`
	Access string `json:"access"`
}](paths []P, env []string, envOnly, network, exec bool, notes []string) PluginPermissions {
	out := PluginPermissions{Env: env, EnvOnly: envOnly, Network: network, Exec: exec, Notes: notes}
	for _, p := range paths {
		out.Paths = append(out.Paths, PluginPath(p))
	}
	return out
}

// LogLine is one line of a plugin's stderr.
type LogLine struct {
	Time time.Time `json:"time"`
	Line string    `json:"line"`
}

// Errors callers test with errors.Is. Both implementations map their failures onto them.
var (
	ErrNotFound     = errors.New("not found")
	ErrInvalid      = errors.New("invalid request")
	ErrUnauthorized = errors.New("unauthorized")
	ErrUnavailable  = errors.New("unavailable")
)

// Error is an API error with the HTTP status and the kernel's message. Unwrap gives the matching
// sentinel (ErrNotFound for 404, ErrInvalid for 400, ErrTooLarge for 413, ErrUnauthorized for 401/403,
// ErrUnavailable for 503).
type Error struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
	// RetryAfter, in seconds, is when an upstream failure (502, 503, 504) may be retried; the
	// HTTP API sends it as the Retry-After header.
	RetryAfter int `json:"retry_after,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Status) }

// Unwrap maps the status onto a sentinel.
func (e *Error) Unwrap() error {
	switch e.Status {
	case 413:
		return ErrTooLarge
	case 400, 409, 422:
		return ErrInvalid
	case 401, 403:
		return ErrUnauthorized
	case 404:
		return ErrNotFound
	case 503:
		return ErrUnavailable
	}
	return nil
}

// Health is the /api/v1/health answer.
type Health struct {
	OK      bool   `json:"ok"`
	Version string `json:"version"`
	// Ready is true once the kernel has marked itself complete.
	Ready bool `json:"ready"`
}

// Status is the /api/v1/status answer.
type Status struct {
	Version     string    `json:"version"`
	PID         int       `json:"pid"`
	DataDir     string    `json:"data_dir"`
	Socket      string    `json:"socket"`
	Started     time.Time `json:"started"`
	Providers   int       `json:"providers"`
	Sessions    int       `json:"sessions"`
	Tools       int       `json:"tools"`
	Ready       []string  `json:"ready"`   // facilities in readiness order
	Pending     []string  `json:"pending"` // declared, not ready yet
	ActiveTurns int       `json:"active_turns"`
	// Paused: channel input and scheduled jobs (memory GC, plugins' schedules) are stopped;
	// chat from the owner's clients works.
	Paused bool `json:"paused"`
	// Embedding is the memory's embedding mode (nil from a kernel that does not report it).
	Embedding *EmbeddingStatus `json:"embedding,omitempty"`
	// MaxUploadBytes is the largest file [UploadService.Upload] takes (0 from a kernel that
	// takes no uploads): clients refuse a larger video before sending a byte.
	MaxUploadBytes int64 `json:"max_upload_bytes,omitempty"`
}

// ChatRequest asks for one agent turn. Session empty: the default session ("main").
type ChatRequest struct {
	Session string `json:"session,omitempty"`
	Input   string `json:"input"`
	Channel string `json:"channel,omitempty"` // e.g. "waiter", "gui"; default "api"
	// Attachments become blocks held by the turn's user event (see memory.Block); text ones are
	// shown to the model with the input, media ones by name (and their text, e.g. OCR).
	Attachments []Attachment `json:"attachments,omitempty"`
	// Regenerate, with an empty Input, answers again the turn of this message of the current
	// branch (the user message, or any message of its reply): the new reply is a sibling
	// branch of the old one, which is kept ([BranchService]).
	Regenerate int64 `json:"regenerate,omitempty"`
	// Edit replaces this user message of the current branch with Input: the edited message
	// and its reply start a sibling branch; the old ones are kept.
	Edit int64 `json:"edit,omitempty"`
	// ClientTools are tools the client runs itself (clienttools.go); HideTools names the
	// kernel's tools this turn does not offer (those the client's tools stand in for).
	ClientTools []ClientTool `json:"client_tools,omitempty"`
	HideTools   []string     `json:"hide_tools,omitempty"`
}

// Attachment is a file sent with a chat message. Kind is "text" (Text holds it), "image" or
// "audio" (Data holds the bytes, base64 in JSON).
type Attachment struct {
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
	MIME string `json:"mime,omitempty"`
	Text string `json:"text,omitempty"`
	Data []byte `json:"data,omitempty"`
	// Upload names a file streamed ahead with [UploadService.Upload] (a video up to
	// [Status.MaxUploadBytes]) in place of Data; a chat message takes it once.
	Upload string `json:"upload,omitempty"`
}

// Bounds of attachments (the HTTP API's body limit applies too).
const (
	MaxAttachments     = 16
	MaxAttachmentBytes = 32 << 20
)

// ChatEvent types.
const (
	EventTurn       = "turn"        // TurnID and Session are set
	EventDelta      = "delta"       // Text is a piece of the reply
	EventReasoning  = "reasoning"   // Text is a piece of reasoning
	EventToolCall   = "tool_call"   // Tool is set (status "running")
	EventToolResult = "tool_result" // Tool is set with Result and Status
	EventFinal      = "final"       // Text is the whole reply
	EventError      = "error"       // Text is the error message
	// EventApproval: a plugin serving this turn asks the owner's approval (Approval is set);
	// answer it with [Approver.AnswerApproval]. Sent only in the owner's own turns.
	EventApproval = "approval"
	// EventNotice: Text is a note for the owner about the message, e.g. a voice message left
	// untranscribed and how to get a speech model. Sent after "turn".
	EventNotice = "notice"
	// EventTranscript: Text is what a voice message sent without text said (its transcript,
	// which became the turn's input): clients show it in place of the attachment's name. Sent
	// after "turn".
	EventTranscript = "transcript"
)

// ChatEvent is one streamed event of a turn.
type ChatEvent struct {
	Type    string     `json:"type"`
	TurnID  string     `json:"turn_id,omitempty"`
	Session string     `json:"session,omitempty"`
	Text    string     `json:"text,omitempty"`
	Tool    *ToolEvent `json:"tool,omitempty"`
	// Approval is set on "approval" events.
	Approval *Approval `json:"approval,omitempty"`
	// Usage is set on "final" events: the turn's token counts and time.
	Usage *Usage `json:"usage,omitempty"`
	// Stop is set on "final" events: why the turn ended ("done", "short_circuit", "all_denied",
	// "cancelled", "max_rounds", "max_wall" or "token_budget").
	Stop string `json:"stop,omitempty"`
}

// ToolEvent describes a tool call and, once done, its result.
type ToolEvent struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Result    string `json:"result,omitempty"`
	// Status is "running", "ok", "error", "denied", "cancelled", "timeout" or "skipped".
	Status string `json:"status"`
}

// ChatResult is the outcome of a turn.
type ChatResult struct {
	TurnID  string `json:"turn_id"`
	Session string `json:"session"`
	Text    string `json:"text"`
	// Stop is why the turn ended: "done", "length" (the provider's token limit cut the
	// answer), "refusal", "cancelled", "max_rounds", "token_budget"…
	Stop string `json:"stop,omitempty"`
	// Usage is the turn's token counts (summed over its LLM calls) and its time.
	Usage *Usage `json:"usage,omitempty"`
}

// Session is a conversation with its instructions. Channel, Partner and Scope say where it
// happens and what it may see: the owner's sessions are "private" (the default) and see every
// scope; a "group:<id>" session sees public things and its group's; a "public" one public things.
type Session struct {
	ID           string    `json:"id"`
	Title        string    `json:"title"`
	SystemPrompt string    `json:"system_prompt"`
	Model        string    `json:"model"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
	Channel      string    `json:"channel,omitempty"`
	Partner      string    `json:"partner,omitempty"`
	Scope        string    `json:"scope,omitempty"`
}

// Window is a session's L1 context window as the next turn will see it.
type Window struct {
	Session string       `json:"session"`
	Input   string       `json:"input"`  // the text the candidates were scored against
	Budget  int          `json:"budget"` // token budget of the window
	Used    int          `json:"used"`   // tokens the items take
	Pinned  int          `json:"pinned"` // how many recent events are pinned
	Items   []WindowItem `json:"items"`  // chronological
	Sunk    int          `json:"sunk"`   // events moved to L2 when the window was computed
	// Recall is what the session's last turn recalled into its prompt at pre_action (nil when
	// no turn ran in the session since the kernel started).
	Recall *Recall `json:"recall,omitempty"`
	// Tools is the tool window of the last LLM request of the session's last turn: every tool
	// the session could call, scored, sent or left out and why (nil when none ran since the
	// kernel started).
	Tools *ToolWindow `json:"tools,omitempty"`
}

// ToolWindow is the set of tools one LLM request offered, chosen from those the session may
// call: scored against the turn, the best sent within a count and a token budget.
type ToolWindow struct {
	TurnID string       `json:"turn_id"`
	Round  int          `json:"round"`
	Time   time.Time    `json:"time"`
	Sent   int          `json:"sent"`   // tools sent (tool_search included)
	Tokens int          `json:"tokens"` // estimated tokens of the sent tools' schemas
	Left   int          `json:"left"`   // tools left out
	Tools  []WindowTool `json:"tools"`  // sent first, best first
}

// WindowTool is one tool's place in a [ToolWindow].
type WindowTool struct {
	Name   string  `json:"name"`
	Score  float64 `json:"score"`
	Tokens int     `json:"tokens"`
	Sent   bool    `json:"sent"`
	Reason string  `json:"reason"`
}

// Recall is what memory brought into one turn's prompt besides the window: facts from the L3
// graph and events from L1/L2, each with its score.
type Recall struct {
	TurnID string         `json:"turn_id"`
	Time   time.Time      `json:"time"`
	Input  string         `json:"input"`
	Facts  []RecalledFact `json:"facts"`
	Events []MemoryHit    `json:"events"`
}

// RecalledFact is a triple recalled into a prompt, as the model read it.
type RecalledFact struct {
	Triple int64   `json:"triple"`
	Text   string  `json:"text"`
	Score  float64 `json:"score"`
}

// WindowItem is one event in the window and why it is there.
type WindowItem struct {
	ID      int64     `json:"id"`
	Time    time.Time `json:"time"`
	Role    string    `json:"role"`
	Content string    `json:"content"`
	Tokens  int       `json:"tokens"`
	Score   float64   `json:"score"`
	Reason  string    `json:"reason"`
	// Source is "pinned" (recent), "scored" (relevant to the input) or "recalled" (brought back
	// from L2 by coldcontext_query).
	Source string `json:"source"`
}

// MemoryQuery asks for recalled events.
type MemoryQuery struct {
	Text    string `json:"text"`
	Session string `json:"session,omitempty"` // whose view; empty: the owner's
	K       int    `json:"k,omitempty"`       // default 10, at most 100
	Scope   string `json:"scope,omitempty"`   // only events of this scope ("private", "group:<id>", "public")
	Layer   int    `json:"layer,omitempty"`   // 1 or 2; 0: both
}

// MemoryHit is one recalled event.
type MemoryHit struct {
	ID      int64     `json:"id"`
	Session string    `json:"session"`
	Time    time.Time `json:"time"`
	Role    string    `json:"role"`
	Channel string    `json:"channel,omitempty"`
	Partner string    `json:"partner,omitempty"`
	Scope   string    `json:"scope"`
	Layer   int       `json:"layer"`
	Content string    `json:"content"`
	Score   float64   `json:"score"`
	Reason  string    `json:"reason"`
	// Images are the event's image blocks (attachments, screenshots, keyframes, tool images):
	// first those that matched the query by their image vector (Matched; with a model that
	// embeds images, such as Chinese-CLIP), best first, then the others in the event's order.
	Images []HitImage `json:"images,omitempty"`
}

// HitImage is an image block of a [MemoryHit].
type HitImage struct {
	Block string `json:"block"`
	Name  string `json:"name,omitempty"`
	MIME  string `json:"mime,omitempty"`
	// Matched: the image itself matched the query (its vector), not only its event's words.
	Matched bool `json:"matched,omitempty"`
}

// ThumbnailPath is the API path of an image block's thumbnail (a PNG at most
// [MaxThumbnailSide] pixels on its longer side; GET, owner-only).
func ThumbnailPath(block string) string {
	return "/api/v1/memory/blocks/" + url.PathEscape(block) + "/thumbnail"
}

// MaxThumbnailSide is the longer side of a thumbnail, in pixels.
const MaxThumbnailSide = 256

// Instructions are a session's own system prompt and model (empty model: the default).
type Instructions struct {
	SystemPrompt string `json:"system_prompt"`
	Model        string `json:"model"`
}

// Message is one history item.
type Message struct {
	ID         int64      `json:"id"`
	Time       time.Time  `json:"time"`
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	ToolStatus string     `json:"tool_status,omitempty"`
	TurnID     string     `json:"turn_id,omitempty"`
	// Blocks are the message's attachments (without data), wherever each lives now.
	Blocks []Block `json:"blocks,omitempty"`
	// Parent is the message this one follows (0: the first); Branch is set where the session's
	// branches part: this message has siblings.
	Parent int64   `json:"parent,omitempty"`
	Branch *Branch `json:"branch,omitempty"`
	// Usage is set on a turn's final reply: the provider's token counts and the turn's time.
	Usage *Usage `json:"usage,omitempty"`
	// Model is the model that answered (final replies).
	Model string `json:"model,omitempty"`
}

// ToolCall is a call recorded in an assistant message.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ProviderConfig configures an OpenAI-compatible provider. APIKey is write-only.
type ProviderConfig struct {
	Name     string `json:"name"`
	BaseURL  string `json:"base_url"`
	Model    string `json:"model"`
	APIKey   string `json:"api_key,omitempty"`
	Proxy    string `json:"proxy,omitempty"`    // per-provider proxy URL; empty: HTTPS_PROXY from the environment
	Priority int    `json:"priority,omitempty"` // lower first; ties by name
	// Vision says whether the provider's model takes images (attachments and tools' images are
	// then sent as image parts); nil detects it from what the server's model list says.
	Vision *bool `json:"vision,omitempty"`
	// KeepKey, with an empty APIKey, keeps the key the provider of that name has (an edit of
	// its URL, model or priority); otherwise an empty APIKey means no key.
	KeepKey bool `json:"keep_key,omitempty"`
}

// ProviderCheck is the result of TestProvider. OK false carries the server's or the network's
// error in Error (the call itself succeeds).
type ProviderCheck struct {
	OK      bool          `json:"ok"`
	Error   string        `json:"error,omitempty"`
	Latency time.Duration `json:"latency"`
	Model   string        `json:"model,omitempty"`  // the model that answered
	Models  []string      `json:"models,omitempty"` // what GET /models lists, when the server has it
	Reply   string        `json:"reply,omitempty"`  // the first words of the answer
}

// Provider is a configured provider as listed (never with its key).
type Provider struct {
	Name     string `json:"name"`
	BaseURL  string `json:"base_url"`
	Model    string `json:"model"`
	Proxy    string `json:"proxy,omitempty"`
	Priority int    `json:"priority"`
	HasKey   bool   `json:"has_key"`
	Vision   *bool  `json:"vision,omitempty"` // as configured; nil: detected from the server
}

// Tool is a tool the agent can call.
type Tool struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	Parameters   any    `json:"parameters"`
	ParallelSafe bool   `json:"parallel_safe"`
	Source       string `json:"source"` // "builtin" or a plugin name
	// Visibility is who may call it: "owner" (the owner's sessions only) or "any".
	Visibility string `json:"visibility,omitempty"`
}

// CompletionService is the OpenAI-compatible surface (/v1/chat/completions, /v1/models) that the kernel
// serves besides Service. It is not part of Service: clients use Chat.
type CompletionService interface {
	// Complete ingests the request messages the session has not seen yet (in order, before the
	// last user message), then answers the last user message as a normal agent turn.
	Complete(ctx context.Context, req CompletionRequest, emit func(ChatEvent)) (ChatResult, error)
	// Models lists the model ids the configured providers serve (each provider's model).
	Models(ctx context.Context) ([]string, error)
}

// CompletionRequest is a /v1/chat/completions request reduced to what the kernel uses.
type CompletionRequest struct {
	Session string // from the `user` field or X-Hologram-Session; empty: "openai"
	User    bool   // the `user` field named the session: an end user's, in scope user:<id>, never the owner's
	// Client is the /v1 client token the request came with ("": the owner's own token or the
	// socket); Guest says it is not an owner token ([APIToken]): without `user` the request runs
	// in scope group:token:<Client>, never the owner's.
	Client   string          `json:"client,omitempty"`
	Guest    bool            `json:"guest,omitempty"`
	Model    string          // requested model; empty or unknown: the session's or default provider's
	Messages []IngestMessage // system, user and assistant messages as sent; the last one is a user message
	// Attachments are the images of the last user message (image_url data: parts), stored as its
	// image blocks and sent to vision models as a chat's attachments are.
	Attachments []Attachment `json:"attachments,omitempty"`
	// The client's model parameters, passed to the provider (zero: the kernel's own).
	MaxTokens      int             `json:"max_tokens,omitempty"`
	Temperature    *float64        `json:"temperature,omitempty"`
	TopP           *float64        `json:"top_p,omitempty"`
	Stop           []string        `json:"stop,omitempty"`
	ResponseSchema json.RawMessage `json:"response_schema,omitempty"` // from response_format json_schema / json_object
	// ClientTools are the client's own tools (OpenAI `tools`): offered to the model beside the
	// agent's, their calls returned to the client, never run by the kernel.
	ClientTools []ClientTool `json:"client_tools,omitempty"`
}

// IngestMessage is one message of a CompletionRequest with its content flattened to text.
type IngestMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}
