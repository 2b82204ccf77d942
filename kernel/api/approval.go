package api

import (
	"net/http"

	"github.com/hologramagent/hologram/kernel/client"
)

// approvalRoutes registers the approval routes: the owner's answers to plugins that ask before
// they act (the shell plugin). Every route of this API is the owner's (the unix socket's peer
// uid, the bearer token), so every client here may answer; no channel reaches these routes.
func (s *Server) approvalRoutes() {
	s.mux.HandleFunc("GET /api/v1/approvals", s.handleApprovals)
	s.mux.HandleFunc("POST /api/v1/approvals/{id}", s.handleAnswerApproval)
}

// handleApprovals answers GET /api/v1/approvals: the pending approvals, oldest first.
func (s *Server) handleApprovals(w http.ResponseWriter, r *http.Request) {
	if err := checkQuery(r.URL.Query()); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	a := s.b
	list, err := a.Approvals(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if list == nil {
		list = []client.Approval{}
	}
	writeJSON(w, http.StatusOK, struct {
		Approvals []client.Approval `json:"approvals"`
	}{list})
}

// handleAnswerApproval answers POST /api/v1/approvals/{id} {"approve": true|false} with the
// approval as answered.
func (s *Server) handleAnswerApproval(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Approve *bool `json:"approve"`
	}
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if in.Approve == nil {
		s.writeError(w, r, http.StatusBadRequest, `field "approve" (true or false) is required`)
		return
	}
	a := s.b
	out, err := a.AnswerApproval(r.Context(), r.PathValue("id"), *in.Approve)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
