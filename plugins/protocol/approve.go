package protocol

// CapApprove is the manifest capability of owner/approve: the plugin may ask the owner to
// approve an action before it takes it (the shell plugin does, for every command).
const CapApprove = "approve"

// MethodOwnerApprove (plugin → kernel) asks the owner to approve an action and waits for the
// answer. Only the owner's own clients (the desktop, waiter, the token API) can answer; a
// message on a channel never can. No answer within the timeout is a denial.
const MethodOwnerApprove = "owner/approve"

// ApproveParams are the params of owner/approve. Turn is the turn the plugin is serving (from
// tools/call), so the owner sees where the request comes from and the owner's live chat shows
// it; without a turn the request is shown to the owner's clients only. TimeoutMS, when set,
// shortens the kernel's approval timeout (it never lengthens it).
type ApproveParams struct {
	Turn      string `json:"turn,omitempty"`
	Title     string `json:"title"`
	Detail    string `json:"detail,omitempty"`
	TimeoutMS int    `json:"timeout_ms,omitempty"`
}

// ApproveResult is the answer to owner/approve: Approved is true only when the owner said yes.
// Reason says who decided what, e.g. "denied by the owner" or "no answer from the owner within
// 2m0s"; the plugin records it as the result of the action it did not take.
type ApproveResult struct {
	ID       string `json:"id"`
	Approved bool   `json:"approved"`
	Reason   string `json:"reason"`
}
