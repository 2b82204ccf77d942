package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Branches: a session's messages form a tree. Regenerating a reply ([ChatRequest.Regenerate])
// or editing a sent message ([ChatRequest.Edit]) starts a sibling branch; the old one is kept.
// The session's current branch is what History, the context window and recall see; the
// messages where branches part carry [Message.Branch] (‹2/3›) and [BranchService.SwitchBranch]
// shows another.
type BranchService interface {
	// HistoryPage returns a page of the session's current branch, newest last: up to q.Limit
	// messages (default [DefaultHistoryPage], at most [MaxHistoryPage]) older than message
	// q.Before (0: the newest), with More set when older ones exist.
	HistoryPage(ctx context.Context, q HistoryQuery) (HistoryPage, error)
	// SwitchBranch makes the branch through message id current (its newest message becomes
	// the head); ErrNotFound for a message of another session, ErrInvalid while a turn runs in
	// the session.
	SwitchBranch(ctx context.Context, session string, id int64) error
}

// History pages.
const (
	DefaultHistoryPage = 50
	MaxHistoryPage     = 500
)

// HistoryQuery asks for one page of a session's current branch.
type HistoryQuery struct {
	Session string `json:"session"`
	Before  int64  `json:"before,omitempty"`
	Limit   int    `json:"limit,omitempty"`
}

// HistoryPage is one page of a session's current branch.
type HistoryPage struct {
	Messages []Message `json:"messages"`
	// More is set when the branch has messages older than the first one here.
	More bool `json:"more"`
}

// Branch is where a message stands among its siblings (the messages that follow the same
// one): Index is 1-based, Siblings are their ids in order (the message itself included).
type Branch struct {
	Index    int     `json:"index"`
	Count    int     `json:"count"`
	Siblings []int64 `json:"siblings"`
}

// Usage is what a reply cost, as the provider reported it, and how long it took.
type Usage struct {
	PromptTokens     int   `json:"prompt_tokens"`
	CompletionTokens int   `json:"completion_tokens"`
	Millis           int64 `json:"ms"`
}

// TokensPerSecond is the reply's completion speed (0 when unknown).
func (u Usage) TokensPerSecond() float64 {
	if u.Millis <= 0 || u.CompletionTokens <= 0 {
		return 0
	}
	return float64(u.CompletionTokens) * 1000 / float64(u.Millis)
}

// HistoryPage reads a page of a session's current branch
// (GET /api/v1/sessions/{id}/history?before=ID&limit=N&page=1).
func (c *HTTP) HistoryPage(ctx context.Context, q HistoryQuery) (HistoryPage, error) {
	if q.Session == "" {
		return HistoryPage{}, fmt.Errorf("history page: empty session id: %w", ErrInvalid)
	}
	v := url.Values{"page": {"1"}}
	if q.Before > 0 {
		v.Set("before", strconv.FormatInt(q.Before, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out HistoryPage
	err := c.do(ctx, http.MethodGet, "/api/v1/sessions/"+url.PathEscape(q.Session)+"/history?"+v.Encode(), nil, &out)
	return out, err
}

// SwitchBranch makes the branch through a message current
// (POST /api/v1/sessions/{id}/branch {"message": ID}).
func (c *HTTP) SwitchBranch(ctx context.Context, session string, id int64) error {
	if session == "" {
		return fmt.Errorf("switch branch: empty session id: %w", ErrInvalid)
	}
	return c.do(ctx, http.MethodPost, "/api/v1/sessions/"+url.PathEscape(session)+"/branch", struct {
		Message int64 `json:"message"`
	}{id}, nil)
}
