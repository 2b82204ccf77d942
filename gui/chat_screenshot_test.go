package gui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/color"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// TestChatScreenshotTool: with a capture function the chat's turns offer the model the
// client-executed screenshot tool; a tool_request for it is answered with the capture as a PNG
// image (named by the time, the size in the text), a failed capture with an error result, and
// a session of a group offers no screenshot tool at all.
func TestChatScreenshotTool(t *testing.T) {
	test.NewTempApp(t)
	shot := testPNG(t, color.NRGBA{20, 90, 200, 255})
	var capErr error
	captures := 0
	f := clienttest.New()
	var offered [][]string
	answers := make(chan client.ToolAnswer, 4)
	f.Chat = func(ctx context.Context, req client.ChatRequest, turnID string, send func(client.ChatEvent)) {
		var names []string
		for _, ct := range req.ClientTools {
			names = append(names, ct.Name)
		}
		offered = append(offered, names)
		if !slices.Contains(names, "screenshot") {
			send(client.ChatEvent{Type: client.EventFinal, TurnID: turnID, Session: req.Session, Text: "no screenshot tool"})
			return
		}
		call := &client.ToolEvent{ID: "call_1", Name: "screenshot", Arguments: "{}", Status: "waiting"}
		send(client.ChatEvent{Type: client.EventToolRequest, TurnID: turnID, Tool: call})
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		a, err := f.WaitToolAnswer(ctx, turnID, "call_1")
		if err != nil {
			send(client.ChatEvent{Type: client.EventError, TurnID: turnID, Text: err.Error()})
			return
		}
		answers <- a
		send(client.ChatEvent{Type: client.EventFinal, TurnID: turnID, Session: req.Session, Text: fmt.Sprintf("saw %d images", len(a.Images))})
	}
	svc := chatKernel(t, f, true)
	var tr chatTrace
	vm := NewChatVM(svc, ChatOptions{Trace: tr.trace, Screenshot: func(context.Context) ([]byte, error) {
		captures++
		return shot, capErr
	}})
	chatReload(t, vm)

	chatSend(t, vm, "what is on my screen?")
	var a client.ToolAnswer
	select {
	case a = <-answers:
	default:
		t.Fatalf("no answer; offered %v, messages %+v, trace %v", offered, vm.Messages(), tr.get())
	}
	if a.IsError || len(a.Images) != 1 || a.Images[0].MIME != "image/png" || !bytes.Equal(a.Images[0].Data, shot) ||
		!strings.HasPrefix(a.Images[0].Name, "screenshot-") || !strings.Contains(a.Content, "(40×30)") || !strings.Contains(a.Content, a.Images[0].Name) {
		t.Fatalf("answer %+v", a)
	}
	if m, _ := vm.Message(1); m.Text != "saw 1 images" || len(m.Tools) != 1 || m.Tools[0].Name != "screenshot" {
		t.Fatalf("reply %+v", m)
	}

	capErr = errors.New("no screenshot: neither the XDG desktop portal nor an X11 display is available")
	chatSend(t, vm, "and now?")
	if a := <-answers; !a.IsError || a.Content != capErr.Error() || len(a.Images) != 0 {
		t.Fatalf("answer to a failed capture %+v", a)
	}
	capErr = fmt.Errorf("cancelled: %w", context.Canceled)
	chatSend(t, vm, "once more")
	if a := <-answers; !a.IsError || a.Content != "the owner cancelled the screenshot" {
		t.Fatalf("answer to a cancelled capture %+v", a)
	}

	// A group's session: no screenshot tool.
	if _, err := svc.CreateSession(context.Background(), client.Session{ID: "grp", Title: "Group", Scope: "group:42"}); err != nil {
		t.Fatal(err)
	}
	chatReload(t, vm)
	if err := vm.SelectSession(context.Background(), "grp"); err != nil {
		t.Fatal(err)
	}
	chatSend(t, vm, "hello group")
	if got := offered[len(offered)-1]; len(got) != 0 {
		t.Errorf("a group's session offered %v", got)
	}
	if captures != 3 {
		t.Errorf("%d captures, want 3", captures)
	}

	// Without a capture function no tool is offered.
	vm2 := NewChatVM(svc, ChatOptions{})
	chatReload(t, vm2)
	chatSend(t, vm2, "hi")
	if got := offered[len(offered)-1]; len(got) != 0 {
		t.Errorf("offered %v without a capture function", got)
	}
}
