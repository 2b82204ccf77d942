package api

import (
	"net/http"

	"github.com/hologramagent/hologram/kernel/client"
)

// handleCoolAll answers POST /api/v1/memory/cool-all with Server-Sent Events: "progress" (a
// [client.GCProgress]) as sessions cool and events are distilled, then "done" (the
// [client.GCReport]) or "error".
func (s *Server) handleCoolAll(w http.ResponseWriter, r *http.Request) {
	if err := checkQuery(r.URL.Query()); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if err := noBody(r, "memory cool-all"); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	st := newSSE(w)
	stop := s.keepAlive(st)
	rep, err := s.b.CoolAll(r.Context(), func(p client.GCProgress) {
		st.event(client.GCEventProgress, p)
	})
	stop()
	switch {
	case err != nil && !st.isStarted():
		st.close()
		s.fail(w, r, err)
		return
	case err != nil:
		status, msg := errorStatus(err)
		s.log.Debug("api: cool-all failed", "err", err)
		st.event(client.GCEventError, client.Error{Status: status, Message: msg})
	default:
		st.event(client.GCEventDone, rep)
	}
	st.close()
}
