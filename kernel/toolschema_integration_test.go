//go:build integration

package kernel_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/llm"
)

// TestEveryBuiltinToolIsValid runs every built-in plugin, built from source, enabled, and holds
// every tool the kernel then offers (its own and the plugins') to OpenAI's rules twice: through
// llm.CheckTools on the request as sent, and through the strict llmtest server, which answers
// HTTP 400 like api.openai.com to one invalid schema in the list.
func TestEveryBuiltinToolIsValid(t *testing.T) {
	var names []string
	for _, b := range config.BuiltinPlugins {
		names = append(names, b.Name)
	}
	b := newBuiltinKernelOf(t, "", names, names)
	// Every built-in plugin that can run without outside services must be running; qq needs a
	// OneBot server and web a browser for some tools, so they are awaited only when they run.
	for _, name := range []string{"files", "notes", "calendar", "rss", "web", "code"} {
		b.waitState(t, name, "running")
	}
	chat(t, b.memKernel, "main", "hello")
	reqs := b.fake.Requests()
	last := reqs[len(reqs)-1]
	var sent struct {
		Tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(last.Raw, &sent); err != nil {
		t.Fatal(err)
	}
	var tools []llm.Tool
	for _, tl := range sent.Tools {
		tools = append(tools, llm.Tool{Name: tl.Function.Name, Description: tl.Function.Description, Parameters: tl.Function.Parameters})
	}
	if err := llm.CheckTools(tools); err != nil {
		t.Fatalf("the tools sent break OpenAI's rules: %v", err)
	}
	for _, want := range []string{"notes_list", "files_read", "time_now", "code_run"} {
		if !slices.Contains(last.Tools, want) {
			t.Errorf("tool %s not sent; sent %v", want, last.Tools)
		}
	}
	t.Logf("%d tools sent, all valid", len(tools))
}
