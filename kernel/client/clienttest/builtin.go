package clienttest

import "github.com/hologramagent/hologram/kernel/client"

// AddBuiltinPlugin adds a built-in native plugin in the given state ("running" gives it one
// tool, <name>_echo, like the plugins the fake starts), as a kernel lists the plugins it ships.
func (f *Fake) AddBuiltinPlugin(name, state string) client.Plugin {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.plugins == nil {
		f.plugins = map[string]*fakePlugin{}
	}
	p := client.Plugin{Name: name, Kind: "native", State: state, Builtin: true, Tools: []string{},
		Dir: "/usr/lib/hologram/plugins/" + name}
	if state == "running" {
		f.nextID++
		p.PID, p.Tools = 1000+f.nextID, []string{name + "_echo"}
	}
	f.plugins[name] = &fakePlugin{plugin: p}
	return p
}
