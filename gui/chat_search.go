package gui

import (
	"context"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// Search across chats: the sessions pane's search field asks the kernel's memory search (what
// recall sees: the current branches of every chat) and lists the messages found; picking one
// opens its chat.

// ChatHit is a message found by [ChatVM.SearchChats]: its chat's title with the message.
type ChatHit struct {
	Session, Title string
	Hit            client.MemoryHit
}

// chatSearchK is how many messages a search lists.
const chatSearchK = 30

// SearchChats finds messages of the owner's chats (the kernel's own sessions left out) that
// match text, best first.
func (vm *ChatVM) SearchChats(ctx context.Context, text string) ([]ChatHit, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	hits, err := vm.svc.SearchMemory(ctx, client.MemoryQuery{Text: text, K: chatSearchK})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", T("Could not search the chats"), err)
	}
	titles := map[string]string{}
	for _, s := range vm.Sessions() {
		if !s.System() {
			titles[s.ID] = chatSessionTitle(s)
		}
	}
	var out []ChatHit
	for _, h := range hits {
		if title, ok := titles[h.Session]; ok && (h.Role == ChatRoleUser || h.Role == ChatRoleAssistant) {
			out = append(out, ChatHit{Session: h.Session, Title: title, Hit: h})
		}
	}
	return out, nil
}

// chatSearchPane is the search field and its results above the sessions list: results show
// while the field holds text, and picking one opens its chat.
type chatSearchPane struct {
	v       *chatView
	entry   *widget.Entry
	results *widget.List
	hits    []ChatHit
}

func newChatSearchPane(v *chatView) *chatSearchPane {
	p := &chatSearchPane{v: v}
	p.entry = widget.NewEntry()
	p.entry.SetPlaceHolder(T("Search all chats"))
	p.entry.OnSubmitted = p.search
	p.entry.OnChanged = func(s string) {
		if strings.TrimSpace(s) == "" {
			p.show(nil)
		}
	}
	p.results = widget.NewList(func() int { return len(p.hits) },
		func() fyne.CanvasObject {
			title := widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
			title.Truncation = fyne.TextTruncateEllipsis
			text := widget.NewLabel("")
			text.Truncation = fyne.TextTruncateEllipsis
			return container.NewVBox(title, text)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= len(p.hits) {
				return
			}
			h := p.hits[i]
			box := o.(*fyne.Container)
			box.Objects[0].(*widget.Label).SetText(h.Title + " · " + h.Hit.Time.Local().Format("2006-01-02 15:04"))
			box.Objects[1].(*widget.Label).SetText(strings.Join(strings.Fields(h.Hit.Content), " "))
		})
	p.results.OnSelected = func(i widget.ListItemID) {
		if i >= len(p.hits) {
			return
		}
		id := p.hits[i].Session
		p.results.UnselectAll()
		v.vm.Go(func() { _ = v.vm.SelectSession(context.Background(), id) }) // errors: the banner
	}
	p.results.Hide()
	return p
}

// search runs the query and shows its results.
func (p *chatSearchPane) search(text string) {
	p.v.vm.Go(func() {
		hits, err := p.v.vm.SearchChats(context.Background(), text)
		if err != nil {
			p.v.vm.setErr(err)
		}
		p.v.vm.do(func() { p.show(hits) })
	})
}

// show lists hits (nil: back to the sessions list).
func (p *chatSearchPane) show(hits []ChatHit) {
	p.hits = hits
	p.results.Refresh()
	searching := strings.TrimSpace(p.entry.Text) != ""
	chatShowIf(p.results, searching)
	chatShowIf(p.v.sessionList, !searching)
}
