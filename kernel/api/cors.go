package api

import (
	"net/http"
	"strings"
)

// CORS (ARCHITECTURE.md §7): a page on an allowed origin (api.allowed_origins) may call the API
// from a browser. Its preflight, which carries no token, is answered 204 with the origin itself
// (never "*") and the methods and headers the OpenAI clients send; its requests are answered with
// Access-Control-Allow-Origin. Other origins get no CORS header (and their requests stay refused
// by originAllowed).

// corsAllowedHeaders are the request headers a page may send: what the OpenAI SDKs send
// (x-stainless-* are their platform and retry headers; idempotency-key their retry key).
var corsAllowedHeaders = map[string]bool{
	"authorization": true, "content-type": true, "accept": true, "idempotency-key": true,
	"x-hologram-session": true, "openai-organization": true, "openai-project": true, "openai-beta": true,
}

// cors sets the CORS headers of a request from an allowed origin and answers its preflight. It
// reports whether the request was answered.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	n, ok := normalizeOrigin(origin)
	if !ok || !s.origins[n] {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", "Retry-After, X-Request-Id")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	var allow []string
	for _, f := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f != "" && (corsAllowedHeaders[f] || strings.HasPrefix(f, "x-stainless-")) {
			allow = append(allow, f)
		}
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	if len(allow) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(allow, ", "))
	}
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}
