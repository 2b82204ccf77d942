package kernel

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

// Client-executed tools (client/clienttools.go, agent/clienttools.go): the kernel checks a chat
// request's client tools, hands them to the turn, and routes the client's answers to the call
// that waits for them.

var clientToolRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// clientTools checks the request's client tools and hidden tools: only the owner's own turns
// take them (a group's turn has no client to run them).
func clientTools(req client.ChatRequest, scope memory.Scope) ([]agent.ClientTool, []string, error) {
	if len(req.ClientTools) == 0 && len(req.HideTools) == 0 {
		return nil, nil, nil
	}
	if !agent.OwnerScope(scope) {
		return nil, nil, invalid("client tools and hidden tools are for the owner's sessions only (this session's scope is %s)", scope)
	}
	if len(req.ClientTools) > agent.MaxClientTools {
		return nil, nil, invalid("%d client tools, at most %d", len(req.ClientTools), agent.MaxClientTools)
	}
	if len(req.HideTools) > 256 {
		return nil, nil, invalid("%d hidden tools, at most 256", len(req.HideTools))
	}
	out := make([]agent.ClientTool, 0, len(req.ClientTools))
	seen := map[string]bool{}
	for i, t := range req.ClientTools {
		if !clientToolRe.MatchString(t.Name) {
			return nil, nil, invalid("client tool %d: name %q must match ^[a-zA-Z0-9_-]{1,64}$", i+1, t.Name)
		}
		if seen[t.Name] {
			return nil, nil, invalid("client tool %q is given twice", t.Name)
		}
		seen[t.Name] = true
		if len(t.Parameters) > 0 {
			if _, _, err := llm.NormalizeTool(llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters}); err != nil {
				return nil, nil, invalid("client tool %q: %v", t.Name, err)
			}
		}
		out = append(out, agent.ClientTool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return out, req.HideTools, nil
}

// AnswerToolCall implements client.Service.
func (k chatRole) AnswerToolCall(ctx context.Context, turnID, callID string, a client.ToolAnswer) error {
	if turnID == "" || callID == "" {
		return invalid("empty turn or call id")
	}
	if len(a.Content) > agent.MaxClientResult {
		return invalid("the answer is %d bytes, at most %d", len(a.Content), agent.MaxClientResult)
	}
	err := k.agent.AnswerClientCall(turnID, callID, agent.ClientAnswer{Content: sanitize(a.Content), IsError: a.IsError})
	if errors.Is(err, agent.ErrNoClientCall) {
		return fmt.Errorf("%w: %w", client.ErrNotFound, err)
	}
	return err
}
