package gui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// chatRenderInterval is how often a growing reply is re-rendered at most.
const chatRenderInterval = 80 * time.Millisecond

// chatView is the chat screen over a ChatVM. All its methods run on the UI goroutine; work
// from other goroutines comes back through the view-model's do (fyne.Do).
type chatView struct {
	vm   *ChatVM
	w    fyne.Window
	root fyne.CanvasObject

	sessions    []client.Session // what sessionList shows
	sessionList *widget.List
	search      *chatSearchPane // search across chats (chat_search.go)
	newSession  *widget.Button
	// showSystem also lists the sessions the kernel keeps for itself (a plugin's memory, the
	// OpenAI API's conversations: client.Session.System), hidden by default.
	showSystem *widget.Check

	instr       *widget.Accordion
	instrPrompt *widget.Entry
	instrModel  *widget.SelectEntry // the providers' models, or any model name
	instrTools  *widget.Label       // what the session's assistant allows
	instrSave   *widget.Button

	banner  *widget.Label
	msgBox  *fyne.Container
	scroll  *container.Scroll
	bubbles []*chatBubble
	speaker chatSpeaker // the reply read aloud (chat_speak.go)

	input  *chatInput
	chips  *fyne.Container
	send   *widget.Button
	stop   *widget.Button
	attach *widget.Button
	mic    *widget.Button // Talk: a voice message (chat_mic.go)
	rec    chatRecording

	thr   chatThrottle
	dirty map[int]bool // messages changed since the last render
	// follow keeps the messages scrolled to the newest one, also across layouts (the history
	// of a session arrives before the view has its size); scrolling up clears it.
	follow bool
	// selected is the session picked in the list at selectedAt, until its messages rendered;
	// loadingOlder is set while the page before is read (chat_pages.go).
	selected     string
	selectedAt   time.Time
	loadingOlder bool
}

// chatStickLayout gives the messages' scroll all its space and, while the view follows the
// newest message, scrolls it to the end after every layout: a scroll made before the view had
// its size (or before a bubble's text was wrapped to its width) ends short of the end.
type chatStickLayout struct{ v *chatView }

func (l *chatStickLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	return objects[0].MinSize()
}

func (l *chatStickLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	objects[0].Move(fyne.NewPos(0, 0))
	objects[0].Resize(size)
	if l.v.follow {
		l.v.scrollToEnd()
	}
}

// scrollToEnd scrolls to the newest message and follows the next ones.
func (v *chatView) scrollToEnd() {
	v.scroll.ScrollToBottom()
	v.follow = true
}

// NewChatView returns the chat screen: the sessions (hidden in Quick mode) with "New session",
// the session's instructions, the messages, and the input with its attachments. It sets w's
// drop handler (dropped files are attached) and starts loading the sessions. A view-model shows
// in one view at a time: a new view replaces the previous one, which stops updating.
func NewChatView(vm *ChatVM, w fyne.Window) fyne.CanvasObject {
	return newChatView(vm, w).root
}

func newChatView(vm *ChatVM, w fyne.Window) *chatView {
	v := &chatView{vm: vm, w: w, dirty: map[int]bool{}}
	v.thr = chatThrottle{interval: chatRenderInterval, now: time.Now, after: chatAfter, do: vm.do}
	v.root = v.build()
	vm.setView(v.changed)
	w.SetOnDropped(v.dropped)
	v.refreshAll()
	vm.Go(func() { _ = vm.Reload(context.Background()) }) // errors: the banner
	return v
}

func (v *chatView) build() fyne.CanvasObject {
	v.banner = widget.NewLabel("")
	v.banner.Importance = widget.DangerImportance
	v.banner.Wrapping = fyne.TextWrapWord
	v.banner.Hide()

	v.msgBox = container.NewVBox()
	v.scroll = container.NewVScroll(v.msgBox)
	v.scroll.OnScrolled = func(p fyne.Position) {
		// Scrolled up by the owner: stay there; back at the end: follow the new messages again.
		v.follow = p.Y >= v.scroll.Content.Size().Height-v.scroll.Size().Height-1
		v.scrolled(p) // at the top: the page before (chat_pages.go)
	}

	v.input = newChatInput(v.sendDraft)
	v.input.onPasteFiles = v.pastedFiles
	v.input.OnChanged = v.vm.SetDraft
	v.chips = container.NewHBox()
	v.send = widget.NewButtonWithIcon(T("Send"), theme.MailSendIcon(), v.sendDraft)
	v.send.Importance = widget.HighImportance
	v.stop = widget.NewButtonWithIcon(T("Stop"), theme.MediaStopIcon(), v.vm.Stop)
	v.attach = widget.NewButtonWithIcon(T("Attach"), theme.MailAttachmentIcon(), v.openFile)
	v.mic = v.newMicButton()
	bottom := container.NewVBox(
		container.NewHScroll(v.chips),
		v.input,
		container.NewHBox(v.attach, v.mic, layout.NewSpacer(), v.stop, v.send),
	)

	top := container.NewVBox(v.banner)
	if !v.vm.Quick() {
		v.instrPrompt = widget.NewMultiLineEntry()
		v.instrPrompt.Wrapping = fyne.TextWrapWord
		v.instrPrompt.SetMinRowsVisible(3)
		v.instrPrompt.SetPlaceHolder(T("How the assistant should behave in this session"))
		v.instrModel = widget.NewSelectEntry(nil)
		v.instrModel.SetPlaceHolder(T("Default model"))
		v.instrSave = widget.NewButtonWithIcon(T("Save"), theme.DocumentSaveIcon(), v.saveInstructions)
		v.instrTools = widget.NewLabel("")
		v.instrTools.Wrapping = fyne.TextWrapWord
		form := widget.NewForm(
			widget.NewFormItem(T("System prompt"), v.instrPrompt),
			widget.NewFormItem(T("Model"), v.instrModel),
			widget.NewFormItem(T("Tools"), v.instrTools), // chat_assistants.go
		)
		export := widget.NewButtonWithIcon(T("Export as Markdown"), theme.DocumentIcon(), v.exportMarkdown)
		v.instr = widget.NewAccordion(widget.NewAccordionItem(T("Instructions"),
			container.NewBorder(nil, container.NewHBox(export, layout.NewSpacer(), v.instrSave), nil, nil, form)))
		top.Add(v.instr)
	}
	chat := container.NewBorder(top, bottom, nil, nil, container.New(&chatStickLayout{v: v}, v.scroll))
	if v.vm.Quick() {
		return chat
	}

	v.sessionList = widget.NewList(
		func() int { return len(v.sessions) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i < len(v.sessions) {
				o.(*widget.Label).SetText(chatSessionTitle(v.sessions[i]))
			}
		})
	v.sessionList.OnSelected = func(i widget.ListItemID) {
		if i >= len(v.sessions) || v.sessions[i].ID == v.vm.Current() {
			return
		}
		id := v.sessions[i].ID
		v.selected, v.selectedAt = id, time.Now()                            // for the "chat_rendered" trace
		v.vm.Go(func() { _ = v.vm.SelectSession(context.Background(), id) }) // errors: the banner
	}
	v.newSession = widget.NewButtonWithIcon(T("New session"), theme.ContentAddIcon(), v.askNewSession)
	v.showSystem = widget.NewCheck(T("System"), func(bool) { v.refreshSessions() })
	v.search = newChatSearchPane(v)
	left := container.NewBorder(container.NewVBox(v.newSession, v.search.entry), v.showSystem, nil, nil,
		container.NewStack(v.sessionList, v.search.results))
	split := container.NewHSplit(left, chat)
	split.Offset = 0.25
	return split
}

// chatSessionTitle is how a session is listed.
func chatSessionTitle(s client.Session) string {
	if strings.TrimSpace(s.Title) != "" {
		return s.Title
	}
	return s.ID
}

// changed applies one change of the view-model.
func (v *chatView) changed(c ChatChange) {
	if c.Session != "" && c.Session != v.vm.Current() {
		return
	}
	switch c.Kind {
	case ChatSessionsChanged:
		v.refreshSessions()
	case ChatSessionChanged:
		v.refreshAll()
	case ChatMessagesChanged:
		v.refreshMessages()
	case ChatOlderLoaded:
		v.olderLoaded()
	case ChatMessageAdded:
		if m, ok := v.vm.Message(c.Index); ok && c.Index == len(v.bubbles) {
			b := newChatBubble(v, c.Index)
			v.bubbles = append(v.bubbles, b)
			v.msgBox.Add(b.box)
			b.render(m)
			v.scrollToEnd()
			break
		}
		v.refreshMessages()
	case ChatMessageChanged:
		m, ok := v.vm.Message(c.Index)
		v.dirty[c.Index] = true
		v.thr.run(!ok || !m.Streaming, v.flush)
	case ChatBusyChanged:
		v.refreshBusy()
	case ChatDraftChanged:
		if d := v.vm.Draft(); d != v.input.Text {
			v.input.SetText(d)
		}
	case ChatAttachmentsChanged:
		v.refreshChips()
	case ChatInstructionsChanged:
		v.refreshInstructions()
	case ChatErrorChanged:
		v.refreshBanner()
	}
}

func (v *chatView) refreshAll() {
	v.refreshSessions()
	v.refreshInstructions()
	v.refreshBanner()
	v.refreshMessages()
	v.refreshChips()
	v.refreshBusy()
	if d := v.vm.Draft(); d != v.input.Text {
		v.input.SetText(d)
	}
}

func (v *chatView) refreshSessions() {
	if v.sessionList == nil {
		return
	}
	cur := v.vm.Current()
	v.sessions = v.sessions[:0]
	for _, s := range v.vm.Sessions() {
		if !s.System() || v.showSystem.Checked || s.ID == cur {
			v.sessions = append(v.sessions, s)
		}
	}
	v.sessionList.Refresh()
	for i, s := range v.sessions {
		if s.ID == cur {
			v.sessionList.Select(i) // OnSelected ignores the current session
			return
		}
	}
	v.sessionList.UnselectAll()
}

func (v *chatView) refreshInstructions() {
	if v.instr == nil {
		return
	}
	in := v.vm.Instructions()
	v.instrPrompt.SetText(in.SystemPrompt)
	v.instrModel.SetOptions(v.vm.ModelChoices())
	v.instrModel.SetText(in.Model)
	v.refreshTools()
}

func (v *chatView) refreshBanner() {
	if err := v.vm.Err(); err != nil {
		v.banner.SetText(err.Error())
		v.banner.Show()
		return
	}
	v.banner.Hide()
}

func (v *chatView) refreshBusy() {
	if v.vm.Busy() {
		v.send.Disable()
		v.stop.Enable()
		return
	}
	v.send.Enable()
	v.stop.Disable()
}

// refreshMessages renders every message, reusing the bubbles there are.
func (v *chatView) refreshMessages() {
	msgs := v.vm.Messages()
	for len(v.bubbles) < len(msgs) {
		b := newChatBubble(v, len(v.bubbles))
		v.bubbles = append(v.bubbles, b)
		v.msgBox.Add(b.box)
	}
	for len(v.bubbles) > len(msgs) {
		last := v.bubbles[len(v.bubbles)-1]
		v.msgBox.Remove(last.box)
		v.bubbles = v.bubbles[:len(v.bubbles)-1]
	}
	for i, m := range msgs {
		v.bubbles[i].render(m)
	}
	clear(v.dirty)
	v.scrollToEnd() // a session opens at its newest message
	v.rendered(len(msgs))
}

// flush renders the messages changed since the last render.
func (v *chatView) flush() {
	for i := range v.dirty {
		if m, ok := v.vm.Message(i); ok && i < len(v.bubbles) {
			v.bubbles[i].render(m)
		}
	}
	clear(v.dirty)
	if v.follow {
		v.scrollToEnd()
	}
}

func (v *chatView) refreshChips() {
	atts := v.vm.Attachments()
	v.chips.RemoveAll()
	for i, a := range atts {
		icon := attachmentIcon(a.Kind, theme.FileTextIcon())
		label := widget.NewLabelWithStyle(fmt.Sprintf("%s (%s)", a.Name, chatSize(a.Size)), fyne.TextAlignLeading, fyne.TextStyle{})
		remove := widget.NewButtonWithIcon("", theme.CancelIcon(), func() { v.vm.RemoveAttachment(i) })
		remove.Importance = widget.LowImportance
		v.chips.Add(container.NewHBox(widget.NewIcon(icon), label, remove))
	}
	v.chips.Refresh()
}

// sendDraft sends what the input holds (Enter, or the Send button).
func (v *chatView) sendDraft() {
	v.vm.SetDraft(v.input.Text)
	err := v.vm.Send()
	switch {
	case err == nil:
		v.input.SetText("")
	case errors.Is(err, ErrChatEmpty), errors.Is(err, ErrChatBusy):
	default:
		dialog.ShowError(err, v.w)
	}
}

func (v *chatView) saveInstructions() {
	in := client.Instructions{SystemPrompt: v.instrPrompt.Text, Model: strings.TrimSpace(v.instrModel.Text)}
	v.instrSave.Disable()
	v.vm.Go(func() {
		err := v.vm.SetInstructions(context.Background(), in)
		v.vm.do(func() {
			v.instrSave.Enable()
			if err != nil {
				dialog.ShowError(err, v.w)
			}
		})
	})
}

// openFile attaches a file picked in a file dialog.
func (v *chatView) openFile() {
	dialog.ShowFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			dialog.ShowError(err, v.w)
			return
		}
		if r == nil {
			return
		}
		defer r.Close()
		if r.URI().Scheme() == "file" {
			err = v.vm.AddAttachment(r.URI().Path())
		} else {
			err = v.attachReader(r.URI().Name(), r)
		}
		if err != nil {
			dialog.ShowError(err, v.w)
		}
	}, v.w)
}

func (v *chatView) attachReader(name string, r io.Reader) error {
	b, err := io.ReadAll(io.LimitReader(r, client.MaxAttachmentBytes+1))
	if err != nil {
		return fmt.Errorf("%s: %w", Tf("Cannot attach %s", name), err)
	}
	return v.vm.AddAttachmentData(name, "", b)
}

// pastedFiles attaches files copied in a file manager and pasted into the input.
func (v *chatView) pastedFiles(paths []string) {
	var errs []error
	for _, p := range paths {
		if err := v.vm.AddAttachment(p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		dialog.ShowError(err, v.w)
	}
}

// clipboardFiles returns the local files a clipboard text names, one per line (file:// URIs,
// as file managers copy them, or absolute paths of existing files); nil when any line is
// something else (then the text is pasted as text).
func clipboardFiles(text string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") { // text/uri-list comments
			continue
		}
		p := line
		if u, err := url.Parse(line); err == nil && u.Scheme == "file" {
			p = u.Path
		} else if !filepath.IsAbs(line) {
			return nil
		}
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return nil
		}
		out = append(out, p)
	}
	return out
}

// dropped attaches the files dropped on the window.
func (v *chatView) dropped(_ fyne.Position, uris []fyne.URI) {
	var errs []error
	for _, u := range uris {
		if u.Scheme() != "file" {
			errs = append(errs, errors.New(Tf("Cannot attach %s: it is not a local file.", u.String())))
			continue
		}
		if err := v.vm.AddAttachment(u.Path()); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		dialog.ShowError(err, v.w)
	}
}

var _ desktop.Keyable = (*chatInput)(nil)
