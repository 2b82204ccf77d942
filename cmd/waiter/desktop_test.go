package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

func TestPauseAndResume(t *testing.T) {
	f, env := kernel(t, false)
	tests := []struct {
		args       []string
		wantCode   int
		wantOut    string // stdout, or a part of stderr for failures
		wantPaused bool
	}{
		{[]string{"pause"}, 0, "kernel paused: channel input and scheduled jobs stop; your own chat keeps working (`waiter resume` resumes)\n", true},
		{[]string{"status"}, 0, "paused        yes", true},
		{[]string{"pause", "now"}, 2, "pause takes no arguments", true},
		{[]string{"resume"}, 0, "kernel resumed\n", false},
		{[]string{"status"}, 0, "paused        no", false},
		{[]string{"resume", "--all"}, 2, "flag provided but not defined: -all", false},
	}
	for _, tt := range tests {
		r := waiter(t, env, nil, tt.args...)
		out := r.stdout
		if tt.wantCode != 0 {
			out = r.stderr
		}
		if r.code != tt.wantCode || (tt.args[0] == "status" && !strings.Contains(out, tt.wantOut)) ||
			(tt.args[0] != "status" && tt.wantCode == 0 && out != tt.wantOut) || (tt.wantCode != 0 && !strings.Contains(out, tt.wantOut)) {
			t.Fatalf("waiter %q = %+v; want code %d and %q", tt.args, r, tt.wantCode, tt.wantOut)
		}
		if f.Paused() != tt.wantPaused {
			t.Fatalf("after waiter %q the kernel is paused=%v", tt.args, f.Paused())
		}
	}
	var sent []string
	for _, rq := range f.Requests() {
		if rq.Path == "/api/v1/pause" {
			sent = append(sent, rq.Body)
		}
	}
	if want := []string{`{"paused":true}`, `{"paused":false}`}; !reflect.DeepEqual(sent, want) {
		t.Fatalf("pause requests %q, want %q", sent, want)
	}
}

func TestProviderTest(t *testing.T) {
	f, env := kernel(t, false)
	f.SetProviderCheck(func(p client.ProviderConfig) client.ProviderCheck {
		if p.APIKey != "sk-good" {
			return client.ProviderCheck{Error: "provider " + p.Name + ": HTTP 401: Incorrect API key provided", Latency: 80 * time.Millisecond}
		}
		return client.ProviderCheck{OK: true, Latency: 1234567 * time.Microsecond, Model: p.Model + "-0125", Models: []string{"m1", "m2"}, Reply: "OK."}
	})
	withKey := map[string]string{"HOLOGRAM_SOCKET": env["HOLOGRAM_SOCKET"], "HOLOGRAM_API_KEY": "sk-good"}
	tests := []struct {
		name       string
		env        map[string]string
		stdin      string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
		wantSent   *client.ProviderConfig
	}{
		{name: "ok, key from the environment", env: withKey, args: []string{"provider", "test", "--base-url", "https://api.example.com/v1", "--model", "m1"},
			wantStdout: "ok: m1-0125 answered in 1.235s: \"OK.\"\nmodels: m1, m2\n",
			wantSent:   &client.ProviderConfig{Name: "test", BaseURL: "https://api.example.com/v1", Model: "m1", APIKey: "sk-good"}},
		{name: "key from stdin, named, with a proxy", env: env, stdin: "sk-good\n",
			args:       []string{"provider", "test", "ds", "--base-url", "https://api.deepseek.com/v1", "--model", "deepseek-chat", "--proxy", "http://proxy:3128"},
			wantStdout: "ok: deepseek-chat-0125 answered in 1.235s: \"OK.\"\nmodels: m1, m2\n",
			wantSent:   &client.ProviderConfig{Name: "ds", BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat", APIKey: "sk-good", Proxy: "http://proxy:3128"}},
		{name: "wrong key fails", env: env, stdin: "sk-bad\n", args: []string{"provider", "test", "--base-url", "https://api.example.com/v1", "--model", "m1"},
			wantCode: 1, wantStderr: "waiter: provider test failed after 80ms: provider test: HTTP 401: Incorrect API key provided\n"},
		{name: "json", env: withKey, args: []string{"provider", "test", "--json", "--base-url", "http://127.0.0.1:11434/v1", "--model", "qwen"},
			wantStdout: `{"ok":true,"latency":1234567000,"model":"qwen-0125","models":["m1","m2"],"reply":"OK."}`},
		{name: "invalid URL", env: withKey, args: []string{"provider", "test", "--base-url", "api.example.com", "--model", "m1"},
			wantCode: 1, wantStderr: "(HTTP 400)"},
		{name: "needs a model", env: withKey, args: []string{"provider", "test", "--base-url", "https://api.example.com/v1"},
			wantCode: 2, wantStderr: "provider test needs --base-url and --model"},
		{name: "key on argv refused", env: env, args: []string{"provider", "test", "--base-url", "https://x/v1", "--model", "m", "--api-key", "sk"},
			wantCode: 2, wantStderr: "refusing --api-key"},
		{name: "two names", env: withKey, args: []string{"provider", "test", "a", "b", "--base-url", "https://x/v1", "--model", "m"},
			wantCode: 2, wantStderr: "usage: waiter provider test [NAME]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Requests())
			r := waiter(t, tt.env, strings.NewReader(tt.stdin), tt.args...)
			if r.code != tt.wantCode {
				t.Fatalf("code %d, want %d: %+v", r.code, tt.wantCode, r)
			}
			if strings.HasPrefix(tt.wantStdout, "{") {
				var got, want client.ProviderCheck
				if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || json.Unmarshal([]byte(tt.wantStdout), &want) != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("stdout %s, want %s (%v)", r.stdout, tt.wantStdout, err)
				}
			} else if r.stdout != tt.wantStdout {
				t.Fatalf("stdout %q, want %q", r.stdout, tt.wantStdout)
			}
			if !strings.Contains(r.stderr, tt.wantStderr) {
				t.Fatalf("stderr %q, want it to contain %q", r.stderr, tt.wantStderr)
			}
			reqs := f.Requests()[before:]
			if tt.wantSent == nil {
				return
			}
			var got client.ProviderConfig
			if len(reqs) != 1 || reqs[0].Path != "/api/v1/providers/test" || json.Unmarshal([]byte(reqs[0].Body), &got) != nil || got != *tt.wantSent {
				t.Fatalf("requests %+v, want one test of %+v", reqs, *tt.wantSent)
			}
		})
	}
	if _, ok := f.ProviderConfig("test"); ok {
		t.Fatal("provider test saved the provider")
	}
}

func TestProviderDetect(t *testing.T) {
	f, env := kernel(t, false)
	r := waiter(t, env, nil, "provider", "detect")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "no local server found") {
		t.Fatalf("detect with nothing: %+v", r)
	}
	if r := waiter(t, env, nil, "provider", "detect", "--json"); r.code != 0 || r.stdout != "[]\n" {
		t.Fatalf("detect --json with nothing: %+v", r)
	}
	ollama := client.ProviderConfig{Name: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen2.5:7b"}
	f.SetDetected(ollama, client.ProviderConfig{Name: "llamacpp", BaseURL: "http://127.0.0.1:8080/v1", Model: "gguf"})
	r = waiter(t, env, nil, "provider", "detect")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || strings.Fields(lines[0])[0] != "NAME" ||
		!reflect.DeepEqual(strings.Fields(lines[1]), []string{"ollama", "qwen2.5:7b", "http://127.0.0.1:11434/v1"}) ||
		!reflect.DeepEqual(strings.Fields(lines[2]), []string{"llamacpp", "gguf", "http://127.0.0.1:8080/v1"}) {
		t.Fatalf("detect:\n%s%s", r.stdout, r.stderr)
	}
	r = waiter(t, env, nil, "provider", "detect", "--json")
	var got []client.ProviderConfig
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil || len(got) != 2 || got[0] != ollama {
		t.Fatalf("detect --json: %+v", r)
	}
	if r := waiter(t, env, nil, "provider", "detect", "x"); r.code != 2 || !strings.Contains(r.stderr, "provider detect takes no arguments") {
		t.Fatalf("detect x: %+v", r)
	}
}
