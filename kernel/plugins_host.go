package kernel

import (
	"context"
	"errors"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/plugins/host"
)

// pluginStopTimeout bounds the plugins' stop ladder in Close.
const pluginStopTimeout = 15 * time.Second

// newPluginHost builds the supervisor. TEMPORARY: plugins/host has not landed yet.
func (k *Kernel) newPluginHost(reg host.Registry, pub host.Publisher) pluginHost { return noHost{} }

type noHost struct{}

var errNoHost = errors.New("plugin host unavailable")

func (noHost) Add(context.Context, host.Spec) (host.Status, error) {
	return host.Status{}, errors.Join(client.ErrUnavailable, errNoHost)
}
func (noHost) Remove(context.Context, string) (host.Status, error) {
	return host.Status{}, host.ErrNotFound
}
func (noHost) Enable(context.Context, string) (host.Status, error) {
	return host.Status{}, host.ErrNotFound
}
func (noHost) Disable(context.Context, string) (host.Status, error) {
	return host.Status{}, host.ErrNotFound
}
func (noHost) Restart(context.Context, string) (host.Status, error) {
	return host.Status{}, host.ErrNotFound
}
func (noHost) List() []host.Status                      { return nil }
func (noHost) Get(string) (host.Status, error)          { return host.Status{}, host.ErrNotFound }
func (noHost) Logs(string, int) ([]host.LogLine, error) { return nil, host.ErrNotFound }
func (noHost) Close(context.Context) error              { return nil }
