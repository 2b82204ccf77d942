package gui

import (
	"context"
	"fmt"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// A session's history as chat messages: blocks, tool calls and their results.

// loadHistory replaces a session's messages by its history, unless a turn runs there.
func (vm *ChatVM) loadHistory(ctx context.Context, id string) error {
	page, err := vm.svc.HistoryPage(ctx, client.HistoryQuery{Session: id, Limit: chatHistoryLimit})
	if err != nil {
		return fmt.Errorf("%s: %w", Tf("Could not load the history of %s", id), err)
	}
	msgs := chatFromHistory(page.Messages)
	vm.mu.Lock()
	s := vm.sess(id)
	if s.turn != nil {
		vm.mu.Unlock()
		return nil
	}
	s.msgs, s.loaded = msgs, true
	s.hist, s.more = page.Messages, page.More
	vm.mu.Unlock()
	vm.notify(ChatChange{Kind: ChatMessagesChanged, Session: id})
	vm.trace("history", TraceHistory{Session: id, Messages: len(msgs)})
	return nil
}

// chatFromHistory turns history into chat messages: an assistant message collects the tool
// calls and results and the later assistant messages of its turn, as a streamed turn shows them.
func chatFromHistory(hist []client.Message) []ChatMessage {
	var out []ChatMessage
	for _, m := range hist {
		last := len(out) - 1
		sameTurn := last >= 0 && out[last].Role == ChatRoleAssistant && m.TurnID != "" && out[last].TurnID == m.TurnID
		switch m.Role {
		case ChatRoleUser:
			out = append(out, ChatMessage{Role: ChatRoleUser, Text: m.Content, TurnID: m.TurnID, Time: m.Time,
				Attachments: chatBlocks(m.Blocks), ID: m.ID, Branch: m.Branch})
		case ChatRoleAssistant:
			var tools []ChatTool
			for _, c := range m.ToolCalls {
				tools = append(tools, ChatTool{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Status: "running"})
			}
			if sameTurn {
				out[last].Text = chatJoin(out[last].Text, m.Content)
				out[last].Tools = append(out[last].Tools, tools...)
				out[last].Attachments = append(out[last].Attachments, chatBlocks(m.Blocks)...)
				if m.Usage != nil {
					out[last].Usage, out[last].Model = m.Usage, m.Model
				}
				continue
			}
			out = append(out, ChatMessage{Role: ChatRoleAssistant, Text: m.Content, Tools: tools, TurnID: m.TurnID,
				Time: m.Time, Attachments: chatBlocks(m.Blocks), ID: m.ID, Branch: m.Branch, Usage: m.Usage, Model: m.Model})
		case "tool": // the result of a call of the assistant message before
			if last < 0 || out[last].Role != ChatRoleAssistant {
				continue
			}
			for i := range out[last].Tools {
				if t := &out[last].Tools[i]; t.ID == m.ToolCallID {
					t.Result, t.Status = m.Content, m.ToolStatus
					if t.Status == "" {
						t.Status = "ok"
					}
				}
			}
		}
	}
	return out
}

// chatJoin joins two parts of a reply with a blank line.
func chatJoin(a, b string) string {
	switch {
	case strings.TrimSpace(b) == "":
		return a
	case strings.TrimSpace(a) == "":
		return b
	}
	return a + "\n\n" + b
}

func chatBlocks(bs []client.Block) []ChatAttachment {
	var out []ChatAttachment
	for _, b := range bs {
		out = append(out, ChatAttachment{Kind: b.Kind, Name: b.Name, MIME: b.MIME, Size: b.Size})
	}
	return out
}

// chatSetTool updates the call with t's ID in m (its name and arguments kept when t has none),
// or appends it.
func chatSetTool(m *ChatMessage, t ChatTool) {
	for i := range m.Tools {
		if m.Tools[i].ID == t.ID && t.ID != "" {
			if t.Name == "" {
				t.Name = m.Tools[i].Name
			}
			if t.Arguments == "" {
				t.Arguments = m.Tools[i].Arguments
			}
			m.Tools[i] = t
			return
		}
	}
	m.Tools = append(m.Tools, t)
}
