package api

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"unicode"

	"github.com/hologramagent/hologram/kernel/client"
)

// maxCredentials bounds the approval credentials a server remembers; the oldest is forgotten
// first (its client asks for a new one).
const maxCredentials = 256

// credentials are the approval credentials issued to the owner's clients (ARCHITECTURE.md §5):
// a client answers approvals only with one, so a bare connection to the socket (a script, a
// process that merely found the path) cannot. Only hashes are kept. Safe for concurrent use.
type credentials struct {
	mu    sync.Mutex
	by    map[[32]byte]string // sha256(credential) → client name
	order [][32]byte
}

// issue returns a new credential for client.
func (c *credentials) issue(name string) string {
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	cred := base64.RawURLEncoding.EncodeToString(raw[:])
	h := sha256.Sum256([]byte(cred))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[[32]byte]string{}
	}
	if len(c.order) >= maxCredentials {
		delete(c.by, c.order[0])
		c.order = c.order[1:]
	}
	c.by[h] = name
	c.order = append(c.order, h)
	return cred
}

// client returns the name of the client holding cred.
func (c *credentials) client(cred string) (string, bool) {
	h := sha256.Sum256([]byte(cred))
	c.mu.Lock()
	defer c.mu.Unlock()
	name, ok := c.by[h]
	return name, ok
}

// approvalRoutes registers the approval routes: the owner's answers to plugins that ask before
// they act (the shell plugin). Every route of this API is the owner's (the unix socket's peer
// uid and never a plugin's process, the bearer token); answering also needs the approval
// credential the owner's clients get when they connect. No channel reaches these routes.
func (s *Server) approvalRoutes() {
	s.mux.HandleFunc("GET /api/v1/approvals", s.handleApprovals)
	s.mux.HandleFunc("POST /api/v1/approvals/credential", s.handleApprovalCredential)
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
	cred := r.Header.Get(client.ApprovalCredentialHeader)
	if cred == "" {
		s.writeError(w, r, http.StatusForbidden, "answering an approval needs the owner's approval credential (header "+client.ApprovalCredentialHeader+
			"), which the owner's clients (waiter, the desktop) get when they connect: POST /api/v1/approvals/credential; a bare connection cannot answer")
		return
	}
	who, ok := s.creds.client(cred)
	if !ok {
		s.writeError(w, r, http.StatusForbidden, "unknown approval credential (issued by a kernel that has restarted since?): ask for a new one at POST /api/v1/approvals/credential")
		return
	}
	s.log.Info("api: approval answered", "id", r.PathValue("id"), "approve", *in.Approve, "client", who)
	a := s.b
	out, err := a.AnswerApproval(r.Context(), r.PathValue("id"), *in.Approve)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handleApprovalCredential answers POST /api/v1/approvals/credential {"client": NAME} with a new
// approval credential for that client ({"client", "credential"}). The owner's clients (waiter,
// the desktop in client mode, and what connects as the owner later: web UI device sessions,
// `waiter acp`) ask for one when they first answer an approval.
func (s *Server) handleApprovalCredential(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Client string `json:"client"`
	}
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	name := strings.TrimSpace(in.Client)
	if name == "" || len(name) > 64 || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		s.writeError(w, r, http.StatusBadRequest, `field "client" must name the client in 1 to 64 characters without control characters`)
		return
	}
	writeJSON(w, http.StatusOK, client.ApprovalCredential{Client: name, Credential: s.creds.issue(name)})
}
