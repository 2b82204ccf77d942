package gui

import (
	"net/url"
	"strings"
)

// Placeholders of the welcome form: examples, said to be examples, so that an empty field
// does not look filled in.
var (
	welcomeURLExample   = "https://api.openai.com/v1"
	welcomeModelExample = "gpt-4o-mini, qwen2.5:7b"
)

// knownModels are model names offered in the welcome form for the well-known providers' base
// URLs, before a connection test lists the server's own: the list was empty until a test
// succeeded, and a test needs a model. Keyed by host (and port for local servers).
var knownModels = map[string][]string{
	"api.openai.com":              {"gpt-4o-mini", "gpt-4o", "gpt-4.1-mini", "gpt-4.1"},
	"api.deepseek.com":            {"deepseek-chat", "deepseek-reasoner"},
	"dashscope.aliyuncs.com":      {"qwen-plus", "qwen-turbo", "qwen-max"},
	"dashscope-intl.aliyuncs.com": {"qwen-plus", "qwen-turbo", "qwen-max"},
	"api.moonshot.cn":             {"moonshot-v1-8k", "moonshot-v1-32k"},
	"api.moonshot.ai":             {"moonshot-v1-8k", "moonshot-v1-32k"},
	"openrouter.ai":               {"openai/gpt-4o-mini", "deepseek/deepseek-chat", "qwen/qwen-2.5-72b-instruct"},
	":11434":                      {"qwen2.5:7b", "llama3.2:3b"}, // Ollama on any host
}

// suggestedModels returns the model names offered for a base URL (nil: none known).
func suggestedModels(baseURL string) []string {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Hostname() == "" {
		return nil
	}
	if m, ok := knownModels[strings.ToLower(u.Hostname())]; ok {
		return m
	}
	return knownModels[":"+u.Port()]
}

// Edited is called when the owner changes the form: a failure shown for what was there
// before no longer applies (it stayed red after the fields were fixed).
func (vm *WelcomeVM) Edited() {
	if failed, _ := vm.Failed.Get(); failed {
		vm.report("", false)
	}
}

// BaseURLEdited offers the models known for the new base URL, unless the list came from a
// connection test of that URL.
func (vm *WelcomeVM) BaseURLEdited(baseURL string) {
	vm.Edited()
	vm.mu.Lock()
	tested := vm.testedURL == strings.TrimRight(strings.TrimSpace(baseURL), "/")
	vm.mu.Unlock()
	if !tested {
		_ = vm.Models.Set(suggestedModels(baseURL))
	}
}
