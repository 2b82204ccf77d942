package gui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// Branches in the chat: Regenerate answers a reply's question again and Edit resends a user
// message changed; either starts a sibling branch in the kernel, and the old one stays,
// browsable with SwitchBranch (‹1/2›).

// Regenerate answers again the question of assistant message i (a new branch; the old reply is
// kept). It returns at once; ErrChatBusy while a turn runs.
func (vm *ChatVM) Regenerate(i int) error {
	vm.mu.Lock()
	s := vm.sess(vm.current)
	if i < 0 || i >= len(s.msgs) || s.msgs[i].Role != ChatRoleAssistant || s.msgs[i].ID == 0 {
		vm.mu.Unlock()
		return fmt.Errorf("%s: %w", T("Only a stored reply can be regenerated"), client.ErrInvalid)
	}
	id := s.msgs[i].ID
	vm.mu.Unlock()
	return vm.branchTurn(client.ChatRequest{Regenerate: id}, i, nil)
}

// Edit replaces user message i by text and sends it again (a new branch; the old message and
// its reply are kept). It returns at once; ErrChatBusy while a turn runs.
func (vm *ChatVM) Edit(i int, text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return ErrChatEmpty
	}
	vm.mu.Lock()
	s := vm.sess(vm.current)
	if i < 0 || i >= len(s.msgs) || s.msgs[i].Role != ChatRoleUser || s.msgs[i].ID == 0 {
		vm.mu.Unlock()
		return fmt.Errorf("%s: %w", T("Only a stored message can be edited"), client.ErrInvalid)
	}
	id := s.msgs[i].ID
	vm.mu.Unlock()
	return vm.branchTurn(client.ChatRequest{Edit: id, Input: text}, i, &ChatMessage{Role: ChatRoleUser, Text: text, Time: time.Now()})
}

// SwitchBranch shows the sibling delta steps away (-1: ‹, +1: ›) of message i's branch.
func (vm *ChatVM) SwitchBranch(ctx context.Context, i, delta int) error {
	vm.mu.Lock()
	id := vm.current
	s := vm.sess(id)
	if s.turn != nil {
		vm.mu.Unlock()
		return ErrChatBusy
	}
	if i < 0 || i >= len(s.msgs) || s.msgs[i].Branch == nil {
		vm.mu.Unlock()
		return fmt.Errorf("%s: %w", T("This message has no other branch"), client.ErrInvalid)
	}
	b := s.msgs[i].Branch
	to := b.Index - 1 + delta
	vm.mu.Unlock()
	if to < 0 || to >= len(b.Siblings) {
		return nil // at the first or the last
	}
	if err := vm.svc.SwitchBranch(ctx, id, b.Siblings[to]); err != nil {
		err = fmt.Errorf("%s: %w", T("Could not switch the branch"), err)
		vm.setErr(err)
		return err
	}
	return vm.loadHistory(ctx, id)
}

// branchTurn runs a regenerate or an edit: the messages from keep on are replaced by the new
// user message (an edit) and the streamed reply; at the end the history is read again, with
// the new branch marks.
func (vm *ChatVM) branchTurn(req client.ChatRequest, keep int, user *ChatMessage) error {
	vm.mu.Lock()
	id := vm.current
	s := vm.sess(id)
	if s.turn != nil {
		vm.mu.Unlock()
		return ErrChatBusy
	}
	req.Session, req.Channel, req.ClientTools = id, vm.opts.Channel, vm.clientToolsLocked(id)
	ctx, cancel := context.WithCancel(context.Background())
	s.msgs = append([]ChatMessage(nil), s.msgs[:keep]...)
	if user != nil {
		s.msgs = append(s.msgs, *user)
	}
	t := &chatTurn{cancel: cancel, msg: len(s.msgs)}
	s.msgs = append(s.msgs, ChatMessage{Role: ChatRoleAssistant, Streaming: true, Time: time.Now()})
	s.turn = t
	vm.wg.Add(1)
	vm.mu.Unlock()
	vm.notify(ChatChange{Kind: ChatMessagesChanged, Session: id}, ChatChange{Kind: ChatBusyChanged, Session: id})
	go func() {
		defer vm.wg.Done()
		defer cancel()
		_, err := vm.svc.Chat(ctx, req, func(ev client.ChatEvent) { vm.apply(id, t, ev) })
		vm.mu.Lock()
		vm.sess(id).turn = nil
		vm.mu.Unlock()
		if err != nil && !t.stopped {
			vm.setErr(fmt.Errorf("%s: %s", T("The new branch failed"), chatErrText(err)))
		}
		lctx, lcancel := context.WithTimeout(context.Background(), chatCallTimeout)
		defer lcancel()
		_ = vm.loadHistory(lctx, id) // errors: the banner at the next load
		vm.notify(ChatChange{Kind: ChatBusyChanged, Session: id})
		vm.refreshSessions()
	}()
	return nil
}

// refreshIDs reads a session's history again after a turn and gives the shown messages their
// stored ids (what regenerate, edit and branches need), branch marks and usage, matching them
// from the newest back; nothing shown is replaced or removed (an error card stays).
func (vm *ChatVM) refreshIDs(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), chatCallTimeout)
	defer cancel()
	page, err := vm.svc.HistoryPage(ctx, client.HistoryQuery{Session: id, Limit: chatHistoryLimit})
	if err != nil {
		return // the streamed messages stay as they are, without ids
	}
	stored := chatFromHistory(page.Messages)
	vm.mu.Lock()
	s := vm.sess(id)
	if s.turn != nil {
		vm.mu.Unlock()
		return
	}
	var changed []ChatChange
	j := len(stored) - 1
	for i := len(s.msgs) - 1; i >= 0 && j >= 0; i-- {
		m := &s.msgs[i]
		if m.Role == ChatRoleError {
			continue
		}
		if m.Role != stored[j].Role {
			break
		}
		m.ID, m.Branch, m.Usage, m.Model = stored[j].ID, stored[j].Branch, stored[j].Usage, stored[j].Model
		changed = append(changed, ChatChange{Kind: ChatMessageChanged, Session: id, Index: i})
		j--
	}
	vm.mu.Unlock()
	vm.notify(changed...)
}

// chatUsageText is a reply's usage as the chat shows it, e.g. "42 → 7 tokens · 9.8 tokens/s ·
// 0.7 s · fake-1".
func chatUsageText(u *client.Usage, model string) string {
	if u == nil {
		return ""
	}
	parts := []string{Tf("%d → %d tokens", u.PromptTokens, u.CompletionTokens)}
	if tps := u.TokensPerSecond(); tps > 0 {
		parts = append(parts, Tf("%.1f tokens/s", tps))
	}
	if u.Millis < 1000 {
		parts = append(parts, fmt.Sprintf("%d ms", u.Millis))
	} else {
		parts = append(parts, fmt.Sprintf("%.1f s", float64(u.Millis)/1000))
	}
	if model != "" {
		parts = append(parts, model)
	}
	return strings.Join(parts, " · ")
}

// newBranchControls makes a bubble's branch switch, Edit, Regenerate and usage line.
func (b *chatBubble) newBranchControls() {
	v := b.v
	step := func(delta int) func() {
		return func() {
			i := b.index
			v.vm.Go(func() { _ = v.vm.SwitchBranch(context.Background(), i, delta) }) // errors: the banner
		}
	}
	b.prev = widget.NewButtonWithIcon("", theme.NavigateBackIcon(), step(-1))
	b.next = widget.NewButtonWithIcon("", theme.NavigateNextIcon(), step(+1))
	b.branch = widget.NewLabel("")
	b.edit = widget.NewButtonWithIcon("", theme.DocumentCreateIcon(), func() { v.askEdit(b.index) })
	b.regen = widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), func() {
		if err := v.vm.Regenerate(b.index); err != nil && !errors.Is(err, ErrChatBusy) {
			dialog.ShowError(err, v.w)
		}
	})
	for _, w := range []*widget.Button{b.prev, b.next, b.edit, b.regen} {
		w.Importance = widget.LowImportance
	}
	b.usage = widget.NewLabel("")
	b.usage.Importance = widget.LowImportance
	b.usage.Hide()
}

// renderBranch shows m's branch switch (where branches part), Edit (a stored user message),
// Regenerate (a stored, finished reply) and usage.
func (b *chatBubble) renderBranch(m ChatMessage) {
	busy := b.v.vm.Busy()
	hasBranch := m.Branch != nil && m.Branch.Count > 1
	if hasBranch {
		b.branch.SetText(fmt.Sprintf("%d/%d", m.Branch.Index, m.Branch.Count))
		chatEnable(b.prev, m.Branch.Index > 1 && !busy)
		chatEnable(b.next, m.Branch.Index < m.Branch.Count && !busy)
	}
	for _, o := range []fyne.CanvasObject{b.prev, b.branch, b.next} {
		chatShowIf(o, hasBranch)
	}
	chatShowIf(b.edit, m.Role == ChatRoleUser && m.ID != 0)
	chatShowIf(b.regen, m.Role == ChatRoleAssistant && m.ID != 0 && !m.Streaming)
	chatShowIf(b.speak, m.Role == ChatRoleAssistant && !m.Streaming && m.Text != "" && b.v.vm.CanSpeak())
	chatEnable(b.edit, !busy)
	chatEnable(b.regen, !busy)
	b.usage.SetText(chatUsageText(m.Usage, m.Model))
	chatShowIf(b.usage, m.Usage != nil && !m.Streaming)
}

func chatEnable(w fyne.Disableable, on bool) {
	if on {
		w.Enable()
	} else {
		w.Disable()
	}
}

// askEdit asks for message i's new text and resends it as a new branch.
func (v *chatView) askEdit(i int) {
	m, ok := v.vm.Message(i)
	if !ok {
		return
	}
	e := widget.NewMultiLineEntry()
	e.Wrapping = fyne.TextWrapWord
	e.SetText(m.Text)
	e.SetMinRowsVisible(4)
	d := dialog.NewForm(T("Edit message"), T("Send"), T("Cancel"), []*widget.FormItem{widget.NewFormItem("", e)}, func(ok bool) {
		if !ok {
			return
		}
		if err := v.vm.Edit(i, e.Text); err != nil && !errors.Is(err, ErrChatEmpty) && !errors.Is(err, ErrChatBusy) {
			dialog.ShowError(err, v.w)
		}
	}, v.w)
	d.Resize(fyne.NewSize(520, 260))
	d.Show()
}
