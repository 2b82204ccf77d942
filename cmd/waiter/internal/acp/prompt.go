package acp

// A prompt turn: the editor's content blocks in, the kernel's stream out as session updates
// (text, tool calls), and the permissions asked on the way.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/hologramagent/hologram/kernel/client"
)

// promptInput turns the prompt's content blocks into the turn's input and attachments.
func promptInput(blocks []sdk.ContentBlock) (string, []client.Attachment, error) {
	var text []string
	var atts []client.Attachment
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			text = append(text, b.Text.Text)
		case b.ResourceLink != nil:
			text = append(text, fmt.Sprintf("[%s](%s)", b.ResourceLink.Name, b.ResourceLink.Uri))
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			atts = append(atts, client.Attachment{Kind: "text", Name: r.Uri, Text: r.Text})
		case b.Image != nil:
			data, err := base64.StdEncoding.DecodeString(b.Image.Data)
			if err != nil {
				return "", nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("prompt block %d: image data is not base64: %v", i, err)})
			}
			atts = append(atts, client.Attachment{Kind: "image", MIME: b.Image.MimeType, Data: data})
		default:
			return "", nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("prompt block %d: this agent takes text, resource links, embedded text resources and images", i)})
		}
	}
	if len(atts) > client.MaxAttachments {
		return "", nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%d attachments, at most %d", len(atts), client.MaxAttachments)})
	}
	in := strings.TrimSpace(strings.Join(text, "\n"))
	if in == "" && len(atts) > 0 {
		in = "(see the attached context)"
	}
	if in == "" {
		return "", nil, sdk.NewInvalidParams(map[string]any{"error": "the prompt is empty"})
	}
	return in, atts, nil
}

// stopReason maps the kernel's stop onto ACP's.
func stopReason(stop string) sdk.StopReason {
	switch stop {
	case "cancelled":
		return sdk.StopReasonCancelled
	case "max_rounds", "max_wall":
		return sdk.StopReasonMaxTurnRequests
	case "token_budget", "length":
		return sdk.StopReasonMaxTokens
	case "refusal", "content_filter":
		return sdk.StopReasonRefusal
	}
	return sdk.StopReasonEndTurn
}

// Prompt implements sdk.Agent: one turn, streamed.
func (a *Agent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	in, atts, err := promptInput(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	// Updates go out on a context the cancel does not end: the editor sees the turn's last events.
	uctx := context.WithoutCancel(ctx)
	send := func(u sdk.SessionUpdate) {
		if err := a.conn.SessionUpdate(uctx, sdk.SessionNotification{SessionId: p.SessionId, Update: u}); err != nil {
			a.opts.Log.Warn("acp: session/update", "err", err)
		}
	}
	var (
		wg      sync.WaitGroup
		lastMu  sync.Mutex
		current client.ToolEvent // the running tool call, for approvals
		stop    string
	)
	a.mu.Lock()
	ctools, hide := editorTools(a.caps, a.opts.Remote) // clienttools.go
	a.mu.Unlock()
	req := client.ChatRequest{Session: s.id, Input: in, Channel: Channel, Attachments: atts, ClientTools: ctools, HideTools: hide}
	_, err = a.k.Chat(ctx, req, func(ev client.ChatEvent) {
		switch ev.Type {
		case client.EventTurn:
			s.mu.Lock()
			s.turn = ev.TurnID
			s.mu.Unlock()
		case client.EventDelta:
			if ev.Text != "" {
				send(sdk.UpdateAgentMessageText(ev.Text))
			}
		case client.EventReasoning:
			if ev.Text != "" {
				send(sdk.UpdateAgentThoughtText(ev.Text))
			}
		case client.EventToolCall:
			if ev.Tool != nil {
				lastMu.Lock()
				current = *ev.Tool
				lastMu.Unlock()
				send(startTool(*ev.Tool))
			}
		case client.EventToolResult:
			if ev.Tool != nil {
				send(endTool(*ev.Tool))
			}
		case client.EventToolRequest: // a call of the editor's own tools: run it there, answer the kernel
			if ev.Tool != nil {
				tool, turn := *ev.Tool, ev.TurnID
				wg.Add(1)
				go func() {
					defer wg.Done()
					ans := a.runEditorTool(ctx, s, p.SessionId, tool)
					if err := a.k.AnswerToolCall(uctx, turn, tool.ID, ans); err != nil && !errors.Is(err, client.ErrNotFound) {
						a.opts.Log.Warn("acp: answer tool call", "tool", tool.Name, "err", err)
					}
				}()
			}
		case client.EventApproval:
			if ev.Approval != nil && ev.Approval.State == client.ApprovalPending {
				lastMu.Lock()
				tool := current
				lastMu.Unlock()
				ap := *ev.Approval
				wg.Add(1)
				go func() { defer wg.Done(); a.askPermission(ctx, s, p.SessionId, tool, ap) }()
			}
		case client.EventFinal:
			stop = ev.Stop
		}
	})
	wg.Wait()
	s.mu.Lock()
	s.turn = ""
	s.mu.Unlock()
	if ctx.Err() != nil {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	if err != nil {
		var te *client.TurnError
		if errors.As(err, &te) && strings.Contains(te.Message, "cancelled") {
			return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
		}
		return sdk.PromptResponse{}, fmt.Errorf("turn: %w", err)
	}
	if w, err := a.k.Window(uctx, s.id); err == nil && w.Budget > 0 {
		send(sdk.SessionUpdate{UsageUpdate: &sdk.SessionUsageUpdate{SessionUpdate: "usage_update", Used: w.Used, Size: w.Budget}})
	}
	return sdk.PromptResponse{StopReason: stopReason(stop)}, nil
}

// approvalKind names a kind of approval for the "always" rules: the plugin and its title.
func approvalKind(ap client.Approval) string { return ap.Plugin + ": " + ap.Title }

// askPermission answers one approval: by a kept rule of the project, else by asking the editor.
func (a *Agent) askPermission(ctx context.Context, s *session, sid sdk.SessionId, tool client.ToolEvent, ap client.Approval) {
	actx := context.WithoutCancel(ctx)
	title := ap.Title
	if ap.Detail != "" {
		title += ": " + ap.Detail
	}
	id := tool.ID
	if id == "" {
		id = ap.ID
	}
	decision := a.decide(ctx, s, sid, id, tool.Name, approvalKind(ap), title)
	if _, err := a.k.AnswerApproval(actx, ap.ID, decision == Allow); err != nil && !errors.Is(err, client.ErrNotFound) {
		a.opts.Log.Warn("acp: answer approval", "id", ap.ID, "err", err)
	}
}

// decide returns Allow or Reject for one action of a kind: by a kept rule of the project, else by
// asking the editor (session/request_permission); "always" answers are kept.
func (a *Agent) decide(ctx context.Context, s *session, sid sdk.SessionId, id, toolName, kind, title string) string {
	decision, err := a.perms.Lookup(s.cwd, kind)
	if err != nil {
		a.opts.Log.Warn("acp: permissions", "err", err)
	}
	if decision == "" {
		pending := sdk.ToolCallStatusPending
		resp, err := a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
			SessionId: sid,
			ToolCall:  sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(id), Title: &title, Status: &pending, Kind: sdk.Ptr(toolKind(toolName))},
			Options: []sdk.PermissionOption{
				{OptionId: optAllowOnce, Name: "Allow once", Kind: sdk.PermissionOptionKindAllowOnce},
				{OptionId: optAllowAlways, Name: "Always allow in this project", Kind: sdk.PermissionOptionKindAllowAlways},
				{OptionId: optRejectOnce, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
				{OptionId: optRejectAlways, Name: "Always reject in this project", Kind: sdk.PermissionOptionKindRejectAlways},
			},
		})
		switch {
		case err != nil || resp.Outcome.Selected == nil: // cancelled, or the editor failed: a denial
			decision = Reject
		default:
			switch resp.Outcome.Selected.OptionId {
			case optAllowOnce:
				decision = Allow
			case optAllowAlways:
				decision = Allow
				if err := a.perms.Set(s.cwd, kind, Allow); err != nil {
					a.opts.Log.Warn("acp: permissions", "err", err)
				}
			case optRejectAlways:
				decision = Reject
				if err := a.perms.Set(s.cwd, kind, Reject); err != nil {
					a.opts.Log.Warn("acp: permissions", "err", err)
				}
			default:
				decision = Reject
			}
		}
	}
	return decision
}

// toolKind guesses the ACP kind of a tool from its name.
func toolKind(name string) sdk.ToolKind {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "shell") || strings.Contains(n, "run") || strings.Contains(n, "exec"):
		return sdk.ToolKindExecute
	case strings.Contains(n, "write") || strings.Contains(n, "edit"):
		return sdk.ToolKindEdit
	case strings.Contains(n, "delete") || strings.Contains(n, "remove"):
		return sdk.ToolKindDelete
	case strings.Contains(n, "search") || strings.Contains(n, "query") || strings.Contains(n, "find"):
		return sdk.ToolKindSearch
	case strings.Contains(n, "read") || strings.Contains(n, "list") || strings.Contains(n, "get"):
		return sdk.ToolKindRead
	case strings.Contains(n, "fetch") || strings.Contains(n, "web") || strings.Contains(n, "http"):
		return sdk.ToolKindFetch
	}
	return sdk.ToolKindOther
}

// startTool is the tool_call update of a call that starts.
func startTool(t client.ToolEvent) sdk.SessionUpdate {
	opts := []sdk.ToolCallStartOpt{sdk.WithStartKind(toolKind(t.Name)), sdk.WithStartStatus(sdk.ToolCallStatusInProgress)}
	if t.Arguments != "" {
		opts = append(opts, sdk.WithStartRawInput(rawJSON(t.Arguments)))
	}
	return sdk.StartToolCall(sdk.ToolCallId(t.ID), t.Name, opts...)
}

// endTool is the tool_call_update of a call that ended.
func endTool(t client.ToolEvent) sdk.SessionUpdate {
	status := sdk.ToolCallStatusCompleted
	if t.Status != "" && t.Status != "ok" {
		status = sdk.ToolCallStatusFailed
	}
	text := t.Result
	if len(text) > maxToolText {
		text = text[:maxToolText] + "\n… (cut: the whole result is in the session's history)"
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status)}
	if text != "" {
		opts = append(opts, sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text))}))
	}
	if t.Status != "" {
		opts = append(opts, sdk.WithUpdateRawOutput(map[string]any{"status": t.Status}))
	}
	return sdk.UpdateToolCall(sdk.ToolCallId(t.ID), opts...)
}

// rawJSON is s as a JSON value when it is one, else the string.
func rawJSON(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	return v
}
