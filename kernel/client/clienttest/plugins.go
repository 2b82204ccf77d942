package clienttest

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// fakePlugin is a plugin of the fake kernel: it "runs" at once with one tool, <name>_echo.
type fakePlugin struct {
	plugin client.Plugin
	logs   []client.LogLine
}

// AddPluginLogs appends stderr lines to a plugin's log; false when there is no such plugin.
func (f *Fake) AddPluginLogs(name string, lines ...string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.plugins[name]
	if p == nil {
		return false
	}
	for _, l := range lines {
		p.logs = append(p.logs, client.LogLine{Time: f.started.Add(time.Duration(len(p.logs)) * time.Second), Line: l})
	}
	return true
}

// pluginRoute serves /api/v1/plugins, /api/v1/plugins/{name}/{action} and
// /api/v1/plugins/{name}/logs.
func (f *Fake) pluginRoute(w http.ResponseWriter, r *http.Request, parts []string, body []byte) {
	switch {
	case len(parts) == 1 && r.Method == http.MethodGet:
		f.mu.Lock()
		out := make([]client.Plugin, 0, len(f.plugins))
		for _, p := range f.plugins {
			out = append(out, p.plugin)
		}
		f.mu.Unlock()
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		writeJSON(w, http.StatusOK, map[string]any{"plugins": out})
	case len(parts) == 1 && r.Method == http.MethodPost:
		f.addPlugin(w, body)
	case len(parts) == 3 && parts[2] == "logs" && r.Method == http.MethodGet:
		f.pluginLogs(w, r, parts[1])
	case len(parts) == 3 && r.Method == http.MethodPost:
		f.pluginAction(w, parts[1], parts[2])
	default:
		WriteError(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
	}
}

func (f *Fake) addPlugin(w http.ResponseWriter, body []byte) {
	var in client.PluginConfig
	if !decode(w, body, &in) {
		return
	}
	if in.Name == "" || (len(in.Command) == 0) == (in.Dir == "") {
		WriteError(w, http.StatusBadRequest, "plugin needs a name and exactly one of command and dir")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.plugins == nil {
		f.plugins = map[string]*fakePlugin{}
	}
	if _, ok := f.plugins[in.Name]; ok {
		WriteError(w, http.StatusConflict, "plugin "+strconv.Quote(in.Name)+" already exists")
		return
	}
	f.nextID++
	p := client.Plugin{Name: in.Name, Kind: "mcp", State: "running", PID: 40000 + f.nextID, Tools: []string{in.Name + "_echo"},
		Command: in.Command, Dir: in.Dir}
	if in.Dir != "" {
		p.Kind = "native"
	}
	if in.Disabled {
		p.State, p.PID, p.Tools = "disabled", 0, []string{}
	}
	f.plugins[in.Name] = &fakePlugin{plugin: p}
	f.syncPluginTools(in.Name)
	writeJSON(w, http.StatusCreated, p)
}

// syncPluginTools makes f.tools hold exactly the plugin's tools; f.mu is held.
func (f *Fake) syncPluginTools(name string) {
	kept := f.tools[:0]
	for _, t := range f.tools {
		if t.Source != name {
			kept = append(kept, t)
		}
	}
	f.tools = kept
	if p := f.plugins[name]; p != nil {
		for _, tn := range p.plugin.Tools {
			f.tools = append(f.tools, client.Tool{Name: tn, Description: "Echoes its text.",
				Parameters: map[string]any{"type": "object"}, ParallelSafe: true, Source: name})
		}
	}
}

func (f *Fake) pluginAction(w http.ResponseWriter, name, action string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.plugins[name]
	if p == nil {
		WriteError(w, http.StatusNotFound, "no such plugin: "+strconv.Quote(name))
		return
	}
	running := func() {
		f.nextID++
		p.plugin.State, p.plugin.PID, p.plugin.Tools, p.plugin.LastError = "running", 40000+f.nextID, []string{name + "_echo"}, ""
	}
	switch action {
	case client.PluginRestart:
		running()
		p.plugin.Restarts++
	case client.PluginEnable:
		running()
	case client.PluginDisable:
		p.plugin.State, p.plugin.PID, p.plugin.Tools = "disabled", 0, []string{}
	case client.PluginRemove:
		out := p.plugin
		delete(f.plugins, name)
		f.syncPluginTools(name)
		writeJSON(w, http.StatusOK, out)
		return
	default:
		WriteError(w, http.StatusNotFound, "unknown plugin action "+strconv.Quote(action))
		return
	}
	f.syncPluginTools(name)
	writeJSON(w, http.StatusOK, p.plugin)
}

func (f *Fake) pluginLogs(w http.ResponseWriter, r *http.Request, name string) {
	q := r.URL.Query()
	if !checkQuery(w, q, "n") {
		return
	}
	n := 0
	if q.Has("n") {
		v, err := strconv.Atoi(strings.TrimSpace(q.Get("n")))
		if err != nil || v < 0 {
			WriteError(w, http.StatusBadRequest, "n must be an integer >= 0")
			return
		}
		n = v
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.plugins[name]
	if p == nil {
		WriteError(w, http.StatusNotFound, "no such plugin: "+strconv.Quote(name))
		return
	}
	lines := append([]client.LogLine{}, p.logs...)
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	writeJSON(w, http.StatusOK, map[string]any{"lines": lines})
}

// SetPluginPermissions sets what a plugin's manifest declares, as the kernel lists it; false
// when there is no such plugin.
func (f *Fake) SetPluginPermissions(name string, p client.PluginPermissions) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	fp := f.plugins[name]
	if fp == nil {
		return false
	}
	fp.plugin.Permissions = p
	return true
}
