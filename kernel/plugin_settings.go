package kernel

import (
	"context"
	"path/filepath"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/plugsettings"
	"github.com/hologramagent/hologram/plugins/host"
)

// settingsFile is a built-in plugin's settings (kernel/plugsettings), in the plugins' config dir.
func (k pluginRole) settingsFile(name string) (*plugsettings.File, host.Status, error) {
	st, err := k.plugins.host.Get(name)
	if err != nil || !k.plugins.isBuiltin(name) || st.Dir == "" || !filepath.IsAbs(k.cfg.ConfigFile) {
		if err == nil {
			err = invalid("plugin %s is not built in (or the kernel's config file %q is not absolute): it has no settings here", name, k.cfg.ConfigFile)
		}
		return nil, st, hostErr(err)
	}
	f, err := plugsettings.Open(name, st.Dir, filepath.Join(filepath.Dir(k.cfg.ConfigFile), "plugins", name+".toml"))
	return f, st, err
}

// PluginSettings implements client.PluginSettingsService.
func (k pluginRole) PluginSettings(ctx context.Context, name string) (client.PluginSettings, error) {
	f, _, err := k.settingsFile(name)
	if err != nil {
		return client.PluginSettings{}, err
	}
	return f.Read()
}

// SetPluginSettings implements client.PluginSettingsService: the plugin restarts unless disabled.
func (k pluginRole) SetPluginSettings(ctx context.Context, name string, values map[string]any) (client.PluginSettings, error) {
	f, st, err := k.settingsFile(name)
	if err != nil {
		return client.PluginSettings{}, err
	}
	return f.Write(ctx, values, plugsettings.Restart(k.plugins.host, name, st.State))
}
