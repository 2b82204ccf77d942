package gui

import (
	"errors"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// chatRetry is how a failed turn is tried again: its input and attachments sent once more, or
// (input "", a turn never sent) the draft that was given back.
type chatRetry struct {
	input string
	atts  []client.File
}

// ErrChatNoRetry says the message cannot be retried (not an error, or not a turn's).
var ErrChatNoRetry = errors.New("nothing to retry")

// CanRetry reports whether the message at index of the current session is an error that
// [ChatVM.Retry] can try again.
func (vm *ChatVM) CanRetry(index int) bool {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	s := vm.sess(vm.current)
	return index >= 0 && index < len(s.msgs) && s.msgs[index].Role == ChatRoleError && s.msgs[index].retry != nil
}

// Retry tries the failed turn of the error at index again: the error (and the question
// before it, which the new turn shows again) leaves the messages and the turn is sent as
// [ChatVM.Send] sends. What the owner is typing stays in the input. It returns at once, like
// Send.
func (vm *ChatVM) Retry(index int) error {
	vm.mu.Lock()
	s := vm.sess(vm.current)
	if s.turn != nil {
		vm.mu.Unlock()
		return ErrChatBusy
	}
	if index < 0 || index >= len(s.msgs) || s.msgs[index].Role != ChatRoleError || s.msgs[index].retry == nil {
		vm.mu.Unlock()
		return ErrChatNoRetry
	}
	r := s.msgs[index].retry
	from := index
	if r.input != "" && index > 0 && s.msgs[index-1].Role == ChatRoleUser && s.msgs[index-1].Text == strings.TrimSpace(r.input) {
		from = index - 1
	}
	s.msgs = append(s.msgs[:from:from], s.msgs[index+1:]...)
	keepDraft, keepAtts := s.draft, s.atts
	if r.input != "" {
		s.draft, s.atts = r.input, r.atts
	}
	id := vm.current
	vm.mu.Unlock()
	vm.notify(ChatChange{Kind: ChatMessagesChanged, Session: id})

	err := vm.Send()
	if r.input != "" {
		vm.mu.Lock()
		s := vm.sess(id)
		s.draft, s.atts = keepDraft, keepAtts
		vm.mu.Unlock()
		vm.notify(ChatChange{Kind: ChatDraftChanged, Session: id}, ChatChange{Kind: ChatAttachmentsChanged, Session: id})
	}
	return err
}

// chatAdvice turns a turn's error into what happened and what to do, for people; the error
// itself stays available as the detail.
// sent is false for a turn the kernel never accepted.
func chatAdvice(errText string, sent bool) (what, next string) {
	e := strings.ToLower(errText)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(e, w) {
				return true
			}
		}
		return false
	}
	switch {
	case !sent:
		return T("The message was not sent."), T("Your text is back in the input; retry when the kernel is reachable.")
	case has("no provider"):
		return T("No model provider is set up."), T("Add one in Settings → Providers (any OpenAI-compatible server), then retry.")
	case has("connection refused", "no such host", "dial tcp", "network is unreachable", "connection reset"):
		return T("The model provider could not be reached."), T("Check that its server is running and that its base URL in Settings → Providers is right, then retry.")
	case has("timeout", "deadline exceeded", "timed out"):
		return T("The model provider took too long to answer."), T("Retry; if it keeps happening, the server may be overloaded or the network slow.")
	case has("http 401", "http 403", "unauthorized", "invalid api key", "incorrect api key", "forbidden"):
		return T("The model provider refused the API key."), T("Check the key in Settings → Providers (Edit, then enter it again), then retry.")
	case has("http 404", "model_not_found", "does not exist", "unknown model", "model not found"):
		return T("The model provider does not know the model."), T("Check the model name in Settings → Providers or in this session's instructions, then retry.")
	case has("http 429", "rate limit", "quota"):
		return T("The model provider is limiting requests."), T("Wait a moment and retry; check your plan's quota if it keeps happening.")
	case has("http 5", "bad gateway", "service unavailable", "internal server error"):
		return T("The model provider had an error."), T("Retry in a moment; if it keeps happening, add another provider as a fallback.")
	}
	return T("The reply failed."), T("Retry; the details say what went wrong.")
}
