//go:build integration

package kernel_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/memory/ocr"
)

// TestClientToolImages: a client tool (the desktop app's screenshot) answered with an image:
// answers with bad images are refused (ErrInvalid) and the call keeps waiting; the good one's
// image goes to the vision model with the result, is stored with the result as an image block
// whose text OCR read, the result shows that text, and memory search finds the result by it.
func TestClientToolImages(t *testing.T) {
	dir, err := ocr.ResolveModelsDir("", os.Getenv, "")
	if err != nil {
		needTool(t, "OCR models missing: run `make ocr-models`", err)
	}
	k := newMemKernel(t, memOptions{OCR: ocr.Assets{Runtime: testRuntime(t), ModelsDir: dir}})
	shot, err := os.ReadFile("../memory/ocr/testdata/attachment.webp") // "WebP attachment 2024"
	if err != nil {
		t.Fatal(err)
	}
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewServer(t)
	ctx := context.Background()
	svc := k.Service()
	yes := true
	if _, err := svc.AddProvider(ctx, client.ProviderConfig{Name: "v", BaseURL: fake.URL(), Model: "m", Vision: &yes}); err != nil {
		t.Fatal(err)
	}
	fake.Script(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "screenshot"}}}, llmtest.Reply{Text: "I see a WebP attachment."})

	big := append(bytes.Clone(pngBuf.Bytes()), make([]byte, client.MaxToolAnswerImageBytes)...)
	bad := []struct {
		name string
		imgs []client.ToolImage
		want string
	}{
		{"not a vision type", []client.ToolImage{{MIME: "image/tiff", Data: pngBuf.Bytes()}}, `"image/tiff"`},
		{"bytes of another type", []client.ToolImage{{MIME: "image/jpeg", Data: pngBuf.Bytes()}}, "says image/jpeg but its bytes are image/png"},
		{"empty", []client.ToolImage{{MIME: "image/png"}}, "is empty"},
		{"too large", []client.ToolImage{{MIME: "image/png", Data: big}}, "at most 20971520"},
		{"too many", make([]client.ToolImage, client.MaxToolAnswerImages+1), "5 images, at most 4"},
	}
	var refusals []string
	res, err := svc.Chat(ctx, client.ChatRequest{Input: "what is on my screen?", ClientTools: []client.ClientTool{{Name: "screenshot", Description: "Capture the screen."}}},
		func(ev client.ChatEvent) {
			if ev.Type != client.EventToolRequest {
				return
			}
			for _, b := range bad {
				err := svc.AnswerToolCall(ctx, ev.TurnID, ev.Tool.ID, client.ToolAnswer{Content: "x", Images: b.imgs})
				if !errors.Is(err, client.ErrInvalid) || !strings.Contains(err.Error(), b.want) {
					refusals = append(refusals, b.name+": "+errString(err))
				}
			}
			if err := svc.AnswerToolCall(ctx, ev.TurnID, ev.Tool.ID, client.ToolAnswer{Content: "the screen, 283×174",
				Images: []client.ToolImage{{MIME: "image/webp", Data: shot, Name: "screenshot-20260102-030405.webp"}}}); err != nil {
				refusals = append(refusals, "the good answer: "+err.Error())
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refusals {
		t.Error(r)
	}
	if res.Text != "I see a WebP attachment." {
		t.Errorf("reply %q", res.Text)
	}
	// The turn's second request (the others are the kernel's own, a title): the result, then
	// its image in a user message (OpenAI's tool messages take no images).
	var tool llm.Message
	var imgs []llm.Image
	for _, r := range fake.Requests() {
		for i, m := range r.Messages {
			if m.Role == "tool" && i+1 < len(r.Messages) {
				tool, imgs = m, r.Messages[i+1].Images
			}
		}
	}
	if tool.Role != "tool" || len(imgs) != 1 || imgs[0].MIME != "image/webp" || !bytes.Equal(imgs[0].Data, shot) {
		t.Fatalf("the model's tool message: %+v, then images %d", tool, len(imgs))
	}
	squash := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), "")) }
	if !strings.HasPrefix(tool.Content, "the screen, 283×174") || !strings.Contains(squash(tool.Content), "webpattachment2024") {
		t.Errorf("the result the model read: %q; want the answer and the image's text", tool.Content)
	}
	hist, err := svc.History(ctx, "main", 0)
	if err != nil {
		t.Fatal(err)
	}
	var result client.Message
	for _, m := range hist {
		if m.Role == "tool" {
			result = m
		}
	}
	if len(result.Blocks) != 1 || result.Blocks[0].Kind != "image" || result.Blocks[0].Name != "screenshot-20260102-030405.webp" ||
		!strings.Contains(squash(result.Blocks[0].Text), "webpattachment2024") {
		t.Fatalf("the stored result %q holds %+v; want the image block with its text", result.Content, result.Blocks)
	}
	hits, err := svc.SearchMemory(ctx, client.MemoryQuery{Text: "WebP attachment"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, h := range hits {
		found = found || h.ID == result.ID
	}
	if !found {
		t.Errorf("memory search = %+v; want the tool result (%d)", hits, result.ID)
	}
}

func errString(err error) string {
	if err == nil {
		return "accepted"
	}
	return err.Error()
}
