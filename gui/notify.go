package gui

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"

	"github.com/hologramagent/hologram/kernel/client"
)

// pluginPollInterval is how often the plugins are checked while the main window is hidden.
const pluginPollInterval = 10 * time.Second

// notifier sends desktop notifications (org.freedesktop.Notifications through
// fyne.App.SendNotification) about what happens while the user cannot see it:
//   - a reply that finished in a hidden chat window (main or quick chat);
//   - a plugin that failed (entered "backoff", "tripped" or "failed") while the main window is hidden,
//     found by polling svc.Plugins every 10 s.
//
// Approvals (approvals.go) are shown in a dialog and, while the window is hidden, notified here
// too; plugins' owner/notify messages (calendar reminders) reach the owner's main chat.
type notifier struct {
	send func(*fyne.Notification)
	svc  client.Service

	mu     sync.Mutex
	states map[string]string // plugin → state at the last poll while hidden; nil: no baseline
}

func newNotifier(fa fyne.App, svc client.Service) *notifier {
	return &notifier{send: fa.SendNotification, svc: svc}
}

// reply notifies a finished reply (the caller checked that its window is hidden).
func (n *notifier) reply(quick bool, text string) {
	title := T("HologramAgent replied")
	if quick {
		title = T("Quick chat: HologramAgent replied")
	}
	n.send(fyne.NewNotification(title, excerpt(text, 200)))
}

// hidden starts a fresh baseline: plugins already failing when the window hides are not news.
func (n *notifier) hidden() {
	n.mu.Lock()
	n.states = nil
	n.mu.Unlock()
}

// pollPlugins lists the plugins and notifies each one that entered a failing state since the
// last poll. The first poll after hidden only records the baseline.
func (n *notifier) pollPlugins(ctx context.Context) error {
	list, err := n.svc.Plugins(ctx)
	if err != nil {
		return err
	}
	now := make(map[string]string, len(list))
	var failed []client.Plugin
	n.mu.Lock()
	for _, p := range list {
		now[p.Name] = p.State
		if n.states != nil && pluginFailing(p.State) && n.states[p.Name] != p.State {
			failed = append(failed, p)
		}
	}
	n.states = now
	n.mu.Unlock()
	sort.Slice(failed, func(i, j int) bool { return failed[i].Name < failed[j].Name })
	for _, p := range failed {
		body := pluginStateText(p.State)
		if p.LastError != "" {
			body += ": " + excerpt(p.LastError, 160)
		}
		n.send(fyne.NewNotification(Tf("Plugin %s failed", p.Name), body))
	}
	return nil
}

// watchPlugins polls while hidden() reports true, until ctx ends. after is time.After in
// production.
func (n *notifier) watchPlugins(ctx context.Context, hidden func() bool, after func(time.Duration) <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-after(pluginPollInterval):
		}
		if hidden() {
			_ = n.pollPlugins(ctx) // a failure shows in the connection banner
		}
	}
}

func pluginFailing(state string) bool {
	return state == "backoff" || state == "tripped" || state == "failed"
}

// excerpt shortens s to at most n runes on one line, with an ellipsis.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
