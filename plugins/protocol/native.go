package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Native extensions (ARCHITECTURE.md §5). A native plugin (a plugin.json directory built on
// plugins/sdk) and the kernel negotiate them in initialize: the kernel offers a [NativeHello] in
// the params' capabilities.experimental[[ExtensionName]], the plugin answers a [NativeOffer] in
// the result's capabilities.experimental[[ExtensionName]]. Afterwards both sides use the
// namespaced methods below. MCP servers never see any of this.

// ExtensionName is the key of the native extensions in capabilities.experimental.
const ExtensionName = "hologram"

// NativeVersion is the version of the native extensions this package describes.
const NativeVersion = 1

// InlineMax is the largest payload (a content item's text or data, a block, hook data) sent
// inline in a frame when the plugin has a shared-memory region; larger ones travel through the
// arenas as a [Ref]. The writer of an arena frees what it wrote once the reader is done: the
// kernel frees a kernel→plugin reference when the plugin has answered the request that carried
// it; the plugin frees a plugin→kernel reference when the kernel sends shm/release.
const InlineMax = 64 << 10

// Capabilities a native plugin declares in its manifest; each gates the methods named.
const (
	CapHooks     = "hooks"     // initialize's hooks, hooks/run
	CapChannels  = "channels"  // initialize's channels, channel/input, channel/send
	CapMemory    = "memory"    // memory/recall, memory/commit
	CapEvents    = "events"    // events/subscribe, events/event and the event ring
	CapNotify    = "notify"    // owner/notify
	CapLLM       = "llm"       // llm/complete
	CapLifecycle = "lifecycle" // kernel/paused, kernel/resumed
)

// Native methods and notifications. "kernel →" ones are sent by the kernel to the plugin, the
// others by the plugin to the kernel.
const (
	MethodHookRun         = "hooks/run"        // kernel → plugin: run one stage hook
	MethodChannelSend     = "channel/send"     // kernel → plugin: deliver a reply on a channel
	NotifEvent            = "events/event"     // kernel → plugin: a kernel event (no region)
	NotifPaused           = "kernel/paused"    // kernel → plugin
	NotifResumed          = "kernel/resumed"   // kernel → plugin
	MethodChannelInput    = "channel/input"    // a message arrived on a channel
	MethodMemoryRecall    = "memory/recall"    // recall memory in the current turn's scope
	MethodMemoryCommit    = "memory/commit"    // write a memory event
	MethodEventsSubscribe = "events/subscribe" // choose the kernel events to receive
	MethodOwnerNotify     = "owner/notify"     // tell the owner something
	MethodLLMComplete     = "llm/complete"     // one completion by the owner's default provider
	// NotifRelease (kernel → plugin) tells the plugin that the kernel is done with references
	// into the plugin's arena (a tool result's, a channel input's): the plugin frees them.
	NotifRelease = "shm/release"
)

// ReleaseParams are the params of shm/release.
type ReleaseParams struct {
	Refs []Ref `json:"refs"`
}

// CodeCapability is the JSON-RPC error code of a request refused because the plugin's manifest
// does not declare the capability the method needs; the message names the capability.
const CodeCapability = -32001

// MetaTurn is the _meta key of tools/call and hooks/run params carrying the id of the turn the
// request belongs to; the plugin passes it back in memory requests.
const MetaTurn = "hologram/turn"

// Ref is a reference to bytes in a plugin's shared-memory region (plugins/shm.Ref on the wire):
// an offset relative to the region, a length and the arena generation it was allocated in.
type Ref struct {
	Offset uint64 `json:"offset"`
	Length uint64 `json:"length"`
	Gen    uint32 `json:"generation"`
}

// String renders r for logs and errors.
func (r Ref) String() string {
	return fmt.Sprintf("ref{offset %d, length %d, generation %d}", r.Offset, r.Length, r.Gen)
}

// ShmInfo describes the region passed to a native plugin as fds 3 (region), 4 (doorbell
// kernel→plugin) and 5 (doorbell plugin→kernel).
type ShmInfo struct {
	ArenaSize int64 `json:"arena_size"`
	RingSlots int   `json:"ring_slots"`
	SlotSize  int   `json:"slot_size"`
}

// NativeHello is what the kernel offers a native plugin in initialize.
type NativeHello struct {
	Version int    `json:"version"`
	Plugin  string `json:"plugin"` // the plugin's name in this installation
	// Capabilities are those the manifest declares: the only methods the plugin may use.
	Capabilities []string `json:"capabilities"`
	// Shm is set when fds 3, 4 and 5 carry a shared-memory region.
	Shm *ShmInfo `json:"shm,omitempty"`
	// Paused reports that the kernel is paused at the handshake (no kernel/paused follows).
	Paused bool `json:"paused,omitempty"`
}

// NativeOffer is what a native plugin answers in initialize.
type NativeOffer struct {
	Version  int        `json:"version"`
	Hooks    []HookDecl `json:"hooks,omitempty"`
	Channels []string   `json:"channels,omitempty"`
}

// HookDecl declares one stage hook. Stage is one of the agent's stages (on_input, context,
// pre_action, post_action, before_toolcall, after_toolcall, before_output, after_output); hooks
// run by Priority descending, then by name. TimeoutMS bounds one run (0: the kernel's default,
// capped by its maximum); a hook that does not answer in time is skipped and logged.
type HookDecl struct {
	Name      string `json:"name"`
	Stage     string `json:"stage"`
	Priority  int    `json:"priority,omitempty"`
	TimeoutMS int    `json:"timeout_ms,omitempty"`
}

// ChatMessage is one message of a turn's message list.
type ChatMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []ToolCallData `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// ToolCallData is one tool call of the model.
type ToolCallData struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// StageData is what a hook sees (the agent's StageData on the wire).
type StageData struct {
	Stage        string         `json:"stage"`
	Session      string         `json:"session"`
	TurnID       string         `json:"turn_id"`
	Channel      string         `json:"channel,omitempty"`
	Partner      string         `json:"partner,omitempty"`
	Scope        string         `json:"scope"`
	Round        int            `json:"round"`
	Input        string         `json:"input,omitempty"`
	Messages     []ChatMessage  `json:"messages,omitempty"`
	Text         string         `json:"text,omitempty"`
	Reasoning    string         `json:"reasoning,omitempty"`
	ToolCalls    []ToolCallData `json:"tool_calls,omitempty"`
	Call         *ToolCallData  `json:"call,omitempty"`
	Result       string         `json:"result,omitempty"`
	ResultStatus string         `json:"result_status,omitempty"`
}

// HookRunParams are the params of hooks/run. The stage data is inline in Data, or, when it is
// larger than [InlineMax] and the plugin has a region, in the kernel→plugin arena at DataRef
// (its JSON encoding; the plugin releases it once read).
type HookRunParams struct {
	Hook    string     `json:"hook"`
	Data    *StageData `json:"data,omitempty"`
	DataRef *Ref       `json:"data_ref,omitempty"`
}

// HookPatch is a hook's answer: every non-null field replaces the matching field (the agent's
// Patch). Deny denies the current tool call (before_toolcall) with the given reason; Reply ends
// the turn with the given text (on_input, pre_action, post_action).
type HookPatch struct {
	Input          *string         `json:"input,omitempty"`
	Messages       *[]ChatMessage  `json:"messages,omitempty"`
	AppendMessages []ChatMessage   `json:"append_messages,omitempty"`
	Text           *string         `json:"text,omitempty"`
	ToolCalls      *[]ToolCallData `json:"tool_calls,omitempty"`
	Args           *string         `json:"args,omitempty"`
	Deny           *string         `json:"deny,omitempty"`
	Result         *string         `json:"result,omitempty"`
	Reply          *string         `json:"reply,omitempty"`
}

// Block is a message attachment: text (Text) or media (image, audio: Data, or Ref when it
// travels through the region).
type Block struct {
	Kind string `json:"kind"` // text, image or audio
	Name string `json:"name,omitempty"`
	MIME string `json:"mime,omitempty"`
	Text string `json:"text,omitempty"`
	Data []byte `json:"data,omitempty"` // base64 on the wire
	Ref  *Ref   `json:"ref,omitempty"`
}

// ChannelInputParams are the params of channel/input: a message that arrived on one of the
// plugin's channels from Partner (a person or a group id on that channel). The kernel runs an
// agent turn in the session of the channel and partner and sends the reply with channel/send.
// Scene, when set, is the declared scene of the conversation; it must be the one of the channel
// and partner ("chan:<channel>/peer:<partner>").
type ChannelInputParams struct {
	Channel string  `json:"channel"`
	Partner string  `json:"partner"`
	Scene   string  `json:"scene,omitempty"`
	Text    string  `json:"text"`
	Blocks  []Block `json:"blocks,omitempty"`
}

// ChannelInputResult is the result of channel/input: the session the turn runs in and its
// scene.
type ChannelInputResult struct {
	Session string `json:"session"`
	Scene   string `json:"scene"`
}

// ChannelSendParams are the params of channel/send: the reply of the turn TurnID for Partner on
// Channel. The plugin answers once the message is delivered, or with an error saying why it
// could not be.
type ChannelSendParams struct {
	Channel string  `json:"channel"`
	Partner string  `json:"partner"`
	Session string  `json:"session"`
	TurnID  string  `json:"turn_id"`
	Text    string  `json:"text"`
	Blocks  []Block `json:"blocks,omitempty"`
}

// ChannelSendResult is the result of channel/send: the id the channel gave the message.
type ChannelSendResult struct {
	MessageID string `json:"message_id,omitempty"`
}

// MemoryRecallParams are the params of memory/recall. Turn is the id of the turn the plugin is
// serving (from tools/call or hooks/run): recall then sees what that turn's session may see.
// Without a turn the plugin sees only public memory and what it wrote itself.
type MemoryRecallParams struct {
	Turn  string `json:"turn,omitempty"`
	Query string `json:"query"`
	K     int    `json:"k,omitempty"` // default 5, at most 50
}

// MemoryItem is one recalled memory event.
type MemoryItem struct {
	ID      int64     `json:"id"`
	Time    time.Time `json:"time"`
	Role    string    `json:"role"`
	Content string    `json:"content"`
	Channel string    `json:"channel,omitempty"`
	Partner string    `json:"partner,omitempty"`
	Scope   string    `json:"scope"`
	Score   float64   `json:"score"`
}

// MemoryRecallResult is the result of memory/recall; Scope names what the plugin could see.
type MemoryRecallResult struct {
	Items []MemoryItem `json:"items"`
	Scope string       `json:"scope"`
}

// MemoryCommitParams are the params of memory/commit: Text is stored as a memory event in the
// turn's channel, partner and scope, or, without a turn, owner-private on channel
// plugin:<name>.
type MemoryCommitParams struct {
	Turn string            `json:"turn,omitempty"`
	Text string            `json:"text"`
	Meta map[string]string `json:"meta,omitempty"`
}

// MemoryCommitResult is the result of memory/commit.
type MemoryCommitResult struct {
	ID      int64  `json:"id"`
	Session string `json:"session"`
	Channel string `json:"channel"`
	Scope   string `json:"scope"`
}

// EventsSubscribeParams are the params of events/subscribe: the kernel event types to receive
// (empty: none; it replaces the previous subscription).
type EventsSubscribeParams struct {
	Types []string `json:"types"`
}

// EventsSubscribeResult says how events will arrive: through the region's event ring (Ring) or
// as events/event notifications.
type EventsSubscribeResult struct {
	Ring bool `json:"ring"`
}

// EventParams is one kernel event: the params of events/event, and the JSON of one ring slot.
type EventParams struct {
	Type    string         `json:"type"`
	Time    time.Time      `json:"time"`
	Payload map[string]any `json:"payload,omitempty"`
}

// NotifyParams are the params of owner/notify.
type NotifyParams struct {
	Title string `json:"title"`
	Body  string `json:"body,omitempty"`
}

// NotifyResult says where the notification went ("chat": the owner's private chat).
type NotifyResult struct {
	DeliveredTo string `json:"delivered_to"`
}

// CompleteParams are the params of llm/complete: one request to the owner's default provider.
type CompleteParams struct {
	System    string        `json:"system,omitempty"`
	Messages  []ChatMessage `json:"messages"`
	MaxTokens int           `json:"max_tokens,omitempty"`
}

// CompleteResult is the result of llm/complete.
type CompleteResult struct {
	Text  string `json:"text"`
	Model string `json:"model,omitempty"`
	Usage Usage  `json:"usage"`
}

// Usage counts the tokens of a completion.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// RequestMeta is the _meta member of request params.
type RequestMeta struct {
	Turn string `json:"hologram/turn,omitempty"`
	// Session is the id of the turn's session (tools/call only): a plugin keeping state per
	// conversation (the code plugin's workspace) keys it by this.
	Session string `json:"hologram/session,omitempty"`
}

// capabilityPrefixes maps method namespaces to the manifest capability they need.
var capabilityPrefixes = []struct{ prefix, capability string }{
	{"sampling/", CapLLM},
	{"llm/", CapLLM},
	{"memory/", CapMemory},
	{"events/", CapEvents},
	{MethodOwnerApprove, CapApprove}, // before owner/: asking differs from telling
	{"owner/", CapNotify},
	{"channel/", CapChannels},
	{"hooks/", CapHooks},
	{"kernel/", CapLifecycle},
	{"roots/", "roots"},
	{"elicitation/", "owner"},
}

// CapabilityFor returns the manifest capability a native method needs, or "" for a method of
// no native namespace.
func CapabilityFor(method string) string {
	for _, c := range capabilityPrefixes {
		if strings.HasPrefix(method, c.prefix) {
			return c.capability
		}
	}
	return ""
}

// CapabilityError returns the error answering a call of method, which needs capability, by a
// plugin whose manifest does not declare it: code [CodeCapability], the capability in the
// message and in data.capability.
func CapabilityError(method, capability string) *Error {
	data, _ := json.Marshal(map[string]string{"capability": capability})
	return &Error{Code: CodeCapability, Data: data,
		Message: fmt.Sprintf("method %s needs capability %q (not declared in the manifest)", method, capability)}
}

// HelloFrom returns the [NativeHello] of initialize params, if the kernel offered one.
func HelloFrom(c ClientCapabilities) (NativeHello, bool, error) {
	raw, ok := c.Experimental[ExtensionName]
	if !ok {
		return NativeHello{}, false, nil
	}
	var h NativeHello
	if err := json.Unmarshal(raw, &h); err != nil {
		return NativeHello{}, false, fmt.Errorf("capabilities.experimental.%s: %w", ExtensionName, err)
	}
	return h, true, nil
}

// OfferFrom returns the [NativeOffer] of an initialize result, if the plugin made one.
func OfferFrom(c ServerCapabilities) (NativeOffer, bool, error) {
	raw, ok := c.Experimental[ExtensionName]
	if !ok {
		return NativeOffer{}, false, nil
	}
	var o NativeOffer
	if err := json.Unmarshal(raw, &o); err != nil {
		return NativeOffer{}, false, fmt.Errorf("capabilities.experimental.%s: %w", ExtensionName, err)
	}
	return o, true, nil
}
