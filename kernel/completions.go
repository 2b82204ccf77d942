package kernel

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"strings"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

// openAISession is the session used by /v1/chat/completions requests that name none.
const openAISession = "openai"

// Complete implements client.CompletionService for /v1/chat/completions (ARCHITECTURE.md §7): the request
// messages the session has not seen yet are ingested, then the last user message is answered by a
// normal agent turn. A client that resends the whole conversation creates no duplicates; a client
// that sends only its new message gets the session's memory anyway.
func (k completionRole) Complete(ctx context.Context, req client.CompletionRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
	if req.Session == "" {
		req.Session = openAISession
	}
	if !sessionIDRe.MatchString(req.Session) {
		return client.ChatResult{}, invalid("invalid session %q (letters, digits and . _ : @ -, at most 128)", req.Session)
	}
	n := len(req.Messages)
	if n == 0 || req.Messages[n-1].Role != "user" || strings.TrimSpace(req.Messages[n-1].Content) == "" {
		return client.ChatResult{}, invalid("the last message must be a non-empty user message")
	}
	var scope memory.Scope // an end user's session (`user`) sees its own and public things only (agent.Offered)
	if req.User {
		scope = memory.Scope{Kind: memory.ScopeGroup, Group: "user:" + req.Session}
	}
	sess, err := k.ensureChannelSession(ctx, req.Session, "OpenAI API: "+req.Session, client.ChannelOpenAI, scope)
	if err != nil {
		return client.ChatResult{}, mapErr(err)
	}
	if req.User && sess.Scope != scope {
		return client.ChatResult{}, invalid("user %q names session %s, which is in scope %s, not an end user's (%s): pick another user", req.Session, sess.ID, sess.Scope, scope)
	}
	// System messages become the session's instructions (clients send them on every call).
	var system []string
	var prior []client.IngestMessage
	for _, m := range req.Messages[:n-1] {
		switch m.Role {
		case "system", "developer":
			system = append(system, m.Content)
		case "user", "assistant":
			if strings.TrimSpace(m.Content) != "" {
				prior = append(prior, m)
			}
		default:
			return client.ChatResult{}, invalid("message role %q is not supported (system, user, assistant)", m.Role)
		}
	}
	if sp := strings.Join(system, "\n\n"); sp != "" && sp != sess.SystemPrompt {
		sess.SystemPrompt = sp
		if _, err := k.store.UpdateSession(ctx, sess); err != nil {
			return client.ChatResult{}, mapErr(err)
		}
	}
	if err := k.checkProvider(sess.Model); err != nil {
		return client.ChatResult{}, err
	}
	if err := k.ingest(ctx, sess, prior); err != nil {
		return client.ChatResult{}, mapErr(err)
	}
	tr := agent.TurnRequest{Session: req.Session, Input: sanitize(strings.TrimSpace(req.Messages[n-1].Content)), Channel: "openai", Scope: sess.Scope}
	if req.MaxTokens > 0 || req.Temperature != nil || req.TopP != nil || len(req.Stop) > 0 || len(req.ResponseSchema) > 0 {
		tr.Sampling = &agent.Sampling{MaxTokens: req.MaxTokens, Temperature: req.Temperature, TopP: req.TopP, Stop: req.Stop, ResponseSchema: req.ResponseSchema}
	}
	res, err := k.runTurn(ctx, tr, nil, emit)
	return res, upstreamError(err)
}

// upstreamError answers a turn its provider failed as an OpenAI-compatible server does, so that
// clients retry it the way they retry OpenAI (their retries of the same request are answered
// from the first attempt, kernel/api): a provider's 429 or 503 is 503 with its Retry-After, a
// timeout 504, any other provider failure 502.
func upstreamError(err error) error {
	pe := (*agent.ProviderError)(nil)
	if !errors.As(err, &pe) {
		return err
	}
	ce := &client.Error{Status: http.StatusBadGateway, Message: "the model's provider failed: " + pe.Error(), RetryAfter: 2}
	var ae *llm.APIError
	var ne net.Error
	switch {
	case errors.As(err, &ae) && (ae.Status == http.StatusTooManyRequests || ae.Status == http.StatusServiceUnavailable):
		ce.Status = http.StatusServiceUnavailable
		ce.RetryAfter = max(int(math.Ceil(ae.RetryAfter.Seconds())), 1)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		ce.Status = http.StatusGatewayTimeout
	}
	return ce
}

// ingest appends the messages of prior that the session has not seen. The stored conversation is
// the session's user messages and final assistant texts; the longest prefix of prior that equals
// the end of it is already known, the rest is new.
func (k *Kernel) ingest(ctx context.Context, sess memory.Session, prior []client.IngestMessage) error {
	session := sess.ID
	if len(prior) == 0 {
		return nil
	}
	hist, err := k.store.History(ctx, session, 0)
	if err != nil {
		return err
	}
	var seen []client.IngestMessage
	for _, e := range hist {
		if (e.Role == memory.RoleUser || e.Role == memory.RoleAssistant) && len(e.ToolCalls) == 0 && strings.TrimSpace(e.Content) != "" {
			seen = append(seen, client.IngestMessage{Role: string(e.Role), Content: e.Content})
		}
	}
	known := 0
	for j := min(len(prior), len(seen)); j > 0; j-- {
		if sameMessages(prior[:j], seen[len(seen)-j:]) {
			known = j
			break
		}
	}
	if known == len(prior) {
		return nil
	}
	var evs []memory.Event
	for _, m := range prior[known:] {
		evs = append(evs, memory.Event{Session: session, Role: memory.Role(m.Role), Content: sanitize(m.Content), Channel: "openai", Scope: sess.Scope,
			Time: k.clock(), Tokens: llm.EstimateTokens(m.Content)})
	}
	_, err = k.store.AppendEvents(ctx, evs)
	return err
}

func sameMessages(a, b []client.IngestMessage) bool {
	for i := range a {
		if a[i].Role != b[i].Role || strings.TrimSpace(a[i].Content) != strings.TrimSpace(b[i].Content) {
			return false
		}
	}
	return true
}
