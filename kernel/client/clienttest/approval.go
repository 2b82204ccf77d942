package clienttest

import (
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// fakeApprovals are the fake kernel's approvals: pending ones and the answered ones, by id.
type fakeApprovals struct {
	byID  map[string]client.Approval
	creds []string // the approval credentials issued
}

// AddApproval adds a pending approval (its State is set to pending; an empty ID gets one, and
// it is returned).
func (f *Fake) AddApproval(a client.Approval) client.Approval {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.approvals.byID == nil {
		f.approvals.byID = map[string]client.Approval{}
	}
	if a.ID == "" {
		f.nextID++
		a.ID = "ap" + strconv.Itoa(f.nextID)
	}
	a.State = client.ApprovalPending
	f.approvals.byID[a.ID] = a
	return a
}

// Approval returns an approval as the fake holds it (answered ones keep their final state).
func (f *Fake) Approval(id string) (client.Approval, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.approvals.byID[id]
	return a, ok
}

// approvalRoute serves GET /api/v1/approvals and POST /api/v1/approvals/{id}, validating like
// the kernel.
func (f *Fake) approvalRoute(w http.ResponseWriter, r *http.Request, parts []string, body []byte) {
	switch {
	case r.Method == http.MethodGet && len(parts) == 1:
		f.mu.Lock()
		out := []client.Approval{}
		for _, a := range f.approvals.byID {
			if a.State == client.ApprovalPending {
				out = append(out, a)
			}
		}
		f.mu.Unlock()
		sort.Slice(out, func(i, j int) bool {
			if !out[i].Created.Equal(out[j].Created) {
				return out[i].Created.Before(out[j].Created)
			}
			return out[i].ID < out[j].ID
		})
		writeJSON(w, http.StatusOK, map[string]any{"approvals": out})
	case r.Method == http.MethodPost && len(parts) == 2 && parts[1] == "credential":
		var in struct {
			Client string `json:"client"`
		}
		if !decode(w, body, &in) {
			return
		}
		if strings.TrimSpace(in.Client) == "" {
			WriteError(w, http.StatusBadRequest, `field "client" must name the client in 1 to 64 characters without control characters`)
			return
		}
		cred := "cred-" + strconv.Itoa(len(f.credentials())+1)
		f.mu.Lock()
		f.approvals.creds = append(f.approvals.creds, cred)
		f.mu.Unlock()
		writeJSON(w, http.StatusOK, client.ApprovalCredential{Client: in.Client, Credential: cred})
	case r.Method == http.MethodPost && len(parts) == 2:
		var in struct {
			Approve *bool `json:"approve"`
		}
		if !decode(w, body, &in) {
			return
		}
		if in.Approve == nil {
			WriteError(w, http.StatusBadRequest, `field "approve" (true or false) is required`)
			return
		}
		if cred := r.Header.Get(client.ApprovalCredentialHeader); cred == "" || !slices.Contains(f.credentials(), cred) {
			WriteError(w, http.StatusForbidden, "answering an approval needs the owner's approval credential (header "+client.ApprovalCredentialHeader+")")
			return
		}
		f.mu.Lock()
		a, ok := f.approvals.byID[parts[1]]
		answered := ok && a.State == client.ApprovalPending
		if answered {
			a.State = client.ApprovalDenied
			if *in.Approve {
				a.State = client.ApprovalApproved
			}
			f.approvals.byID[a.ID] = a
		}
		f.mu.Unlock()
		if !answered {
			WriteError(w, http.StatusNotFound, "not found: no pending approval "+strconv.Quote(parts[1])+" (answered, expired or never asked)")
			return
		}
		writeJSON(w, http.StatusOK, a)
	default:
		WriteError(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
	}
}

// credentials returns the approval credentials the fake issued.
func (f *Fake) credentials() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.approvals.creds...)
}
