// Package sdk is what HologramAgent plugin authors import: [Serve] runs a native plugin (a
// directory with plugin.json and a binary) over the MCP-compatible JSON-RPC protocol of
// ARCHITECTURE.md §5, with the native extensions on top: tools, stage hooks, channels, memory,
// kernel events, owner notifications, LLM completions and the kernel's pause.
//
// A plugin is a [Plugin] value handed to [Serve] from main:
//
//	func main() {
//		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
//		defer stop()
//		if err := sdk.Serve(ctx, sdk.Plugin{Name: "hello", Version: "1.0.0", Tools: []sdk.Tool{…}}); err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//	}
//
// Serve owns the process's stdout: the protocol writes to a private duplicate of it, and fd 1
// (and os.Stdout) then point at stderr, so a stray fmt.Println or a C library's printf never
// corrupts the protocol; it ends up in the plugin's log. Logs are JSON lines on stderr
// ([NewLogger]); the kernel keeps them under the plugin's name.
//
// Every kernel method needs a capability that plugin.json declares (hooks, channels, memory,
// events, notify, llm, lifecycle, approve); an undeclared call fails with an error naming it
// (see [CapabilityError]).
//
// The package imports only the standard library, golang.org/x/sys and the plugin packages
// plugins/protocol and plugins/shm (tested). Its API is stable within the 0.x series; additions
// are backwards compatible. Test helpers live in plugins/sdk/sdktest.
package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// Plugin describes a native plugin: what it offers the kernel and how it reacts to it. Only
// Name is required.
type Plugin struct {
	// Name and Version introduce the plugin in initialize (serverInfo).
	Name    string
	Version string
	// Instructions, if set, is the MCP instructions text of the initialize result.
	Instructions string
	// Tools are offered to the model.
	Tools []Tool
	// Hooks run at the agent's stages (capability "hooks").
	Hooks []Hook
	// Channels are the channels the plugin carries (capability "channels"): messages the plugin
	// receives are injected with [Kernel.Input]; the kernel's replies arrive at Channel.Send.
	Channels []Channel
	// Events are the kernel event types the plugin subscribes to once started (capability
	// "events"); OnEvent receives them, one at a time, in order.
	Events  []string
	OnEvent func(ctx context.Context, k *Kernel, e Event)
	// OnPause is called with true on kernel/paused and false on kernel/resumed (capability
	// "lifecycle"), in order with the events. A channel plugin stops injecting input while paused
	// (the kernel refuses it anyway).
	OnPause func(ctx context.Context, k *Kernel, paused bool)
	// Start, when set, runs once the handshake is done, in its own goroutine; its ctx ends at
	// shutdown. A channel plugin listens for its messages here. An error is logged; the plugin
	// keeps serving.
	Start func(ctx context.Context, k *Kernel) error
	// Logger receives the SDK's own log; nil: [NewLogger] on stderr.
	Logger *slog.Logger
}

// Tool is a tool the model may call.
type Tool struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the JSON Schema of the arguments; nil: any object.
	InputSchema json.RawMessage
	// ReadOnly says the tool changes nothing, so it may run in parallel with others.
	ReadOnly bool
	// Visibility says who may call the tool: [protocol.VisibilityOwner] (the default when
	// empty: the tool reads or writes the owner's data) or [protocol.VisibilityAny] (safe in a
	// group's, an end user's or a public conversation: nothing it returns is the owner's). The
	// plugin's plugin.json may set it too ("tools": {"name": {"visibility": "any"}}); the
	// manifest wins.
	Visibility string
	// Run executes a call. An error is shown to the model as the tool's failure. ctx carries
	// the turn the call belongs to, so [Kernel.Recall] and [Kernel.Commit] work in that turn's
	// scope; it is cancelled when the kernel gives up on the call.
	Run func(ctx context.Context, k *Kernel, args json.RawMessage) (Result, error)
}

// Result is what a tool returns: content items shown to the model.
type Result struct {
	Content []Content
	// IsError marks the result as the tool's failure (like returning an error).
	IsError bool
}

// Content is one item of a [Result]: Type "text" (Text) or "image"/"audio" (MIME, Data). Items
// larger than 64 KiB travel through the plugin's shared memory, not the pipe.
type Content struct {
	Type string
	Text string
	MIME string
	Data []byte
}

// Text returns a result of one text item.
func Text(s string) Result { return Result{Content: []Content{{Type: "text", Text: s}}} }

// Image returns a result of one image item.
func Image(mime string, data []byte) Result {
	return Result{Content: []Content{{Type: "image", MIME: mime, Data: data}}}
}

// Stage names an agent stage at which hooks run.
type Stage string

// Stages, in the order a turn passes them (ARCHITECTURE.md §3).
const (
	StageOnInput        Stage = "on_input"        // Input may be rewritten; Reply short-circuits
	StageContext        Stage = "context"         // Messages may be replaced or appended to
	StagePreAction      Stage = "pre_action"      // AppendMessages injects data; Reply short-circuits
	StagePostAction     Stage = "post_action"     // after every LLM answer: Text, ToolCalls, Reply
	StageBeforeToolCall Stage = "before_toolcall" // per call: Args rewrites, Deny denies
	StageAfterToolCall  Stage = "after_toolcall"  // per executed call: Result rewrites
	StageBeforeOutput   Stage = "before_output"   // final Text formatting
	StageAfterOutput    Stage = "after_output"    // read-only (statistics)
)

// valid reports whether s is a known stage.
func (s Stage) valid() bool {
	switch s {
	case StageOnInput, StageContext, StagePreAction, StagePostAction, StageBeforeToolCall,
		StageAfterToolCall, StageBeforeOutput, StageAfterOutput:
		return true
	}
	return false
}

// StageData is what a hook sees; Patch is its answer (every non-nil field replaces the
// matching one; see ARCHITECTURE.md §3 for the fields each stage honours).
type (
	StageData = protocol.StageData
	Patch     = protocol.HookPatch
)

// Hook is a stage hook. Hooks of a stage run in the agent's deterministic order (Priority
// descending, then name, across plugins and in-process hooks), each seeing the patches of the
// ones before it; when two set the same field the higher priority wins.
type Hook struct {
	Name     string
	Stage    Stage
	Priority int
	// Timeout bounds one run (0: the kernel's default); a hook that misses it is skipped and
	// logged by the kernel, never blocking the turn.
	Timeout time.Duration
	Run     func(ctx context.Context, k *Kernel, d *StageData) (Patch, error)
}

// Channel is a channel the plugin carries (e.g. "qq").
type Channel struct {
	Name string
	// Send delivers a reply of the kernel, synchronously: it returns once the message is
	// delivered (with the id the channel gave it, if any) or with an error saying why not.
	Send func(ctx context.Context, k *Kernel, m OutMessage) (messageID string, err error)
}

// OutMessage is a reply to deliver on a channel. Blocks carry their bytes in Data (blocks that
// came through shared memory are already copied).
type OutMessage = protocol.ChannelSendParams

// InMessage is a message that arrived on a channel, to inject with [Kernel.Input].
type InMessage = protocol.ChannelInputParams

// Block is a message attachment.
type Block = protocol.Block

// Event is a kernel event.
type Event = protocol.EventParams

// Ptr returns a pointer to v, for the fields of a [Patch].
func Ptr[T any](v T) *T { return &v }

// CapabilityError is the error of a kernel method the plugin's manifest does not declare the
// capability for.
type CapabilityError struct {
	Method     string
	Capability string
	Message    string
}

// Error implements error.
func (e *CapabilityError) Error() string { return e.Message }

// ErrNoRegion reports a payload that needs the shared-memory region when the plugin has none.
var ErrNoRegion = errors.New("no shared-memory region")
