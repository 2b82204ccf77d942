package kernel

import (
	"context"
	"errors"
	"sync"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory"
)

// Session-scoped plugins (client.PluginConfig.Session): an editor's MCP servers, added by
// `waiter acp` for one session. They are not remembered (a restarted kernel does not start them
// again), their tools are offered in that session only, and the client removes them when the
// session ends.

// sessionPlugins maps a session-scoped plugin to its session.
type sessionPlugins struct {
	mu sync.Mutex
	of map[string]string
}

func (s *sessionPlugins) set(plugin, session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.of == nil {
		s.of = map[string]string{}
	}
	s.of[plugin] = session
}

func (s *sessionPlugins) remove(plugin string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.of, plugin)
}

func (s *sessionPlugins) session(plugin string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.of[plugin]
}

// mayCallTool is the agent's MayCall: a session-scoped plugin's tools only in its session.
func (k *Kernel) mayCallTool(_ context.Context, req agent.TurnRequest, t agent.ToolInfo) bool {
	s := k.sessionPlugins.session(t.Source)
	return s == "" || s == req.Session
}

// checkSessionPlugin refuses a session-scoped plugin for a session that is not the owner's.
func (k *Kernel) checkSessionPlugin(ctx context.Context, c client.PluginConfig) error {
	if c.Session == "" {
		return nil
	}
	if c.Disabled {
		return invalid("plugin %s: a session's plugin cannot be added disabled", c.Name)
	}
	s, err := k.store.GetSession(ctx, c.Session)
	if errors.Is(err, memory.ErrNotFound) {
		return invalid("plugin %s: unknown session %q", c.Name, c.Session)
	}
	if err != nil {
		return mapErr(err)
	}
	if !agent.OwnerScope(s.Scope) {
		return invalid("plugin %s: session %s is not the owner's (scope %s)", c.Name, c.Session, s.Scope)
	}
	return nil
}
