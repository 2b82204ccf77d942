package clienttest

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// fakeDefaultPrompt is the fake's built-in base prompt.
const fakeDefaultPrompt = "You are the agent of {owner}. It is {date}."

// fakePrompt is the fake's base prompt: a template ("" with def: the built-in one) and the
// owner's name.
type fakePrompt struct {
	template, owner string
	custom          bool
}

func (p fakePrompt) out() client.BasePrompt {
	tmpl := fakeDefaultPrompt
	if p.custom {
		tmpl = p.template
	}
	owner := p.owner
	if owner == "" {
		owner = "the owner"
	}
	preview := strings.NewReplacer("{owner}", owner, "{date}", "Friday, 2 January 2026").Replace(tmpl)
	return client.BasePrompt{Template: tmpl, Default: !p.custom, Owner: p.owner, Preview: preview}
}

// promptRoute serves GET and PUT /api/v1/prompt, validating like the kernel.
func (f *Fake) promptRoute(w http.ResponseWriter, r *http.Request, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Method == http.MethodGet {
		writeJSON(w, http.StatusOK, f.prompt.out())
		return
	}
	var in client.BasePrompt
	if err := json.Unmarshal(body, &in); err != nil {
		WriteError(w, http.StatusBadRequest, "bad base prompt: "+err.Error())
		return
	}
	if len(in.Template) > client.MaxBasePrompt || strings.ContainsAny(in.Owner, "\n\r") {
		WriteError(w, http.StatusBadRequest, "invalid base prompt")
		return
	}
	f.prompt = fakePrompt{template: in.Template, owner: strings.TrimSpace(in.Owner), custom: !in.Default}
	writeJSON(w, http.StatusOK, f.prompt.out())
}
