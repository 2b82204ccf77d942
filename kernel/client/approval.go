package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// ApprovalService is the owner's side of approvals: plugins (the shell plugin, for every
// command) ask the owner before they act, and only the owner's own clients answer — the
// desktop, waiter, the token API. Nothing that arrives on a channel can answer. Part of
// [Service]. Safe for concurrent use.
type ApprovalService interface {
	// Approvals lists the pending approvals, oldest first.
	Approvals(ctx context.Context) ([]Approval, error)
	// AnswerApproval approves (approve true) or denies a pending approval and returns it as
	// answered; ErrNotFound when no approval of that id is pending (answered, expired or never
	// asked).
	AnswerApproval(ctx context.Context, id string, approve bool) (Approval, error)
}

// Approval states.
const (
	ApprovalPending   = "pending"
	ApprovalApproved  = "approved"
	ApprovalDenied    = "denied"
	ApprovalExpired   = "expired"   // no answer within the timeout: a denial
	ApprovalCancelled = "cancelled" // the plugin stopped waiting (its call ended): a denial
)

// Approval is a plugin's request for the owner's approval. TurnID, Session, Channel, Partner
// and Scope say which turn asked (empty when the plugin asked outside a turn): an approval asked
// in a channel's turn (a QQ group, say) is still answered by the owner only.
type Approval struct {
	ID      string    `json:"id"`
	Plugin  string    `json:"plugin"`
	Title   string    `json:"title"`
	Detail  string    `json:"detail,omitempty"`
	TurnID  string    `json:"turn_id,omitempty"`
	Session string    `json:"session,omitempty"`
	Channel string    `json:"channel,omitempty"`
	Partner string    `json:"partner,omitempty"`
	Scope   string    `json:"scope,omitempty"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	State   string    `json:"state"` // pending, approved, denied, expired or cancelled
}

// Approvals lists the pending approvals (GET /api/v1/approvals).
func (c *HTTP) Approvals(ctx context.Context) ([]Approval, error) {
	var out struct {
		Approvals []Approval `json:"approvals"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/approvals", nil, &out)
	return out.Approvals, err
}

// AnswerApproval approves or denies a pending approval (POST /api/v1/approvals/{id}
// {"approve": bool}).
func (c *HTTP) AnswerApproval(ctx context.Context, id string, approve bool) (Approval, error) {
	if id == "" {
		return Approval{}, fmt.Errorf("answer approval: empty id: %w", ErrInvalid)
	}
	var out Approval
	err := c.do(ctx, http.MethodPost, "/api/v1/approvals/"+url.PathEscape(id), struct {
		Approve bool `json:"approve"`
	}{approve}, &out)
	return out, err
}

var _ Service = (*HTTP)(nil)
