package sdk

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// Approval asks the owner to approve an action (see [Kernel.Approve]).
type Approval struct {
	// Title says what the plugin wants to do, e.g. "Run a command".
	Title string
	// Detail says exactly what: the command line, the working directory.
	Detail string
	// Timeout, when set, shortens the kernel's approval timeout (it never lengthens it).
	Timeout time.Duration
}

// Approve asks the owner to approve an action and waits for the answer (capability
// "approve"). The request carries the turn ctx belongs to (a tool call's), so the owner sees
// where it comes from; only the owner's own clients can answer, never a channel. A denial,
// including no answer within the timeout, is a result with Approved false and the reason, not
// an error; errors are refusals of the request itself (bad input, missing capability) and a
// ctx that ended.
func (k *Kernel) Approve(ctx context.Context, a Approval) (protocol.ApproveResult, error) {
	if strings.TrimSpace(a.Title) == "" {
		return protocol.ApproveResult{}, errors.New("owner/approve: the title is empty")
	}
	if a.Timeout < 0 {
		return protocol.ApproveResult{}, errors.New("owner/approve: negative timeout")
	}
	turn, _ := TurnFrom(ctx)
	p := protocol.ApproveParams{Turn: turn, Title: a.Title, Detail: a.Detail}
	if a.Timeout > 0 {
		p.TimeoutMS = max(1, int(a.Timeout/time.Millisecond))
	}
	var res protocol.ApproveResult
	err := k.call(ctx, protocol.MethodOwnerApprove, p, &res)
	return res, err
}
