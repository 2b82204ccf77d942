package api

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

func TestPluginRoutes(t *testing.T) {
	var (
		gotAdd            client.PluginConfig
		gotName, gotAct   string
		gotLogN           int
		unknown           = fmt.Errorf("no such plugin: %w", client.ErrNotFound)
		logTime           = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		everything        = client.Plugin{Name: "everything", Kind: "mcp", State: "running", PID: 7, Tools: []string{"echo"}, Command: []string{"node", "x.js"}}
		everythingJSON, _ = json.Marshal(everything)
	)
	b := &fakeBackend{
		plugins: func(context.Context) ([]client.Plugin, error) {
			return []client.Plugin{everything, {Name: "off", Kind: "mcp", State: "disabled"}}, nil
		},
		addPlugin: func(_ context.Context, p client.PluginConfig) (client.Plugin, error) {
			gotAdd = p
			if p.Name == "cfg" {
				return client.Plugin{}, fmt.Errorf("%w: plugin cfg is configured in the config file", client.ErrInvalid)
			}
			return client.Plugin{Name: p.Name, Kind: "mcp", State: "starting", Command: p.Command}, nil
		},
		pluginAction: func(_ context.Context, name, action string) (client.Plugin, error) {
			gotName, gotAct = name, action
			if name != "everything" {
				return client.Plugin{}, unknown
			}
			return everything, nil
		},
		pluginLogs: func(_ context.Context, name string, n int) ([]client.LogLine, error) {
			gotName, gotLogN = name, n
			if name != "everything" {
				return nil, unknown
			}
			return []client.LogLine{{Time: logTime, Line: "Starting default (STDIO) server..."}}, nil
		},
	}
	sv := serveUnix(t, New(b, Options{Version: "1"}), "")

	tests := []struct {
		name, method, path, body string
		want                     int
		wantBody                 string
		check                    func(t *testing.T)
	}{
		{name: "list", method: "GET", path: "/api/v1/plugins", want: 200,
			wantBody: `{"plugins":[` + string(everythingJSON) + `,{"name":"off","kind":"mcp","state":"disabled","restarts":0,"tools":[],"permissions":{}}]}`},
		{name: "list refuses query", method: "GET", path: "/api/v1/plugins?x=1", want: 400},
		{name: "add", method: "POST", path: "/api/v1/plugins", body: `{"name":"e","command":["node","x.js","stdio"],"env":["A=1"]}`, want: 201,
			wantBody: `{"name":"e","kind":"mcp","state":"starting","restarts":0,"tools":[],"permissions":{},"command":["node","x.js","stdio"]}`,
			check: func(t *testing.T) {
				if !reflect.DeepEqual(gotAdd, client.PluginConfig{Name: "e", Command: []string{"node", "x.js", "stdio"}, Env: []string{"A=1"}}) {
					t.Errorf("backend got %+v", gotAdd)
				}
			}},
		{name: "add unknown field", method: "POST", path: "/api/v1/plugins", body: `{"name":"e","cmd":["node"]}`, want: 400},
		{name: "add without name", method: "POST", path: "/api/v1/plugins", body: `{"command":["node"]}`, want: 400,
			wantBody: `{"error":{"status":400,"message":"plugin name is empty"}}`},
		{name: "add without command or dir", method: "POST", path: "/api/v1/plugins", body: `{"name":"e"}`, want: 400},
		{name: "add with both", method: "POST", path: "/api/v1/plugins", body: `{"name":"e","command":["x"],"dir":"/d"}`, want: 400},
		{name: "add refused by the kernel", method: "POST", path: "/api/v1/plugins", body: `{"name":"cfg","command":["x"]}`, want: 400,
			wantBody: `{"error":{"status":400,"message":"invalid request: plugin cfg is configured in the config file"}}`},
		{name: "restart", method: "POST", path: "/api/v1/plugins/everything/restart", want: 200, wantBody: string(everythingJSON),
			check: func(t *testing.T) {
				if gotName != "everything" || gotAct != "restart" {
					t.Errorf("action %q %q", gotName, gotAct)
				}
			}},
		{name: "enable", method: "POST", path: "/api/v1/plugins/everything/enable", want: 200},
		{name: "disable", method: "POST", path: "/api/v1/plugins/everything/disable", want: 200},
		{name: "remove", method: "POST", path: "/api/v1/plugins/everything/remove", want: 200,
			check: func(t *testing.T) {
				if gotAct != "remove" {
					t.Errorf("action %q", gotAct)
				}
			}},
		{name: "action on unknown plugin", method: "POST", path: "/api/v1/plugins/ghost/restart", want: 404,
			wantBody: `{"error":{"status":404,"message":"no such plugin: not found"}}`},
		{name: "unknown action", method: "POST", path: "/api/v1/plugins/everything/explode", want: 404},
		{name: "action with a body", method: "POST", path: "/api/v1/plugins/everything/restart", body: `{}`, want: 400},
		{name: "action by GET", method: "GET", path: "/api/v1/plugins/everything/restart", want: 405},
		{name: "logs", method: "GET", path: "/api/v1/plugins/everything/logs?n=5", want: 200,
			wantBody: `{"lines":[{"time":"2026-01-02T03:04:05Z","line":"Starting default (STDIO) server..."}]}`,
			check: func(t *testing.T) {
				if gotName != "everything" || gotLogN != 5 {
					t.Errorf("logs(%q, %d)", gotName, gotLogN)
				}
			}},
		{name: "logs all", method: "GET", path: "/api/v1/plugins/everything/logs", want: 200,
			check: func(t *testing.T) {
				if gotLogN != 0 {
					t.Errorf("n %d, want 0", gotLogN)
				}
			}},
		{name: "logs bad n", method: "GET", path: "/api/v1/plugins/everything/logs?n=-2", want: 400},
		{name: "logs n twice", method: "GET", path: "/api/v1/plugins/everything/logs?n=1&n=2", want: 400},
		{name: "logs unknown query", method: "GET", path: "/api/v1/plugins/everything/logs?lines=2", want: 400},
		{name: "logs unknown plugin", method: "GET", path: "/api/v1/plugins/ghost/logs", want: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := sv.do(t, tt.method, tt.path, tt.body, nil)
			if resp.StatusCode != tt.want {
				t.Fatalf("%s %s: status %d, want %d: %s", tt.method, tt.path, resp.StatusCode, tt.want, body)
			}
			if tt.wantBody != "" {
				var got, want any
				if err := json.Unmarshal([]byte(body), &got); err != nil {
					t.Fatalf("answer %q: %v", body, err)
				}
				if err := json.Unmarshal([]byte(tt.wantBody), &want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("answer\n%s\nwant\n%s", strings.TrimSpace(body), tt.wantBody)
				}
			}
			if tt.check != nil {
				tt.check(t)
			}
		})
	}
}
