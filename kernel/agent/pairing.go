package agent

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

// missingResult is the text of a result the self-check synthesizes for an unanswered call.
const missingResult = "tool result missing: the result of this call was lost; do not assume it ran"

// selfCheck validates the pairing of a message list before it is sent: every tool call id of an
// assistant message is answered exactly once by the tool messages that directly follow it, and no
// tool message is an orphan or a duplicate. It repairs violations (drops orphans and duplicates,
// synthesizes missing results, drops repeated call ids), logs a warning and counts the repair.
func (a *Agent) selfCheck(msgs []llm.Message) []llm.Message {
	if !hasToolTraffic(msgs) {
		// Nothing to pair: the list as it is (capacity capped, so that an append by the caller
		// never writes into a backing array someone else holds).
		return msgs[:len(msgs):len(msgs)]
	}
	out := make([]llm.Message, 0, len(msgs))
	var problems []string
	for i := 0; i < len(msgs); {
		m := msgs[i]
		i++
		if m.Role == "tool" {
			problems = append(problems, fmt.Sprintf("orphan tool result %q dropped", m.ToolCallID))
			continue
		}
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			out = append(out, m)
			continue
		}
		pending := map[string]bool{}
		var order []string
		calls := make([]llm.ToolCall, 0, len(m.ToolCalls))
		for _, c := range m.ToolCalls {
			if pending[c.ID] {
				problems = append(problems, fmt.Sprintf("repeated tool call id %q dropped", c.ID))
				continue
			}
			pending[c.ID] = true
			order = append(order, c.ID)
			calls = append(calls, c)
		}
		m.ToolCalls = calls
		out = append(out, m)
		for i < len(msgs) && msgs[i].Role == "tool" {
			tm := msgs[i]
			i++
			if !pending[tm.ToolCallID] {
				problems = append(problems, fmt.Sprintf("unexpected tool result %q dropped", tm.ToolCallID))
				continue
			}
			delete(pending, tm.ToolCallID)
			out = append(out, tm)
		}
		var missing []string
		for _, id := range order {
			if pending[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("missing tool results synthesized for %s", strings.Join(missing, ", ")))
		}
		for len(missing) > 0 {
			out = append(out, llm.Message{Role: "tool", ToolCallID: missing[0], Content: missingResult}) // pairing:record
			missing = missing[1:]
		}
	}
	if len(problems) > 0 {
		a.repairs.Add(1)
		a.log.Warn("message list violated the tool call pairing; repaired before sending",
			slog.Int("problems", len(problems)), slog.String("details", strings.Join(problems, "; ")))
	}
	return out
}

// hasToolTraffic reports whether msgs holds a tool call or a tool result.
func hasToolTraffic(msgs []llm.Message) bool {
	for _, m := range msgs {
		if m.Role == "tool" || len(m.ToolCalls) > 0 {
			return true
		}
	}
	return false
}

// historyMessages converts stored events to the messages the model sees. Reasoning is never
// re-sent; a text longer than max bytes is shown as its head and tail (tool results are already
// stored so: this bounds inputs, and results stored before the bound existed).
func historyMessages(evs []memory.Event, max int) []llm.Message {
	out := make([]llm.Message, 0, len(evs))
	for _, e := range evs {
		switch e.Role {
		case memory.RoleTool:
			out = append(out, llm.Message{Role: "tool", Content: inputPreview(e.Content, max), ToolCallID: e.ToolCallID})
		case memory.RoleAssistant:
			m := llm.Message{Role: "assistant", Content: inputPreview(e.Content, max)}
			for _, c := range e.ToolCalls {
				m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
			}
			out = append(out, m)
		default:
			out = append(out, llm.Message{Role: string(e.Role), Content: inputPreview(e.Content, max)})
		}
	}
	return out
}

// estimateTokens is a rough token count (about four bytes per token, at least one for non-empty
// text) used for Event.Tokens.
func estimateTokens(parts ...string) int {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 {
		return 0
	}
	return (n + 3) / 4
}
