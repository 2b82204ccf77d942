package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
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

// ApprovalCredentialHeader carries a client's approval credential on POST
// /api/v1/approvals/{id}: only the owner's clients holding one answer approvals, never a bare
// connection to the socket.
const ApprovalCredentialHeader = "X-Hologram-Approval-Credential"

// ApprovalCredential is the answer of POST /api/v1/approvals/credential.
type ApprovalCredential struct {
	Client     string `json:"client"`
	Credential string `json:"credential"`
}

// AnswerApproval approves or denies a pending approval (POST /api/v1/approvals/{id}
// {"approve": bool}) with this client's approval credential, which it asks for on first use
// (POST /api/v1/approvals/credential) and again once if the kernel no longer knows it (a
// restarted kernel).
func (c *HTTP) AnswerApproval(ctx context.Context, id string, approve bool) (Approval, error) {
	if id == "" {
		return Approval{}, fmt.Errorf("answer approval: empty id: %w", ErrInvalid)
	}
	var out Approval
	for attempt := 0; ; attempt++ {
		cred, err := c.approvalCredential(ctx, attempt > 0)
		if err != nil {
			return Approval{}, err
		}
		err = c.doHeader(ctx, http.MethodPost, "/api/v1/approvals/"+url.PathEscape(id), http.Header{ApprovalCredentialHeader: {cred}}, struct {
			Approve bool `json:"approve"`
		}{approve}, &out)
		var e *Error
		if attempt == 0 && errors.As(err, &e) && e.Status == http.StatusForbidden && strings.Contains(e.Message, "unknown approval credential") {
			continue
		}
		return out, err
	}
}

// approvalCredential returns the client's approval credential, asking the kernel for one when
// it has none or renew is set.
func (c *HTTP) approvalCredential(ctx context.Context, renew bool) (string, error) {
	c.credMu.Lock()
	defer c.credMu.Unlock()
	if c.cred != "" && !renew {
		return c.cred, nil
	}
	var out ApprovalCredential
	if err := c.do(ctx, http.MethodPost, "/api/v1/approvals/credential", struct {
		Client string `json:"client"`
	}{c.clientName}, &out); err != nil {
		return "", fmt.Errorf("approval credential: %w", err)
	}
	c.cred = out.Credential
	return c.cred, nil
}

var _ Service = (*HTTP)(nil)
