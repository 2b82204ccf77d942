package gui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/png" // the capture's size, for the result's text
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// The model's screenshot tool: with [ChatOptions].Screenshot each turn of the owner's sessions
// brings a client-executed tool "screenshot" (docs/api.md, "Client-executed tools"). When the
// model calls it, the kernel streams a "tool_request"; the view-model captures the screen and
// answers with the PNG as the result's image, which the kernel sends to a vision model, stores
// with the result as an image block and reads (OCR) for memory search. The tool is not offered
// in a session shared with others (a channel's group or public scope): what is on the owner's
// screen stays the owner's.

const screenshotTool = "screenshot"

var screenshotSpec = client.ClientTool{
	Name: screenshotTool,
	Description: "Capture the owner's screen (the whole desktop) as a PNG image: you see it, and the text in it is read for you. " +
		"The desktop may ask the owner first. Use it when the owner asks about something on their screen.",
	Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
}

// clientToolsLocked are the client tools of a turn in session id (vm.mu held): the screenshot
// tool, when the view-model can capture and the session is the owner's own.
func (vm *ChatVM) clientToolsLocked(id string) []client.ClientTool {
	if vm.opts.Screenshot == nil {
		return nil
	}
	for _, s := range vm.sessions {
		if s.ID == id && s.Scope != "" && s.Scope != "private" {
			return nil
		}
	}
	return []client.ClientTool{screenshotSpec}
}

// answerScreenshot captures the screen for call of turn and answers the kernel with it (on its
// own goroutine, which vm.wg counts).
func (vm *ChatVM) answerScreenshot(turnID, callID string) {
	defer vm.wg.Done()
	ctx, cancel := context.WithTimeout(context.Background(), screenshotTimeout)
	defer cancel()
	data, err := vm.opts.Screenshot(ctx)
	ans := screenshotAnswer(data, err, time.Now())
	actx, acancel := context.WithTimeout(context.Background(), chatCallTimeout)
	defer acancel()
	if err := vm.svc.AnswerToolCall(actx, turnID, callID, ans); err != nil {
		// The turn went on without it (stopped, timed out): its result says so.
		vm.trace("error", Tf("Could not send the screenshot: %v", err))
	}
}

// screenshotAnswer is the tool's result for a capture (data, err) taken at taken.
func screenshotAnswer(data []byte, err error, taken time.Time) client.ToolAnswer {
	switch {
	case errors.Is(err, context.Canceled):
		return client.ToolAnswer{Content: "the owner cancelled the screenshot", IsError: true}
	case err != nil:
		return client.ToolAnswer{Content: err.Error(), IsError: true}
	case len(data) > client.MaxToolAnswerImageBytes:
		return client.ToolAnswer{Content: fmt.Sprintf("the screenshot has %d bytes, more than the %d an image may have", len(data), client.MaxToolAnswerImageBytes), IsError: true}
	}
	name := "screenshot-" + taken.Format("20060102-150405") + ".png"
	text := fmt.Sprintf("A screenshot of the owner's screen, %s", name)
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil {
		text = fmt.Sprintf("A screenshot of the owner's screen (%d×%d), %s", cfg.Width, cfg.Height, name)
	}
	return client.ToolAnswer{Content: text, Images: []client.ToolImage{{MIME: "image/png", Data: data, Name: name}}}
}
