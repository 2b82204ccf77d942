package gui

import (
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// A message bubble of the chat view and its rows (tool calls, attachments).

// chatBubble shows one message.
type chatBubble struct {
	v     *chatView
	index int
	box   *fyne.Container
	bg    *canvas.Rectangle
	role  *widget.Label
	note  *widget.Label // "…" while streaming, "Stopped"
	copy  *widget.Button
	rich  *widget.RichText
	tools *fyne.Container
	atts  *fyne.Container
	// An error is a card: what happened, what to do, Retry, and the error itself folded.
	errBox           *fyne.Container
	errWhat, errNext *widget.Label
	errDetail        *widget.Label
	errRetry         *widget.Button
	errDetails       *widget.Accordion

	role0, text0  string // what rich shows
	tools0, atts0 string // what tools and atts show

	// Branches and usage (chat_branches.go): ‹ i/n ›, Edit (a user message), Regenerate (a
	// reply), and a reply's token counts and speed.
	prev, next, edit, regen *widget.Button
	branch, usage           *widget.Label
	speak                   *widget.Button // read a reply aloud (chat_speak.go)
}

func newChatBubble(v *chatView, index int) *chatBubble {
	b := &chatBubble{v: v, index: index}
	b.bg = canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	b.bg.CornerRadius = theme.InputRadiusSize()
	b.role = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	b.note = widget.NewLabel("")
	b.note.Importance = widget.LowImportance
	b.note.Wrapping = fyne.TextWrapWord
	b.copy = widget.NewButtonWithIcon("", theme.ContentCopyIcon(), func() {
		fyne.CurrentApp().Clipboard().SetContent(v.vm.CopyText(b.index))
	})
	b.copy.Importance = widget.LowImportance
	b.rich = widget.NewRichText()
	b.rich.Wrapping = fyne.TextWrapWord
	b.tools = container.NewVBox()
	b.tools.Hide()
	b.atts = container.NewVBox()
	b.atts.Hide()
	b.errWhat = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	b.errWhat.Wrapping = fyne.TextWrapWord
	b.errWhat.Importance = widget.DangerImportance
	b.errNext = widget.NewLabel("")
	b.errNext.Wrapping = fyne.TextWrapWord
	b.errDetail = widget.NewLabel("")
	b.errDetail.Wrapping = fyne.TextWrapBreak
	b.errDetail.Importance = widget.LowImportance
	b.errDetails = widget.NewAccordion(widget.NewAccordionItem(T("Details"), b.errDetail))
	b.errRetry = widget.NewButtonWithIcon(T("Retry"), theme.ViewRefreshIcon(), func() {
		if err := v.vm.Retry(b.index); err != nil {
			dialog.ShowError(err, v.w)
		}
	})
	b.errRetry.Importance = widget.HighImportance
	b.errBox = container.NewVBox(b.errWhat, b.errNext, container.NewHBox(b.errRetry), b.errDetails)
	b.errBox.Hide()
	b.newBranchControls()
	b.newSpeakButton()
	header := container.NewHBox(b.role, b.note, layout.NewSpacer(), b.prev, b.branch, b.next, b.edit, b.regen, b.speak, b.copy)
	b.box = container.NewStack(b.bg, container.NewPadded(container.NewVBox(header, b.atts, b.tools, b.rich, b.usage, b.errBox)))
	return b
}

// render shows m; the Markdown is parsed again only when the text changed.
func (b *chatBubble) render(m ChatMessage) {
	switch m.Role {
	case ChatRoleUser:
		b.role.SetText(T("You"))
		b.bg.FillColor = theme.Color(theme.ColorNameSelection)
	case ChatRoleError:
		b.role.SetText(T("Error"))
		b.bg.FillColor = theme.Color(theme.ColorNameInputBackground)
	default:
		b.role.SetText(T("Assistant"))
		b.bg.FillColor = theme.Color(theme.ColorNameInputBackground)
	}
	b.bg.Refresh()
	notes := slices.Clone(m.Notes) // the kernel's notes on the message, then the turn's state
	switch {
	case m.Uploading != "":
		notes = append(notes, m.Uploading)
	case m.Streaming:
		notes = append(notes, "…")
	case m.Stopped:
		notes = append(notes, T("Stopped"))
	}
	if len(notes) > 0 {
		b.note.SetText(strings.Join(notes, "\n"))
		b.note.Show()
	} else {
		b.note.SetText("")
		b.note.Hide()
	}
	if m.Role != b.role0 || m.Text != b.text0 {
		b.role0, b.text0 = m.Role, m.Text
		if m.Role == ChatRoleError {
			what, next := chatAdvice(m.Text, m.retry == nil || m.retry.input != "")
			b.errWhat.SetText(what)
			b.errNext.SetText(next)
			b.errDetail.SetText(m.Text)
			b.errDetails.CloseAll()
			b.rich.Segments = nil
		} else {
			b.rich.Segments = markdownSegments(m.Text)
		}
		b.rich.Refresh()
	}
	b.renderBranch(m)
	chatShowIf(b.rich, m.Text != "" && m.Role != ChatRoleError)
	chatShowIf(b.errBox, m.Role == ChatRoleError)
	chatShowIf(b.errRetry, m.Role == ChatRoleError && m.retry != nil)
	if key := fmt.Sprint(m.Tools); key != b.tools0 { // rebuilt only when they changed
		b.tools0 = key
		b.tools.RemoveAll()
		for _, t := range m.Tools {
			b.tools.Add(chatToolRow(t))
		}
		chatShowIf(b.tools, len(m.Tools) > 0)
	}
	var key strings.Builder
	for _, a := range m.Attachments {
		fmt.Fprintf(&key, "%s %s %d %p\n", a.Kind, a.Name, a.Size, a.Data)
	}
	if key.String() != b.atts0 { // images are decoded again only when they changed
		b.atts0 = key.String()
		b.atts.RemoveAll()
		for _, a := range m.Attachments {
			b.atts.Add(chatAttachmentRow(a))
		}
		chatShowIf(b.atts, len(m.Attachments) > 0)
	}
	b.box.Refresh()
}

func chatShowIf(o fyne.CanvasObject, show bool) {
	if show {
		o.Show()
	} else {
		o.Hide()
	}
}

// chatToolStatus gives a tool status's icon and label.
func chatToolStatus(status string) (fyne.Resource, string) {
	switch status {
	case "running":
		return theme.ViewRefreshIcon(), T("running")
	case "ok":
		return theme.ConfirmIcon(), T("done")
	case "error":
		return theme.ErrorIcon(), T("failed")
	case "denied":
		return theme.CancelIcon(), T("denied")
	case "cancelled":
		return theme.MediaStopIcon(), T("cancelled")
	case "timeout":
		return theme.HistoryIcon(), T("timed out")
	case "skipped":
		return theme.MediaSkipNextIcon(), T("skipped")
	}
	return theme.QuestionIcon(), status
}

// chatToolRow shows a tool call: status, name, arguments, result.
func chatToolRow(t ChatTool) fyne.CanvasObject {
	icon, status := chatToolStatus(t.Status)
	head := container.NewHBox(widget.NewIcon(icon),
		widget.NewLabelWithStyle(t.Name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		widget.NewLabel(status))
	rows := container.NewVBox(head)
	if a := strings.TrimSpace(t.Arguments); a != "" && a != "{}" {
		l := widget.NewLabelWithStyle(chatClip(a, 300), fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
		l.Truncation = fyne.TextTruncateEllipsis
		rows.Add(l)
	}
	if r := strings.TrimSpace(t.Result); r != "" {
		l := widget.NewLabelWithStyle(chatClip(r, 600), fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
		l.Wrapping = fyne.TextWrapWord
		rows.Add(l)
	}
	return rows
}

// chatAttachmentRow shows an attachment: a thumbnail for an image with its data, else its name
// and size.
func chatAttachmentRow(a ChatAttachment) fyne.CanvasObject {
	label := widget.NewLabel(fmt.Sprintf("%s (%s)", a.Name, chatSize(a.Size)))
	if a.Kind == "image" && len(a.Data) > 0 {
		img := canvas.NewImageFromResource(fyne.NewStaticResource(a.Name, a.Data))
		img.FillMode = canvas.ImageFillContain
		img.SetMinSize(fyne.NewSize(160, 120))
		return container.NewVBox(container.NewHBox(img), label)
	}
	return container.NewHBox(widget.NewIcon(attachmentIcon(a.Kind, theme.FileIcon())), label)
}

// attachmentIcon is the icon of an attachment kind (image, audio, video, text), other for
// any other kind.
func attachmentIcon(kind string, other fyne.Resource) fyne.Resource {
	switch kind {
	case "image":
		return theme.FileImageIcon()
	case "audio":
		return theme.FileAudioIcon()
	case "video":
		return theme.FileVideoIcon()
	case "text":
		return theme.FileTextIcon()
	}
	return other
}

// chatClip shortens s to at most n runes, marking the cut.
func chatClip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// chatSize writes a byte count for people.
func chatSize(n int64) string {
	switch {
	case n < 1<<10:
		return Tf("%d B", n)
	case n < 1<<20:
		return Tf("%.1f KB", float64(n)/(1<<10))
	}
	return Tf("%.1f MB", float64(n)/(1<<20))
}
