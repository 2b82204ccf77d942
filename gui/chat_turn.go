package gui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// Sending a message and following its turn: the stream's events applied to the chat, uploads'
// progress, stopping.

// Send sends the current session's draft and pending attachments as one turn, streamed into
// the messages: the user message at once, then the reply as it grows. It returns at once;
// [ErrChatEmpty] and [ErrChatBusy] say nothing was sent. A turn that fails before the kernel
// accepts it gives back the draft and attachments and shows the error; a failure later shows it
// after the partial reply.
func (vm *ChatVM) Send() error {
	vm.mu.Lock()
	id := vm.current
	s := vm.sess(id)
	input := strings.TrimSpace(s.draft)
	switch {
	case s.turn != nil:
		vm.mu.Unlock()
		return ErrChatBusy
	case input == "" && len(s.atts) == 0:
		vm.mu.Unlock()
		return ErrChatEmpty
	}
	shown := input
	if input == "" {
		names := make([]string, len(s.atts))
		for i, a := range s.atts {
			names[i] = a.Name
		}
		shown = "[" + strings.Join(names, ", ") + "]"
		if !slices.ContainsFunc(s.atts, func(a client.File) bool { return a.Kind == "audio" }) {
			input = shown // a voice message is sent without text: the kernel makes its transcript the message
		}
	}
	req := client.ChatRequest{Session: id, Input: input, Channel: vm.opts.Channel, ClientTools: vm.clientToolsLocked(id)}
	draft, atts := s.draft, s.atts
	user := ChatMessage{Role: ChatRoleUser, Text: shown, Time: time.Now()}
	for _, a := range atts {
		user.Attachments = append(user.Attachments, chatAttachmentView(a))
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &chatTurn{cancel: cancel, msg: len(s.msgs) + 1}
	s.msgs = append(s.msgs, user, ChatMessage{Role: ChatRoleAssistant, Streaming: true, Time: time.Now()})
	s.draft, s.atts, s.turn = "", nil, t
	vm.wg.Add(1)
	vm.mu.Unlock()

	vm.trace("message", TraceMessage{Role: ChatRoleUser, Text: shown})
	vm.notify(
		ChatChange{Kind: ChatMessageAdded, Session: id, Index: t.msg - 1},
		ChatChange{Kind: ChatMessageAdded, Session: id, Index: t.msg},
		ChatChange{Kind: ChatDraftChanged, Session: id},
		ChatChange{Kind: ChatAttachmentsChanged, Session: id},
		ChatChange{Kind: ChatBusyChanged, Session: id},
	)
	go func() {
		defer vm.wg.Done()
		vm.runTurn(ctx, id, t, req, draft, atts)
	}()
	return nil
}

// runTurn streams one turn into session id's messages and ends it.
func (vm *ChatVM) runTurn(ctx context.Context, id string, t *chatTurn, req client.ChatRequest, draft string, atts []client.File) {
	defer t.cancel()
	var res client.ChatResult
	var err error
	// Videos and large files stream to the kernel first; a failure there is a turn never sent.
	if req.Attachments, err = client.UploadFiles(ctx, vm.svc, atts, func(p client.UploadProgress) { vm.uploading(id, t, p) }); err == nil {
		vm.uploading(id, t, client.UploadProgress{})
		res, err = vm.svc.Chat(ctx, req, func(ev client.ChatEvent) { vm.apply(id, t, ev) })
	}

	vm.mu.Lock()
	s := vm.sess(id)
	s.turn = nil
	var changes []ChatChange
	var traced []TraceMessage
	var errText string
	reply := &s.msgs[t.msg]
	reply.Streaming = false
	switch {
	case err == nil:
		if res.Text != "" {
			reply.Text = res.Text
		}
		reply.TurnID, reply.Usage = res.TurnID, res.Usage
		traced = append(traced, TraceMessage{Role: ChatRoleAssistant, Text: reply.Text})
		changes = append(changes, ChatChange{Kind: ChatMessageChanged, Session: id, Index: t.msg})
	case t.stopped:
		reply.Stopped = true
		changes = append(changes, ChatChange{Kind: ChatMessageChanged, Session: id, Index: t.msg})
	case !t.started:
		// Not sent: take the messages back, give the draft back (before what was typed since).
		s.msgs = s.msgs[:t.msg-1]
		if strings.TrimSpace(s.draft) == "" {
			s.draft = draft
		} else {
			s.draft = draft + "\n" + s.draft
		}
		s.atts = append(atts, s.atts...)
		if len(s.atts) > client.MaxAttachments {
			s.atts = s.atts[:client.MaxAttachments]
		}
		errText = Tf("Not sent: %s", chatErrText(err))
		s.msgs = append(s.msgs, ChatMessage{Role: ChatRoleError, Text: errText, Time: time.Now(), retry: &chatRetry{}})
		changes = append(changes,
			ChatChange{Kind: ChatMessagesChanged, Session: id},
			ChatChange{Kind: ChatDraftChanged, Session: id},
			ChatChange{Kind: ChatAttachmentsChanged, Session: id})
	default:
		if reply.Text == "" && len(reply.Tools) == 0 {
			s.msgs = s.msgs[:t.msg]
		}
		errText = chatErrText(err)
		s.msgs = append(s.msgs, ChatMessage{Role: ChatRoleError, Text: errText, TurnID: t.id, Time: time.Now(),
			retry: &chatRetry{input: req.Input, atts: atts}})
		changes = append(changes, ChatChange{Kind: ChatMessagesChanged, Session: id})
	}
	vm.mu.Unlock()

	for _, m := range traced {
		vm.trace("message", m)
	}
	if errText != "" {
		vm.trace("error", errText)
	}
	changes = append(changes, ChatChange{Kind: ChatBusyChanged, Session: id})
	vm.notify(changes...)
	if t.started {
		vm.refreshSessions()
	}
	if err == nil {
		vm.refreshIDs(id) // the stored ids, for regenerate, edit and branches
	}
}

// chatErrText is how an error of a turn reads in the chat.
func chatErrText(err error) string {
	var te *client.TurnError
	if errors.As(err, &te) {
		return te.Message
	}
	return err.Error()
}

// refreshSessions re-reads the sessions list (their order changes as they are used).
func (vm *ChatVM) refreshSessions() {
	if vm.opts.Quick {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), chatCallTimeout)
	defer cancel()
	list, err := vm.svc.Sessions(ctx)
	if err != nil {
		return // shown by the next load; the turn itself went through
	}
	vm.mu.Lock()
	vm.sessions = list
	vm.mu.Unlock()
	vm.notify(ChatChange{Kind: ChatSessionsChanged})
}

// apply folds one event of a running turn into its reply.
func (vm *ChatVM) apply(id string, t *chatTurn, ev client.ChatEvent) {
	vm.mu.Lock()
	reply := &vm.sess(id).msgs[t.msg]
	changed := true
	switch ev.Type {
	case client.EventTurn:
		t.id, t.started = ev.TurnID, true
		reply.TurnID = ev.TurnID
		changed = false
	case client.EventDelta:
		reply.Text += ev.Text
	case client.EventToolCall, client.EventToolResult, client.EventToolRequest:
		if ev.Tool == nil {
			changed = false
			break
		}
		if ev.Type == client.EventToolRequest && ev.Tool.Name == screenshotTool && vm.opts.Screenshot != nil {
			turn := ev.TurnID
			if turn == "" {
				turn = t.id
			}
			vm.wg.Add(1)
			go vm.answerScreenshot(turn, ev.Tool.ID)
		}
		chatSetTool(reply, ChatTool{ID: ev.Tool.ID, Name: ev.Tool.Name, Arguments: ev.Tool.Arguments,
			Result: ev.Tool.Result, Status: ev.Tool.Status})
	case client.EventFinal:
		reply.Text = ev.Text
	case client.EventNotice:
		reply.Notes = append(reply.Notes, ev.Text)
	case client.EventTranscript: // the voice message's words, in place of its name
		if user := &vm.sess(id).msgs[t.msg-1]; user.Role == ChatRoleUser {
			user.Text = ev.Text
		}
		vm.mu.Unlock()
		vm.notify(ChatChange{Kind: ChatMessageChanged, Session: id, Index: t.msg - 1})
		return
	default: // reasoning is not shown; errors end the turn in runTurn
		changed = false
	}
	vm.mu.Unlock()
	if changed {
		vm.notify(ChatChange{Kind: ChatMessageChanged, Session: id, Index: t.msg})
	}
}

// uploading shows a streamed attachment's progress on the turn's reply (a zero p clears it).
func (vm *ChatVM) uploading(id string, t *chatTurn, p client.UploadProgress) {
	text := ""
	if p.Name != "" {
		text = Tf("Uploading %s: %d %%", p.Name, p.Percent())
	}
	vm.mu.Lock()
	reply := &vm.sess(id).msgs[t.msg]
	changed := reply.Uploading != text
	reply.Uploading = text
	vm.mu.Unlock()
	if changed {
		vm.notify(ChatChange{Kind: ChatMessageChanged, Session: id, Index: t.msg})
	}
}

// Stop cancels the current session's running turn: the kernel is asked to cancel it (once its
// ID is known) and the stream is closed.
func (vm *ChatVM) Stop() {
	vm.mu.Lock()
	t := vm.sess(vm.current).turn
	if t == nil || t.stopped {
		vm.mu.Unlock()
		return
	}
	t.stopped = true
	turnID := t.id
	vm.wg.Add(1)
	vm.mu.Unlock()
	go func() {
		defer vm.wg.Done()
		defer t.cancel()
		if turnID == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), chatCallTimeout)
		defer cancel()
		_ = vm.svc.Cancel(ctx, turnID) // ErrNotFound: it just ended; other errors: the stream is closed anyway
	}()
}
