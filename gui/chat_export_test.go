package gui

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// TestChatExportMarkdown: the whole current branch is exported page by page as Markdown, each
// message under its speaker and time, in order; the view has loaded only the newest page.
func TestChatExportMarkdown(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	c := chatKernel(t, f, true)
	const turns = 300 // 600 stored messages: two export pages
	for i := range turns {
		if _, err := c.Chat(context.Background(), client.ChatRequest{Input: fmt.Sprintf("question %d", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	vm := NewChatVM(c, ChatOptions{})
	chatReload(t, vm)
	if got := len(vm.Messages()); got != chatHistoryLimit {
		t.Fatalf("the view loaded %d messages, want the newest page of %d", got, chatHistoryLimit)
	}
	var buf bytes.Buffer
	if err := vm.ExportMarkdown(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{"# Main\n", "\n## You · ", "question 0\n", "PONG: question 299\n", "\n## Assistant · "} {
		if !strings.Contains(md, want) {
			t.Errorf("the export lacks %q:\n%.400s", want, md)
		}
	}
	if n := strings.Count(md, "\n## "); n != 2*turns {
		t.Errorf("%d messages exported, want %d", n, 2*turns)
	}
	if strings.Index(md, "question 0\n") > strings.Index(md, "question 1\n") {
		t.Error("the export is not in order")
	}
}

// TestChatModelPicker: the chat's model field offers the configured providers' models and
// still takes any name.
func TestChatModelPicker(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	c := chatKernel(t, f, true) // provider p, model m
	if _, err := c.AddProvider(context.Background(), client.ProviderConfig{Name: "q", BaseURL: "http://127.0.0.1:2", Model: "qwen2.5"}); err != nil {
		t.Fatal(err)
	}
	vm := NewChatVM(c, ChatOptions{})
	u := chatTestView(t, vm)
	if got := vm.ModelChoices(); !slices.Equal(got, []string{"m", "qwen2.5"}) && !slices.Equal(got, []string{"qwen2.5", "m"}) {
		t.Fatalf("model choices %q", got)
	}
	u.v.instrModel.SetText("qwen2.5")
	u.v.saveInstructions()
	u.settle()
	if in := vm.Instructions(); in.Model != "qwen2.5" {
		t.Errorf("instructions after picking: %+v", in)
	}
	if body := chatLastBody(t, f, "/api/v1/sessions/main/instructions"); !strings.Contains(body, `"model":"qwen2.5"`) {
		t.Errorf("PUT instructions %s", body)
	}
}
