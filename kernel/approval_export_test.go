package kernel

import (
	"time"

	"github.com/hologramagent/hologram/plugins/host"
)

// SetApprovalTimer replaces the timer of k's approval timeouts, so that tests fire them
// instead of waiting.
func SetApprovalTimer(k *Kernel, after func(time.Duration) <-chan time.Time) {
	k.plugins.approvals.setAfter(after)
}

// PluginTraffic returns the bytes that crossed a running plugin's pipes.
func PluginTraffic(k *Kernel, name string) (host.Traffic, error) {
	return k.plugins.host.(*host.Host).Traffic(name)
}
