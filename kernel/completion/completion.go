// Package completion holds the translation of an OpenAI chat completion request
// (/v1/chat/completions, ARCHITECTURE.md §7) into a kernel turn that the kernel's completion
// role does not need its data for: which resent messages are new, the turn's model parameters,
// and how a provider's failure is answered.
package completion

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

// Unseen returns the messages of prior (a request's messages before its last one, as the client
// resends them) that the session has not stored, seen being its stored conversation (user
// messages and final assistant texts, in order). A conversation resent from its start (prior a
// prefix of seen) is all known; otherwise the longest start of prior that equals the end of seen
// is known (a client sending a window of the conversation), and the rest is new.
func Unseen(seen, prior []client.IngestMessage) []client.IngestMessage {
	if len(prior) <= len(seen) && same(prior, seen[:len(prior)]) {
		return nil
	}
	for j := min(len(prior), len(seen)); j > 0; j-- {
		if same(prior[:j], seen[len(seen)-j:]) {
			return prior[j:]
		}
	}
	return prior
}

// Resend says what a request that resends part of the stored conversation asks for: prior (its
// messages before the last, last) ends where the stored branch (seen) goes on with a user
// message. If that message is last, the client regenerates its reply (Regenerate: its index in
// seen); if not, the client edited it (Edit). Both are -1 otherwise: prior is the whole
// conversation, or not a start of it.
func Resend(seen, prior []client.IngestMessage, last string) (regenerate, edit int) {
	k := len(prior)
	if k >= len(seen) || seen[k].Role != "user" || !same(prior, seen[:k]) {
		return -1, -1
	}
	if strings.TrimSpace(seen[k].Content) == strings.TrimSpace(last) {
		return k, -1
	}
	return -1, k
}

func same(a, b []client.IngestMessage) bool {
	for i := range a {
		if a[i].Role != b[i].Role || strings.TrimSpace(a[i].Content) != strings.TrimSpace(b[i].Content) {
			return false
		}
	}
	return true
}

// Sampling is the turn's model parameters from the request; nil when it sets none.
func Sampling(req client.CompletionRequest) *agent.Sampling {
	if req.MaxTokens <= 0 && req.Temperature == nil && req.TopP == nil && len(req.Stop) == 0 && len(req.ResponseSchema) == 0 {
		return nil
	}
	return &agent.Sampling{MaxTokens: req.MaxTokens, Temperature: req.Temperature, TopP: req.TopP, Stop: req.Stop, ResponseSchema: req.ResponseSchema}
}

// UpstreamError answers a turn its provider failed as an OpenAI-compatible server does, so that
// clients retry it the way they retry OpenAI (their retries of the same request are answered
// from the first attempt, kernel/api): a provider's 429 or 503 is 503 with its Retry-After, a
// timeout 504, any other provider failure 502. Other errors are returned as they are.
func UpstreamError(err error) error {
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

// Scope is the memory scope a request runs in (ARCHITECTURE.md §4, docs/api.md): an end user's
// (`user`) is user:<id>, whatever the token; a non-owner client token's, without `user`, its
// own group token:<name>; the owner's (their own token, the socket, an owner client token)
// private. guest is true unless it is the owner's.
func Scope(req client.CompletionRequest) (scope memory.Scope, guest bool) {
	switch {
	case req.User:
		return memory.Scope{Kind: memory.ScopeGroup, Group: "user:" + req.Session}, true
	case req.Guest:
		return memory.Scope{Kind: memory.ScopeGroup, Group: "token:" + req.Client}, true
	}
	return memory.Scope{Kind: memory.ScopePrivate}, false
}

// CheckScope refuses a guest's request in a session of another scope (an owner's session named
// by X-Hologram-Session, another end user's): a guest's session is always in its own scope.
func CheckScope(req client.CompletionRequest, session memory.Session, scope memory.Scope, guest bool) error {
	if !guest || session.Scope == scope {
		return nil
	}
	who := "user " + req.Session
	if !req.User {
		who = "token " + req.Client
	}
	return fmt.Errorf("%w: session %s is in scope %s, not %s's (%s): pick another session", client.ErrInvalid, session.ID, session.Scope, who, scope)
}

// Seen is a stored conversation as a client resends it (user messages and final assistant
// texts, in order) and the ids of its events.
func Seen(hist []memory.Event) (seen []client.IngestMessage, ids []int64) {
	for _, e := range hist {
		if (e.Role == memory.RoleUser || e.Role == memory.RoleAssistant) && len(e.ToolCalls) == 0 && strings.TrimSpace(e.Content) != "" {
			seen, ids = append(seen, client.IngestMessage{Role: string(e.Role), Content: e.Content}), append(ids, e.ID)
		}
	}
	return seen, ids
}
