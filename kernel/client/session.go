package client

import "strings"

// Channels of the sessions the kernel keeps for itself ([Session.System]).
const (
	// ChannelPluginPrefix starts the channel of a plugin's memory session ("plugin:notes").
	ChannelPluginPrefix = "plugin:"
	// ChannelOpenAI is the channel of the OpenAI-compatible API's sessions (/v1/chat/completions).
	ChannelOpenAI = "openai"
)

// System reports whether s is a session the kernel keeps for itself, not one of the owner's
// chats: a plugin's memory (channel "plugin:<name>") or a conversation of the OpenAI-compatible
// API (channel "openai"). The desktop's chat list hides them unless asked to show them.
func (s Session) System() bool {
	return strings.HasPrefix(s.Channel, ChannelPluginPrefix) || s.Channel == ChannelOpenAI
}
