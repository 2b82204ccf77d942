package host

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// Approver is implemented by [Services] that can ask the owner to approve a plugin's action
// (owner/approve, capability "approve"). Approve blocks until the owner answers, the approval
// times out (a denial, not an error) or ctx ends (the plugin went away). A host whose Services
// lack it answers owner/approve with "method not found".
type Approver interface {
	Approve(ctx context.Context, plugin string, p protocol.ApproveParams) (protocol.ApproveResult, error)
}

// serveApprove answers owner/approve.
func (in *instance) serveApprove(ctx context.Context, svc Services, params json.RawMessage) (any, error) {
	a, ok := svc.(Approver)
	if !ok {
		return nil, &protocol.Error{Code: protocol.MethodNotFound,
			Message: fmt.Sprintf("method %s is not available: this kernel takes no approvals", protocol.MethodOwnerApprove)}
	}
	var p protocol.ApproveParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	return rpcResult(a.Approve(ctx, in.p.name(), p))
}
