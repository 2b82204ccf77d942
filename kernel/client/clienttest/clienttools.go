package clienttest

import (
	"context"
	"net/http"
	"sync"

	"github.com/hologramagent/hologram/kernel/client"
)

// fakeClientTools are the answers of client-executed tools' calls (POST
// /api/v1/turns/{id}/tools/{call}), handed to a [ChatFunc] that waits for them.
type fakeClientTools struct {
	mu      sync.Mutex
	answers map[string]chan client.ToolAnswer // by turn and call
}

func (c *fakeClientTools) ch(turn, call string) chan client.ToolAnswer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers == nil {
		c.answers = map[string]chan client.ToolAnswer{}
	}
	k := turn + "\x00" + call
	if c.answers[k] == nil {
		c.answers[k] = make(chan client.ToolAnswer, 1)
	}
	return c.answers[k]
}

// WaitToolAnswer waits for the client's answer to call of turn, as the kernel's client tool
// does after a "tool_request" event: for a [ChatFunc] that sent one. It fails when ctx ends.
func (f *Fake) WaitToolAnswer(ctx context.Context, turnID, callID string) (client.ToolAnswer, error) {
	select {
	case a := <-f.clientTools.ch(turnID, callID):
		return a, nil
	case <-ctx.Done():
		return client.ToolAnswer{}, ctx.Err()
	}
}

// answerToolCall is POST /api/v1/turns/{id}/tools/{call}: 204, or 404 when an answer to that
// call is waiting already (as the kernel, where nothing waits any more after the first).
func (f *Fake) answerToolCall(w http.ResponseWriter, body []byte, turnID, callID string) {
	var a client.ToolAnswer
	if !decode(w, body, &a) {
		return
	}
	select {
	case f.clientTools.ch(turnID, callID) <- a:
		w.WriteHeader(http.StatusNoContent)
	default:
		WriteError(w, http.StatusNotFound, "no client tool call waits for this answer")
	}
}
