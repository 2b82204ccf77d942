package gui

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"

	"github.com/hologramagent/hologram/kernel/client"
)

// A chat's model picker and its export as Markdown.

// loadModelChoices lists the configured providers' models (none when they cannot be read: the
// picker still takes any model name).
func (vm *ChatVM) loadModelChoices(ctx context.Context) []string {
	ps, err := vm.svc.Providers(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range ps {
		if p.Model != "" && !slices.Contains(out, p.Model) {
			out = append(out, p.Model)
		}
	}
	return out
}

// ModelChoices are the models the chat's model picker offers (the configured providers').
func (vm *ChatVM) ModelChoices() []string {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return slices.Clone(vm.models)
}

// chatExportPage is how many messages an export reads per request.
const chatExportPage = client.MaxHistoryPage

// ExportMarkdown writes the current session's current branch as Markdown: a title, then each
// message under its speaker and time, tool calls as quoted lines, a reply's model and tokens
// after it. It reads the whole branch page by page (never from what the view has loaded).
func (vm *ChatVM) ExportMarkdown(ctx context.Context, w io.Writer) error {
	id := vm.Current()
	title := id
	for _, s := range vm.Sessions() {
		if s.ID == id {
			title = chatSessionTitle(s)
		}
	}
	var hist []client.Message
	for before := int64(0); ; {
		page, err := vm.svc.HistoryPage(ctx, client.HistoryQuery{Session: id, Before: before, Limit: chatExportPage})
		if err != nil {
			return fmt.Errorf("%s: %w", Tf("Could not load the history of %s", id), err)
		}
		hist = append(append([]client.Message(nil), page.Messages...), hist...)
		if !page.More || len(page.Messages) == 0 {
			break
		}
		before = page.Messages[0].ID
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s\n", title)
	for _, m := range chatFromHistory(hist) {
		who := T("You")
		if m.Role == ChatRoleAssistant {
			who = T("Assistant")
		}
		fmt.Fprintf(bw, "\n## %s · %s\n\n", who, m.Time.Local().Format("2006-01-02 15:04"))
		for _, a := range m.Attachments {
			fmt.Fprintf(bw, "> 📎 %s (%s)\n", a.Name, chatSize(a.Size))
		}
		for _, t := range m.Tools {
			fmt.Fprintf(bw, "> 🔧 %s(%s) → %s\n", t.Name, chatClip(t.Arguments, 200), t.Status)
		}
		if len(m.Attachments)+len(m.Tools) > 0 {
			bw.WriteString("\n")
		}
		bw.WriteString(strings.TrimSpace(m.Text) + "\n")
		if u := chatUsageText(m.Usage, m.Model); u != "" {
			fmt.Fprintf(bw, "\n*%s*\n", u)
		}
	}
	return bw.Flush()
}

// exportMarkdown asks where to save the chat and writes it there.
func (v *chatView) exportMarkdown() {
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err != nil || wc == nil {
			return
		}
		v.vm.Go(func() {
			err := v.vm.ExportMarkdown(context.Background(), wc)
			if cerr := wc.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				v.vm.do(func() { dialog.ShowError(err, v.w) })
			}
		})
	}, v.w)
	d.SetFileName(strings.ReplaceAll(v.vm.Current(), ":", "-") + ".md")
	d.Show()
}
