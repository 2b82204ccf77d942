package kernel

import (
	"context"
	"strings"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/completion"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/memadmin"
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
	if n == 0 || req.Messages[n-1].Role != "user" || strings.TrimSpace(req.Messages[n-1].Content) == "" && len(req.Attachments) == 0 {
		return client.ChatResult{}, invalid("the last message must be a non-empty user message")
	}
	scope, guest := completion.Scope(req) // an end user's or a guest token's sees its own and public things only (agent.Offered)
	sess, err := k.ensureChannelSession(ctx, req.Session, "OpenAI API: "+req.Session, client.ChannelOpenAI, scope)
	if err != nil {
		return client.ChatResult{}, mapErr(err)
	}
	if err := completion.CheckScope(req, sess, scope, guest); err != nil {
		return client.ChatResult{}, err
	}
	blocks, _, err := memadmin.MediaBlocks(ctx, req.Attachments, nil) // the last user message's images
	if err != nil {
		return client.ChatResult{}, err
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
	tr := agent.TurnRequest{Session: req.Session, Input: sanitize(strings.TrimSpace(req.Messages[n-1].Content)), Channel: "openai", Scope: sess.Scope,
		Sampling: completion.Sampling(req), Blocks: blocks}
	for _, t := range req.ClientTools { // the client's own: their calls go back to it (kernel/api)
		tr.ClientTools = append(tr.ClientTools, agent.ClientTool(t))
	}
	regen, edit, err := k.ingest(ctx, sess, prior, tr.Input)
	if err != nil {
		return client.ChatResult{}, mapErr(err)
	}
	var move func(context.Context) error // a regenerate or an edit: a new branch, the old one kept
	if regen != 0 {
		tr.Input, tr.Blocks = "", nil // the stored message is answered again, with its stored images
	}
	if regen != 0 || edit != 0 {
		if tr.Input, tr.Again, move, err = k.admin.BranchMove(ctx, sess.ID, regen, edit, tr.Input, false); err != nil {
			return client.ChatResult{}, err
		}
	}
	k.ocr.Blocks(ctx, tr.Blocks)
	k.stt.Blocks(ctx, tr.Blocks)
	res, err := k.runTurn(ctx, tr, move, emit)
	return res, completion.UpstreamError(err)
}

// ingest appends the messages of prior that the session has not stored (completion.Unseen), or
// returns the stored user message a resent conversation regenerates or edits (completion.Resend;
// without prior only in a conversation's own session: elsewhere a lone message is a new turn).
func (k *Kernel) ingest(ctx context.Context, sess memory.Session, prior []client.IngestMessage, last string) (regen, edit int64, err error) {
	session := sess.ID
	hist, err := k.store.History(ctx, session, 0)
	if err != nil {
		return 0, 0, err
	}
	seen, ids := completion.Seen(hist)
	if r, e := completion.Resend(seen, prior, last); len(prior) > 0 || strings.HasPrefix(session, "v1-") {
		switch {
		case r >= 0:
			return ids[r], 0, nil
		case e >= 0:
			return 0, ids[e], nil
		}
	}
	unseen := completion.Unseen(seen, prior)
	if len(unseen) == 0 {
		return 0, 0, nil
	}
	var evs []memory.Event
	for _, m := range unseen {
		evs = append(evs, memory.Event{Session: session, Role: memory.Role(m.Role), Content: sanitize(m.Content), Channel: "openai", Scope: sess.Scope,
			Time: k.clock(), Tokens: llm.EstimateTokens(m.Content)})
	}
	_, err = k.store.AppendEvents(ctx, evs)
	return 0, 0, err
}
