package gui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// chatKernel serves f on a unix socket and returns the real HTTP client to it.
func chatKernel(t *testing.T, f *clienttest.Fake, withProvider bool) *client.HTTP {
	t.Helper()
	c, err := client.Dial(client.Options{Socket: clienttest.ServeUnix(t, f)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if withProvider {
		if _, err := c.AddProvider(context.Background(), client.ProviderConfig{Name: "p", BaseURL: "http://127.0.0.1:1", Model: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// chatTrace records what ChatOptions.Trace receives.
type chatTrace struct {
	mu    sync.Mutex
	lines []string
}

func (tr *chatTrace) trace(kind string, v any) {
	b, _ := json.Marshal(v)
	tr.mu.Lock()
	tr.lines = append(tr.lines, kind+" "+string(b))
	tr.mu.Unlock()
}

func (tr *chatTrace) get() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.lines...)
}

// chatRequests returns the paths of the fake's requests with the given method.
func chatRequests(f *clienttest.Fake, method string) []string {
	var out []string
	for _, r := range f.Requests() {
		if r.Method == method {
			out = append(out, r.Path)
		}
	}
	return out
}

// chatLastBody returns the body of the fake's last request to path.
func chatLastBody(t *testing.T, f *clienttest.Fake, path string) string {
	t.Helper()
	rs := f.Requests()
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Path == path {
			return rs[i].Body
		}
	}
	t.Fatalf("no request to %s", path)
	return ""
}

// chatSend sets the draft, sends it and waits for the turn to end.
func chatSend(t *testing.T, vm *ChatVM, text string) {
	t.Helper()
	vm.SetDraft(text)
	if err := vm.Send(); err != nil {
		t.Fatalf("send %q: %v", text, err)
	}
	vm.Wait()
}

func chatReload(t *testing.T, vm *ChatVM) {
	t.Helper()
	if err := vm.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// chatRoles gives the messages as "role: text" lines.
func chatRoles(ms []ChatMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Role+": "+m.Text)
	}
	return out
}

func chatEqual(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestChatSendStreamsIntoOneReply(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	f.Chat = func(ctx context.Context, req client.ChatRequest, turnID string, send func(client.ChatEvent)) {
		send(client.ChatEvent{Type: client.EventDelta, TurnID: turnID, Text: "Hel"})
		send(client.ChatEvent{Type: client.EventReasoning, TurnID: turnID, Text: "thinking"})
		send(client.ChatEvent{Type: client.EventDelta, TurnID: turnID, Text: "lo **world**"})
		send(client.ChatEvent{Type: client.EventFinal, TurnID: turnID, Session: req.Session, Text: "Hello **world**"})
	}
	var tr chatTrace
	vm := NewChatVM(chatKernel(t, f, false), ChatOptions{Trace: tr.trace})
	chatReload(t, vm)

	var seen []string // the reply as each change showed it
	var busy []bool
	vm.OnChange(func(c ChatChange) {
		switch c.Kind {
		case ChatMessageChanged:
			m, _ := vm.Message(c.Index)
			seen = append(seen, m.Text)
		case ChatBusyChanged:
			busy = append(busy, vm.Busy())
		}
	})
	chatSend(t, vm, "  hi there ")

	chatEqual(t, "messages", chatRoles(vm.Messages()), []string{"user: hi there", "assistant: Hello **world**"})
	chatEqual(t, "reply as it grew", seen, []string{"Hel", "Hello **world**", "Hello **world**", "Hello **world**"})
	if len(busy) != 2 || !busy[0] || busy[1] {
		t.Errorf("busy went %v, want [true false]", busy)
	}
	if m, _ := vm.Message(1); m.Streaming || m.TurnID != "t1" {
		t.Errorf("reply: streaming %v, turn %q", m.Streaming, m.TurnID)
	}
	if vm.Draft() != "" || vm.Busy() {
		t.Errorf("after the turn: draft %q, busy %v", vm.Draft(), vm.Busy())
	}
	body := chatLastBody(t, f, "/api/v1/chat")
	for _, want := range []string{`"session":"main"`, `"input":"hi there"`, `"channel":"gui"`} {
		if !strings.Contains(body, want) {
			t.Errorf("chat request %s lacks %s", body, want)
		}
	}
	chatEqual(t, "trace", tr.get(), []string{
		`history {"session":"main","messages":0}`,
		`message {"role":"user","text":"hi there"}`,
		`message {"role":"assistant","text":"Hello **world**"}`,
	})
	if got := vm.CopyText(1); got != "Hello **world**" {
		t.Errorf("CopyText(1) = %q", got)
	}
	if vm.CopyText(7) != "" {
		t.Error("CopyText of no message is not empty")
	}
}

func TestChatToolCallsRenderWithStatus(t *testing.T) {
	tests := []struct {
		status, label string
		icon          string // resource name of the status icon
	}{
		{"ok", "done", "foreground_check.svg"},
		{"error", "failed", "foreground_error.svg"},
		{"denied", "denied", "foreground_cancel.svg"},
		{"cancelled", "cancelled", "foreground_media-stop.svg"},
		{"timeout", "timed out", "foreground_history.svg"},
		{"skipped", "skipped", "foreground_media-skip-next.svg"},
	}
	for _, tc := range tests {
		t.Run(tc.status, func(t *testing.T) {
			test.NewTempApp(t)
			f := clienttest.New()
			proceed := make(chan struct{})
			f.Chat = func(ctx context.Context, req client.ChatRequest, turnID string, send func(client.ChatEvent)) {
				call := client.ToolEvent{ID: "c1", Name: "shell", Arguments: `{"cmd":"ls"}`, Status: "running"}
				send(client.ChatEvent{Type: client.EventToolCall, TurnID: turnID, Tool: &call})
				<-proceed
				res := client.ToolEvent{ID: "c1", Name: "shell", Result: "result of ls", Status: tc.status}
				send(client.ChatEvent{Type: client.EventToolResult, TurnID: turnID, Tool: &res})
				send(client.ChatEvent{Type: client.EventFinal, TurnID: turnID, Text: "Done."})
			}
			vm := NewChatVM(chatKernel(t, f, false), ChatOptions{})
			u := chatTestView(t, vm)
			v := u.v
			v.input.SetText("list files")
			test.Tap(v.send)

			// While the tool runs, the reply shows it running.
			u.until(func() bool { m, _ := vm.Message(1); return len(m.Tools) == 1 })
			texts, icons := chatTexts(v.bubbles[1].tools)
			chatEqual(t, "running tool row", texts, []string{"shell", "running", `{"cmd":"ls"}`})
			chatEqual(t, "running icon", icons, []string{"foreground_view-refresh.svg"})
			if v.bubbles[1].note.Text != "…" || v.bubbles[1].rich.Visible() {
				t.Errorf("streaming reply: note %q, text shown %v", v.bubbles[1].note.Text, v.bubbles[1].rich.Visible())
			}
			close(proceed)
			u.settle()

			m, _ := vm.Message(1)
			want := ChatTool{ID: "c1", Name: "shell", Arguments: `{"cmd":"ls"}`, Result: "result of ls", Status: tc.status}
			if len(m.Tools) != 1 || m.Tools[0] != want || m.Text != "Done." {
				t.Fatalf("reply %+v, want one tool %+v", m, want)
			}
			texts, icons = chatTexts(v.bubbles[1].tools)
			chatEqual(t, "tool row", texts, []string{"shell", tc.label, `{"cmd":"ls"}`, "result of ls"})
			chatEqual(t, "icon", icons, []string{tc.icon})
			if v.bubbles[1].note.Visible() || v.bubbles[1].rich.String() != "Done." {
				t.Errorf("finished reply: note %q, text %q", v.bubbles[1].note.Text, v.bubbles[1].rich.String())
			}
		})
	}
}

// chatTexts collects the label texts and icon resource names under o, in order.
func chatTexts(o fyne.CanvasObject) (texts, icons []string) {
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.Label:
			texts = append(texts, w.Text)
		case *widget.Icon:
			if w.Resource != nil {
				icons = append(icons, w.Resource.Name())
			}
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		}
	}
	walk(o)
	return texts, icons
}

func TestChatSendFailures(t *testing.T) {
	png := chatPNG(t)
	tests := []struct {
		name     string
		session  string // "" : main
		provider bool
		dead     bool // the kernel is gone
		want     []string
		draft    string // after the failure
		atts     int
	}{
		{
			name: "unknown session", session: "ghost", provider: true,
			want:  []string{`error: Not sent: chat: unknown session "ghost" (HTTP 404)`},
			draft: "hello", atts: 1,
		},
		{
			name: "kernel gone", dead: true, provider: true,
			want: []string{"error: Not sent: "}, draft: "hello", atts: 1,
		},
		{
			name: "turn failed", provider: false,
			want: []string{"user: hello", "error: no provider configured: add one with `waiter provider add`"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			test.NewTempApp(t)
			f := clienttest.New()
			var svc client.Service = chatKernel(t, f, tc.provider)
			if tc.dead {
				c, err := client.Dial(client.Options{Socket: filepath.Join(t.TempDir(), "gone.sock")})
				if err != nil {
					t.Fatal(err)
				}
				svc = c
			}
			var tr chatTrace
			vm := NewChatVM(svc, ChatOptions{Session: tc.session, Trace: tr.trace})
			if err := vm.AddAttachmentData("dot.png", "", png); err != nil {
				t.Fatal(err)
			}
			chatSend(t, vm, "hello")

			got := chatRoles(vm.Messages())
			if len(got) != len(tc.want) {
				t.Fatalf("messages %q, want %q", got, tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("message %d = %q, want prefix %q", i, got[i], tc.want[i])
				}
			}
			if vm.Draft() != tc.draft || len(vm.Attachments()) != tc.atts {
				t.Errorf("draft %q with %d attachments, want %q with %d", vm.Draft(), len(vm.Attachments()), tc.draft, tc.atts)
			}
			if vm.Busy() {
				t.Error("still busy")
			}
			lines := tr.get()
			if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], "error ") {
				t.Errorf("trace %q does not end with the error", lines)
			}
		})
	}
}

func TestChatFailedSendKeepsWhatWasTypedSince(t *testing.T) {
	test.NewTempApp(t)
	block := make(chan struct{})
	svc := &chatBlockingService{Service: chatKernel(t, clienttest.New(), true), release: block}
	vm := NewChatVM(svc, ChatOptions{})
	vm.SetDraft("first")
	if err := vm.Send(); err != nil {
		t.Fatal(err)
	}
	if err := vm.Send(); !errors.Is(err, ErrChatBusy) {
		t.Errorf("second send while busy: %v, want ErrChatBusy", err)
	}
	vm.SetDraft("second")
	close(block)
	vm.Wait()
	if got := vm.Draft(); got != "first\nsecond" {
		t.Errorf("draft %q, want the failed one before the new one", got)
	}
	if err := vm.Send(); err != nil {
		t.Fatal(err)
	}
	vm.Wait()
	if err := vm.Send(); !errors.Is(err, ErrChatEmpty) {
		t.Errorf("empty send: %v, want ErrChatEmpty", err)
	}
}

// chatBlockingService fails its first Chat once release is closed, as a dropped connection does.
type chatBlockingService struct {
	client.Service
	release chan struct{}
	once    sync.Once
}

func (s *chatBlockingService) Chat(ctx context.Context, req client.ChatRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
	first := false
	s.once.Do(func() { first = true })
	if first {
		<-s.release
		return client.ChatResult{}, errors.New("chat: connection reset")
	}
	return s.Service.Chat(ctx, req, emit)
}

func TestChatStopCancelsTheTurn(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	ended := make(chan error, 1)
	f.Chat = func(ctx context.Context, req client.ChatRequest, turnID string, send func(client.ChatEvent)) {
		send(client.ChatEvent{Type: client.EventDelta, TurnID: turnID, Text: "working"})
		<-ctx.Done()
		ended <- ctx.Err()
	}
	vm := NewChatVM(chatKernel(t, f, false), ChatOptions{})
	u := chatTestView(t, vm)
	v := u.v
	if !v.stop.Disabled() {
		t.Error("Stop enabled while idle")
	}
	test.Type(v.input, "long job")
	v.input.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	u.until(func() bool { m, _ := vm.Message(1); return m.Text == "working" })
	u.drain()
	if v.stop.Disabled() || !v.send.Disabled() {
		t.Errorf("while busy: stop disabled %v, send disabled %v", v.stop.Disabled(), v.send.Disabled())
	}
	test.Tap(v.stop)
	u.settle()

	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Errorf("the kernel's turn ended with %v", err)
	}
	if got := chatRequests(f, "POST"); len(got) != 2 || got[1] != "/api/v1/turns/t1/cancel" {
		t.Errorf("POSTs %q, want the chat then its cancel", got)
	}
	m, _ := vm.Message(1)
	if !m.Stopped || m.Streaming || m.Text != "working" {
		t.Errorf("reply %+v, want stopped with its partial text", m)
	}
	if len(vm.Messages()) != 2 || vm.Busy() {
		t.Errorf("messages %q, busy %v", chatRoles(vm.Messages()), vm.Busy())
	}
	if !v.stop.Disabled() || v.send.Disabled() {
		t.Error("buttons not back to idle")
	}
	if got := v.bubbles[1].note.Text; got != "Stopped" {
		t.Errorf("note %q", got)
	}
}

func TestChatStopBeforeTheTurnStarts(t *testing.T) {
	test.NewTempApp(t)
	release := make(chan struct{})
	svc := &chatBlockingService{Service: chatKernel(t, clienttest.New(), true), release: release}
	vm := NewChatVM(svc, ChatOptions{})
	chatReload(t, vm)
	vm.SetDraft("never mind")
	if err := vm.Send(); err != nil {
		t.Fatal(err)
	}
	vm.Stop()
	close(release)
	vm.Wait()
	m, _ := vm.Message(1)
	if !m.Stopped || vm.Busy() {
		t.Errorf("reply %+v busy %v", m, vm.Busy())
	}
}

func TestChatDraftsPerSession(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	vm := NewChatVM(chatKernel(t, f, true), ChatOptions{})
	u := chatTestView(t, vm)
	v := u.v
	ctx := context.Background()

	test.Type(v.input, "draft for main")
	if _, err := vm.NewSession(ctx, "Second"); err != nil {
		t.Fatal(err)
	}
	u.settle()
	second := vm.Current()
	if v.input.Text != "" || second == "main" {
		t.Errorf("new session %s shows draft %q", second, v.input.Text)
	}
	test.Type(v.input, "draft for second")
	if err := vm.AddAttachmentData("notes.txt", "", []byte("some notes")); err != nil {
		t.Fatal(err)
	}
	u.settle()

	// Switch by the sessions list.
	steps := []struct {
		session, draft string
		atts           int
	}{
		{"main", "draft for main", 0},
		{second, "draft for second", 1},
		{"main", "draft for main", 0},
	}
	for _, s := range steps {
		for i, ls := range v.sessions {
			if ls.ID == s.session {
				v.sessionList.Select(i)
			}
		}
		u.settle()
		if vm.Current() != s.session {
			t.Fatalf("current %s, want %s", vm.Current(), s.session)
		}
		if v.input.Text != s.draft || vm.Draft() != s.draft || len(vm.Attachments()) != s.atts {
			t.Errorf("%s: input %q, draft %q, %d attachments; want %q, %d", s.session, v.input.Text, vm.Draft(), len(vm.Attachments()), s.draft, s.atts)
		}
		if len(v.chips.Objects) != s.atts {
			t.Errorf("%s: %d chips", s.session, len(v.chips.Objects))
		}
	}
	// A reconnect reloads; the drafts stay.
	chatReload(t, vm)
	u.settle()
	if v.input.Text != "draft for main" {
		t.Errorf("after reload: %q", v.input.Text)
	}
	if got := len(v.sessions); got != 2 {
		t.Errorf("list shows %d sessions", got)
	}
	test.Tap(v.send)
	u.settle()
	chatEqual(t, "main", chatRoles(vm.Messages()), []string{"user: draft for main", "assistant: PONG: draft for main"})
	if len(v.bubbles) != 2 || v.input.Text != "" {
		t.Errorf("%d bubbles, input %q", len(v.bubbles), v.input.Text)
	}
	if err := vm.SelectSession(ctx, second); err != nil {
		t.Fatal(err)
	}
	u.settle()
	if len(vm.Messages()) != 0 || len(v.bubbles) != 0 || v.input.Text != "draft for second" {
		t.Errorf("second: %q, %d bubbles, input %q", chatRoles(vm.Messages()), len(v.bubbles), v.input.Text)
	}
}

func TestChatEnterSendsShiftEnterAddsALine(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	vm := NewChatVM(chatKernel(t, f, true), ChatOptions{})
	u := chatTestView(t, vm)
	v := u.v

	test.Type(v.input, "line one")
	v.input.KeyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	v.input.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	v.input.KeyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	test.Type(v.input, "line two")
	if v.input.Text != "line one\nline two" {
		t.Fatalf("input %q", v.input.Text)
	}
	if got := chatRequests(f, "POST"); len(got) != 1 { // the provider only
		t.Fatalf("Shift+Enter sent: %q", got)
	}
	v.input.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEnter})
	u.settle()
	if v.input.Text != "" {
		t.Errorf("input after send %q", v.input.Text)
	}
	chatEqual(t, "messages", chatRoles(vm.Messages()), []string{"user: line one\nline two", "assistant: PONG: line one\nline two"})
	if got := v.bubbles[1].rich.String(); got != "PONG: line one line two" && got != "PONG: line one\nline two" {
		t.Errorf("reply shows %q", got)
	}
	// Enter on an empty input sends nothing.
	v.input.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	u.settle()
	if got := chatRequests(f, "POST"); len(got) != 2 {
		t.Errorf("POSTs %q", got)
	}
}

// chatPNG is a small real PNG.
func chatPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 6))
	for i := range img.Pix {
		img.Pix[i] = 0x80
	}
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// chatFiles returns a temp dir and a function that writes a file into it, returning its path.
func chatFiles(t *testing.T) (string, func(name string, b []byte) string) {
	dir := t.TempDir()
	return dir, func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

func TestChatAttachments(t *testing.T) {
	dir, write := chatFiles(t)
	pngData := chatPNG(t)
	tests := []struct {
		name    string
		path    string
		kind    string // "" : refused
		wantErr string
	}{
		{"text", write("notes.md", []byte("# Notes\n\nbuy milk\n")), "text", ""},
		{"chinese text", write("笔记.txt", []byte("买牛奶\n")), "text", ""},
		{"png", write("dot.png", pngData), "image", ""},
		{"binary", write("blob.bin", []byte{0x7f, 'E', 'L', 'F', 0, 1, 2, 3, 0xff, 0xfe}), "", "not text, an image, audio or video"},
		{"latin1 text", write("old.txt", []byte("caf\xe9 cr\xe8me\n")), "", "not text, an image, audio or video"},
		{"directory", dir, "", "not a regular file"},
		{"missing", filepath.Join(dir, "nope"), "", "no such file"},
		{"empty", write("empty.txt", nil), "", "is empty"},
	}
	test.NewTempApp(t)
	f := clienttest.New()
	vm := NewChatVM(chatKernel(t, f, true), ChatOptions{})
	u := chatTestView(t, vm)
	v := u.v
	var kinds []string
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(vm.Attachments())
			err := vm.AddAttachment(tc.path)
			if tc.kind == "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("AddAttachment = %v, want an error with %q", err, tc.wantErr)
				}
				if len(vm.Attachments()) != before {
					t.Error("refused file was added")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a := vm.Attachments()[before]
			if a.Kind != tc.kind || a.Name != filepath.Base(tc.path) {
				t.Errorf("attachment %s %q", a.Kind, a.Name)
			}
			kinds = append(kinds, a.Kind)
		})
	}
	chatEqual(t, "kinds", kinds, []string{"text", "text", "image"})
	u.settle()
	if len(v.chips.Objects) != 3 {
		t.Errorf("%d chips", len(v.chips.Objects))
	}
	// Remove the Chinese note with its chip's button, then drop a file on the window.
	chip := v.chips.Objects[1].(*fyne.Container)
	test.Tap(chip.Objects[2].(*widget.Button))
	v.dropped(fyne.NewPos(5, 5), []fyne.URI{storage.NewFileURI(write("dropped.txt", []byte("dropped text")))})
	u.settle()
	got := vm.Attachments()
	if len(got) != 3 || got[1].Name != "dot.png" || got[2].Name != "dropped.txt" || len(v.chips.Objects) != 3 {
		t.Fatalf("after remove and drop: %+v", got)
	}
	chatShot(t, u, "chat-attachment-chips.png")

	chatSend(t, vm, "see files")
	u.settle()
	body := chatLastBody(t, f, "/api/v1/chat")
	var req client.ChatRequest
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Attachments) != 3 || req.Attachments[0].Text != "# Notes\n\nbuy milk\n" ||
		!bytes.Equal(req.Attachments[1].Data, pngData) || req.Attachments[1].MIME != "image/png" {
		t.Errorf("sent attachments %+v", req.Attachments)
	}
	if len(vm.Attachments()) != 0 || len(v.chips.Objects) != 0 {
		t.Error("pending attachments not cleared by the send")
	}
	user, _ := vm.Message(0)
	if len(user.Attachments) != 3 || user.Attachments[1].Size != int64(len(pngData)) || user.Attachments[1].Data == nil {
		t.Errorf("user message attachments %+v", user.Attachments)
	}
	// The image shows as a thumbnail.
	if n := chatImages(v.bubbles[0].atts); n != 1 {
		t.Errorf("%d thumbnails", n)
	}
	chatShot(t, u, "chat-attachment-bubble.png")
}

// chatShot writes the chat window's picture to HOLOGRAM_SHOT_DIR, when set, to look at.
func chatShot(t *testing.T, u *chatUI, name string) {
	t.Helper()
	dir := os.Getenv("HOLOGRAM_SHOT_DIR")
	if dir == "" {
		return
	}
	u.w.Resize(fyne.NewSize(800, 600))
	var out bytes.Buffer
	if err := png.Encode(&out, u.w.Canvas().Capture()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestChatStreamedAttachments: a video and an image over client.InlineBytes are kept as paths
// and streamed to the kernel (POST /api/v1/uploads) when the message is sent, named in the chat
// request by their upload IDs; a video over the kernel's upload limit gives the message back
// without a byte uploaded.
func TestChatStreamedAttachments(t *testing.T) {
	dir, write := chatFiles(t)
	mp4 := append([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), bytes.Repeat([]byte{7}, 4096)...)
	bigPNG := append(chatPNG(t), bytes.Repeat([]byte{0}, client.InlineBytes)...)
	test.NewTempApp(t)
	f := clienttest.New()
	vm := NewChatVM(chatKernel(t, f, true), ChatOptions{})
	u := chatTestView(t, vm)
	for _, p := range []string{write("clip.mp4", mp4), write("big.png", bigPNG)} {
		if err := vm.AddAttachment(p); err != nil {
			t.Fatal(err)
		}
	}
	if got := vm.Attachments(); len(got) != 2 || got[0].Kind != "video" || got[0].Size != int64(len(mp4)) || got[1].Kind != "image" {
		t.Fatalf("pending %+v", got)
	}
	chatSend(t, vm, "our holiday")
	u.settle()
	if m, _ := vm.Message(1); m.Uploading != "" {
		t.Errorf("progress left on the reply: %q", m.Uploading)
	}
	var req client.ChatRequest
	if err := json.Unmarshal([]byte(chatLastBody(t, f, "/api/v1/chat")), &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Attachments) != 2 {
		t.Fatalf("sent %+v", req.Attachments)
	}
	for i, want := range [][]byte{mp4, bigPNG} {
		a := req.Attachments[i]
		got, ok := f.Uploaded(a.Upload)
		if a.Data != nil || !ok || !bytes.Equal(got, want) {
			t.Errorf("attachment %d (%s): upload %q received %v (%d bytes), inline %d bytes", i, a.Kind, a.Upload, ok, len(got), len(a.Data))
		}
	}
	if m, _ := vm.Message(1); m.Text != "PONG: our holiday" {
		t.Errorf("reply %q", m.Text)
	}

	// Over the kernel's limit (a sparse file): refused before the upload, the draft given back.
	huge := filepath.Join(dir, "huge.mp4")
	if err := os.WriteFile(huge, mp4, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, clienttest.MaxUploadBytes+1); err != nil {
		t.Fatal(err)
	}
	if err := vm.AddAttachment(huge); err != nil {
		t.Fatal(err)
	}
	uploads := func() (n int) {
		for _, r := range f.Requests() {
			if strings.HasPrefix(r.Path, "/api/v1/uploads") {
				n++
			}
		}
		return n
	}
	before := uploads()
	chatSend(t, vm, "too big")
	u.settle()
	msgs := vm.Messages()
	if last := msgs[len(msgs)-1]; last.Role != ChatRoleError || !strings.Contains(last.Text, "more than the kernel's upload limit (64 MiB") {
		t.Errorf("last message %v %q", last.Role, last.Text)
	}
	if uploads() != before || vm.Draft() != "too big" || len(vm.Attachments()) != 1 {
		t.Errorf("%d uploads sent, draft %q, %d pending", uploads()-before, vm.Draft(), len(vm.Attachments()))
	}
}

func chatImages(o fyne.CanvasObject) int {
	switch o := o.(type) {
	case *canvas.Image:
		return 1
	case *fyne.Container:
		n := 0
		for _, c := range o.Objects {
			n += chatImages(c)
		}
		return n
	}
	return 0
}

func TestChatAttachmentLimits(t *testing.T) {
	test.NewTempApp(t)
	vm := NewChatVM(chatKernel(t, clienttest.New(), true), ChatOptions{})
	for i := range client.MaxAttachments {
		if err := vm.AddAttachmentData("n.txt", "", []byte("note")); err != nil {
			t.Fatalf("attachment %d: %v", i, err)
		}
	}
	if err := vm.AddAttachmentData("n.txt", "", []byte("note")); err == nil {
		t.Error("attachment over the limit accepted")
	}
	if err := vm.AddAttachmentData("big.txt", "", make([]byte, client.MaxAttachmentBytes+1)); err == nil {
		t.Error("oversized attachment accepted")
	}
	vm.RemoveAttachment(99) // out of range: nothing
	if n := len(vm.Attachments()); n != client.MaxAttachments {
		t.Errorf("%d attachments", n)
	}
	// Attachments alone are sent under their names.
	for range client.MaxAttachments - 1 {
		vm.RemoveAttachment(0)
	}
	if err := vm.Send(); err != nil {
		t.Fatal(err)
	}
	vm.Wait()
	if m, _ := vm.Message(0); m.Text != "[n.txt]" {
		t.Errorf("input %q", m.Text)
	}
}

// TestChatVoiceMessage: a voice message sent alone goes without text (the kernel makes its
// transcript the message); the kernel's note on it (here: no speech model) shows under the reply.
func TestChatVoiceMessage(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	vm := NewChatVM(chatKernel(t, f, true), ChatOptions{})
	u := chatTestView(t, vm)
	m4a := append([]byte("\x00\x00\x00\x1cftypM4A \x00\x00\x00\x00M4A mp42isom"), make([]byte, 64)...)
	for _, c := range []struct {
		name string
		data []byte
		mime string
	}{
		{"voice.ogg", append([]byte("OggS\x00\x02"), make([]byte, 64)...), "audio/ogg"},
		{"voice.m4a", m4a, "audio/mp4"},
	} {
		if err := vm.AddAttachmentData(c.name, "", c.data); err != nil {
			t.Fatal(err)
		}
		if a := vm.Attachments()[len(vm.Attachments())-1]; a.Kind != "audio" || a.MIME != c.mime {
			t.Errorf("%s attached as %s %s", c.name, a.Kind, a.MIME)
		}
	}
	if err := vm.AddAttachmentData("clip.mp4", "", m4a); err != nil {
		t.Fatal(err)
	}
	if a := vm.Attachments()[len(vm.Attachments())-1]; a.Kind != "video" || a.MIME != "video/mp4" {
		t.Errorf("clip.mp4 attached as %s %s, want a video", a.Kind, a.MIME)
	}
	vm.RemoveAttachment(len(vm.Attachments()) - 1)
	if err := vm.Send(); err != nil {
		t.Fatal(err)
	}
	vm.Wait()
	u.settle()
	var req client.ChatRequest
	if err := json.Unmarshal([]byte(chatLastBody(t, f, "/api/v1/chat")), &req); err != nil {
		t.Fatal(err)
	}
	if req.Input != "" || len(req.Attachments) != 2 {
		t.Fatalf("sent %q with %d attachments; want no text", req.Input, len(req.Attachments))
	}
	if m, _ := vm.Message(0); m.Text != "[voice.ogg, voice.m4a]" {
		t.Errorf("shown as %q", m.Text)
	}
	reply, _ := vm.Message(1)
	if len(reply.Notes) != 2 || !strings.Contains(reply.Notes[0], "voice.ogg was not transcribed") {
		t.Fatalf("notes %q", reply.Notes)
	}
	if note := u.v.bubbles[1].note; !note.Visible() || !strings.Contains(note.Text, "voice.m4a was not transcribed") {
		t.Errorf("the reply's note shows %q (visible %v)", note.Text, note.Visible())
	}
}

func TestChatQuickModeCreatesItsSession(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	vm := NewChatVM(chatKernel(t, f, true), ChatOptions{Quick: true})
	u := chatTestView(t, vm)
	v, w := u.v, u.w
	if got := chatRequests(f, "POST"); len(got) != 2 || got[1] != "/api/v1/sessions" {
		t.Fatalf("POSTs %q", got)
	}
	if b := chatLastBody(t, f, "/api/v1/sessions"); !strings.Contains(b, `"id":"quick"`) || !strings.Contains(b, `"title":"Quick chat"`) {
		t.Errorf("created %s", b)
	}
	if vm.Current() != "quick" || vm.Sessions() != nil || v.sessionList != nil || v.instr != nil {
		t.Errorf("quick: current %q, sessions %v", vm.Current(), vm.Sessions())
	}
	if err := vm.SelectSession(context.Background(), "main"); err == nil {
		t.Error("quick chat switched session")
	}
	if _, err := vm.NewSession(context.Background(), "x"); err == nil {
		t.Error("quick chat made a session")
	}
	chatSend(t, vm, "ping")
	u.settle()
	if !strings.Contains(chatLastBody(t, f, "/api/v1/chat"), `"session":"quick"`) {
		t.Error("the turn did not go to the quick session")
	}
	// A second quick window finds the session and creates none.
	vm2 := NewChatVM(chatKernel(t, f, false), ChatOptions{Quick: true})
	chatReload(t, vm2)
	if got := chatRequests(f, "POST"); len(got) != 3 {
		t.Errorf("POSTs %q", got)
	}
	chatEqual(t, "history", chatRoles(vm2.Messages()), []string{"user: ping", "assistant: PONG: ping"})

	w.Resize(fyne.NewSize(420, 360))
	test.AssertRendersToMarkup(t, "chat_quick.xml", w.Canvas())
}

func TestChatInstructions(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	vm := NewChatVM(chatKernel(t, f, true), ChatOptions{})
	u := chatTestView(t, vm)
	v := u.v
	v.instr.Open(0)
	v.instrPrompt.SetText("Answer in French.")
	v.instrModel.SetText(" big-model ")
	test.Tap(v.instrSave)
	u.settle()
	if got := vm.Instructions(); got != (client.Instructions{SystemPrompt: "Answer in French.", Model: "big-model"}) {
		t.Errorf("instructions %+v", got)
	}
	if b := chatLastBody(t, f, "/api/v1/sessions/main/instructions"); !strings.Contains(b, "Answer in French.") {
		t.Errorf("sent %s", b)
	}
	// Another session has its own; coming back shows main's again.
	if _, err := vm.NewSession(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	u.settle()
	if v.instrPrompt.Text != "" {
		t.Errorf("new session shows prompt %q", v.instrPrompt.Text)
	}
	if err := vm.SelectSession(context.Background(), "main"); err != nil {
		t.Fatal(err)
	}
	u.settle()
	if v.instrPrompt.Text != "Answer in French." || v.instrModel.Text != "big-model" {
		t.Errorf("main shows %q %q", v.instrPrompt.Text, v.instrModel.Text)
	}
}

func TestChatLoadErrorShowsBanner(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	f.Token = "secret"
	c, err := client.Dial(client.Options{Socket: clienttest.ServeUnix(t, f)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	vm := NewChatVM(c, ChatOptions{})
	u := chatTestView(t, vm)
	v := u.v
	if !v.banner.Visible() || !strings.Contains(v.banner.Text, "unauthorized") && !strings.Contains(v.banner.Text, "token") {
		t.Errorf("banner visible %v: %q", v.banner.Visible(), v.banner.Text)
	}
	if !errors.Is(vm.Err(), client.ErrUnauthorized) {
		t.Errorf("Err = %v", vm.Err())
	}
}

func TestChatCopyButton(t *testing.T) {
	a := test.NewTempApp(t)
	vm := NewChatVM(chatKernel(t, clienttest.New(), true), ChatOptions{})
	u := chatTestView(t, vm)
	v := u.v
	chatSend(t, vm, "copy me")
	u.settle()
	test.Tap(v.bubbles[1].copy)
	if got := a.Clipboard().Content(); got != "PONG: copy me" {
		t.Errorf("clipboard %q", got)
	}
}

func TestChatViewMarkup(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	f.Chat = func(ctx context.Context, req client.ChatRequest, turnID string, send func(client.ChatEvent)) {
		if req.Input == "fail" {
			send(client.ChatEvent{Type: client.EventError, TurnID: turnID, Text: "provider p: HTTP 500"})
			return
		}
		call := client.ToolEvent{ID: "c1", Name: "time_now", Arguments: "{}", Result: "2026-01-02T03:04:05Z", Status: "ok"}
		send(client.ChatEvent{Type: client.EventToolResult, TurnID: turnID, Tool: &call})
		send(client.ChatEvent{Type: client.EventFinal, TurnID: turnID,
			Text: "It is **03:04**.\n\n- `UTC`\n- from *the clock*"})
	}
	vm := NewChatVM(chatKernel(t, f, false), ChatOptions{})
	if _, err := vm.NewSession(context.Background(), "Trip planning"); err != nil {
		t.Fatal(err)
	}
	if err := vm.SelectSession(context.Background(), "main"); err != nil {
		t.Fatal(err)
	}
	u := chatTestView(t, vm)
	v, w := u.v, u.w
	w.Resize(fyne.NewSize(800, 600))
	chatSend(t, vm, "What time is it?")
	chatSend(t, vm, "fail")
	if err := vm.AddAttachmentData("notes.txt", "", []byte("notes")); err != nil {
		t.Fatal(err)
	}
	u.settle()
	v.input.SetText("draft")
	test.AssertRendersToMarkup(t, "chat_view.xml", w.Canvas())
}

func TestChatHistory(t *testing.T) {
	tm := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	hist := []client.Message{
		{Role: "system", Content: "ignored"},
		{Role: "user", Content: "look", TurnID: "t1", Time: tm, Blocks: []client.Block{{ID: "b1", Kind: "image", Name: "cat.jpg", Size: 2048}}},
		{Role: "assistant", TurnID: "t1", ToolCalls: []client.ToolCall{{ID: "c1", Name: "ocr", Arguments: `{"b":"b1"}`}, {ID: "c2", Name: "shell"}}},
		{Role: "tool", TurnID: "t1", ToolCallID: "c1", ToolName: "ocr", Content: "a cat", ToolStatus: "ok"},
		{Role: "tool", TurnID: "t1", ToolCallID: "c2", ToolName: "shell", Content: "denied by the user", ToolStatus: "denied"},
		{Role: "assistant", TurnID: "t1", Content: "A cat."},
		{Role: "tool", ToolCallID: "orphan", Content: "x"},
		{Role: "user", Content: "thanks", TurnID: "t2"},
		{Role: "assistant", Content: "You're welcome.", TurnID: "t2"},
	}
	got := chatFromHistory(hist)
	want := []ChatMessage{
		{Role: "user", Text: "look", TurnID: "t1", Time: tm, Attachments: []ChatAttachment{{Kind: "image", Name: "cat.jpg", Size: 2048}}},
		{Role: "assistant", Text: "A cat.", TurnID: "t1", Tools: []ChatTool{
			{ID: "c1", Name: "ocr", Arguments: `{"b":"b1"}`, Result: "a cat", Status: "ok"},
			{ID: "c2", Name: "shell", Result: "denied by the user", Status: "denied"},
		}},
		{Role: "user", Text: "thanks", TurnID: "t2"},
		{Role: "assistant", Text: "You're welcome.", TurnID: "t2"},
	}
	gb, _ := json.MarshalIndent(got, "", " ")
	wb, _ := json.MarshalIndent(want, "", " ")
	if string(gb) != string(wb) {
		t.Errorf("got %s\nwant %s", gb, wb)
	}
	// A history image without data shows its name and size, no thumbnail.
	test.NewTempApp(t)
	row := chatAttachmentRow(got[0].Attachments[0])
	if texts, _ := chatTexts(row); len(texts) != 1 || texts[0] != "cat.jpg (2.0 KB)" || chatImages(row) != 0 {
		t.Errorf("history image row %q", texts)
	}
}

func TestChatThrottle(t *testing.T) {
	now := time.Unix(1000, 0)
	var timers []func()
	var stopped int
	thr := chatThrottle{
		interval: 100 * time.Millisecond,
		now:      func() time.Time { return now },
		do:       func(f func()) { f() },
		after: func(d time.Duration, f func()) func() bool {
			timers = append(timers, f)
			return func() bool { stopped++; return true }
		},
	}
	renders := 0
	render := func() { renders++ }
	steps := []struct {
		advance        time.Duration
		force          bool
		fire           bool // fire the last timer instead of running
		renders, armed int
	}{
		{0, false, false, 1, 0},                      // first: at once
		{10 * time.Millisecond, false, false, 1, 1},  // within the interval: deferred
		{20 * time.Millisecond, false, false, 1, 1},  // still deferred, no second timer
		{80 * time.Millisecond, false, true, 2, 1},   // the timer fires: rendered
		{10 * time.Millisecond, false, false, 2, 2},  // deferred again
		{10 * time.Millisecond, true, false, 3, 2},   // forced: at once, the timer stopped
		{0, false, true, 3, 2},                       // the stopped timer's late run does nothing
		{200 * time.Millisecond, false, false, 4, 2}, // past the interval: at once
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		if s.fire {
			timers[len(timers)-1]()
		} else {
			thr.run(s.force, render)
		}
		if renders != s.renders || len(timers) != s.armed {
			t.Fatalf("step %d: %d renders, %d timers; want %d, %d", i, renders, len(timers), s.renders, s.armed)
		}
	}
	if stopped != 1 {
		t.Errorf("%d timers stopped", stopped)
	}
}

func TestChatSizes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1536, "1.5 KB"}, {5 << 20, "5.0 MB"}} {
		if got := chatSize(tc.n); got != tc.want {
			t.Errorf("chatSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	if got := chatClip("héllo wörld", 5); got != "héllo…" {
		t.Errorf("chatClip = %q", got)
	}
}

func TestChatTranslations(t *testing.T) {
	t.Cleanup(func() { _ = SetLanguage("en") })
	if err := SetLanguage("zh"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Send", "Stop", "Attach", "New session", "Instructions", "System prompt", "You",
		"Assistant", "Stopped", "done", "failed", "denied", "Not sent: %s", "Quick chat",
		"Message (Enter sends, Shift+Enter adds a line)"} {
		if T(s) == s {
			t.Errorf("no Chinese for %q", s)
		}
	}
	if got := Tf("Not sent: %s", "x"); !strings.Contains(got, "x") {
		t.Errorf("Tf = %q", got)
	}
}

// chatUI is a chat view in a test window, with a stand-in for the UI goroutine: what the
// view-model hands to fyne.Do is queued and run by the test's goroutine (in settle and until),
// as the real driver runs it on its main goroutine. Renders of a growing reply are deferred until
// the turn ends (a fixed clock, timers that never fire), so what a test sees does not depend on
// timing.
type chatUI struct {
	vm *ChatVM
	v  *chatView
	w  fyne.Window

	*uiQueue // the view-model's fyne.Do work, run on the test's goroutine (app_test.go)
}

func chatTestView(t *testing.T, vm *ChatVM) *chatUI {
	t.Helper()
	u := &chatUI{vm: vm, uiQueue: &uiQueue{ready: make(chan struct{}, 1)}}
	vm.do = u.do
	u.w = test.NewTempWindow(t, widget.NewLabel(""))
	u.v = newChatView(vm, u.w)
	fixed := time.Unix(0, 0)
	u.v.thr.now = func() time.Time { return fixed }
	u.v.thr.after = func(time.Duration, func()) func() bool { return func() bool { return true } }
	u.w.SetContent(u.v.root)
	u.settle()
	return u
}

// settle waits for the view-model's goroutines and runs what they queued, until all is quiet.
func (u *chatUI) settle() {
	for {
		u.vm.Wait()
		if u.drain() == 0 {
			return
		}
	}
}

// until runs the queue as it fills until cond holds (a running turn makes progress meanwhile).
func (u *chatUI) until(cond func() bool) {
	u.drain()
	for !cond() {
		<-u.ready
		u.drain()
	}
}

// BenchmarkChatRenderReply measures one re-render of a long growing reply (about 4 KB of
// Markdown with a tool call): the work the throttle bounds to one per chatRenderInterval.
func BenchmarkChatRenderReply(b *testing.B) {
	test.NewTempApp(b)
	vm := NewChatVM(nil, ChatOptions{})
	w := test.NewTempWindow(b, widget.NewLabel(""))
	v := &chatView{vm: vm, w: w, dirty: map[int]bool{}}
	bubble := newChatBubble(v, 0)
	w.SetContent(container.NewVScroll(bubble.box))
	w.Resize(fyne.NewSize(800, 600))
	var md strings.Builder
	for i := 0; md.Len() < 4096; i++ {
		fmt.Fprintf(&md, "Paragraph %d has **bold**, `code` and *italic* words in it.\n\n- item %d\n\n", i, i)
	}
	m := ChatMessage{Role: ChatRoleAssistant, Streaming: true,
		Tools: []ChatTool{{ID: "c1", Name: "time_now", Arguments: "{}", Result: "2026-01-02T03:04:05Z", Status: "ok"}}}
	for i := 0; b.Loop(); i++ {
		m.Text = md.String() + strconv.Itoa(i) // a new delta each time
		bubble.render(m)
		bubble.box.MinSize()
	}
}

// TestChatPasteFiles: files copied in a file manager (file:// URIs) and pasted become
// attachments; other text pastes as text.
func TestChatPasteFiles(t *testing.T) {
	dir := t.TempDir()
	note := filepath.Join(dir, "note.txt")
	if err := os.WriteFile(note, []byte("pasted notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	vm := NewChatVM(chatKernel(t, clienttest.New(), false), ChatOptions{})
	v := chatTestView(t, vm).v
	clip := test.NewTempApp(t).Clipboard()
	for _, tc := range []struct {
		clip      string
		atts      int
		inputText string
	}{
		{"file://" + note + "\n", 1, ""},
		{"# copied\n" + note, 2, ""},
		{"just some words", 2, "just some words"},
		{"file://" + filepath.Join(dir, "missing.txt"), 2, "just some wordsfile://" + filepath.Join(dir, "missing.txt")},
	} {
		clip.SetContent(tc.clip)
		v.input.TypedShortcut(&fyne.ShortcutPaste{Clipboard: clip})
		if n := len(vm.Attachments()); n != tc.atts || v.input.Text != tc.inputText {
			t.Fatalf("paste %q: %d attachments, input %q; want %d, %q", tc.clip, n, v.input.Text, tc.atts, tc.inputText)
		}
	}
}
