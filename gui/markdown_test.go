package gui

import (
	"context"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// TestChatRendersTextAsWritten: a reply's text is shown as the model wrote it, through the
// chat view's bubble (Fyne's own Markdown renderer turned "Hi!" into "Hi !" and
// coldcontext_query into "coldcontext_ query").
func TestChatRendersTextAsWritten(t *testing.T) {
	tests := []struct {
		name, markdown, want string
		styles               []widget.RichTextStyle // of the text segments, when checked
	}{
		{"exclamation", "Hi!", "Hi!", nil},
		{"underscore in a word", "I used coldcontext_query for that.", "I used coldcontext_query for that.", nil},
		{"brackets and stars that open nothing", "a [b] c*d 3 < 4 & 5!", "a [b] c*d 3 < 4 & 5!", nil},
		{"soft line break is a space", "one\ntwo", "one two", nil},
		{"emphasis keeps its neighbours", "**Hi!** and _coldcontext_query_.", "Hi! and coldcontext_query.",
			[]widget.RichTextStyle{widget.RichTextStyleStrong, widget.RichTextStyleInline, widget.RichTextStyleEmphasis, widget.RichTextStyleInline}},
		{"code span", "call `coldcontext_query`!", "call coldcontext_query!",
			[]widget.RichTextStyle{widget.RichTextStyleInline, widget.RichTextStyleCodeInline, widget.RichTextStyleInline}},
		{"link text", "see [the_docs!](https://example.org/x)", "see the_docs!", nil},
		{"image is not fetched", "![a cat](https://example.org/cat.png)", "[a cat: https://example.org/cat.png]", nil},
		{"escaped", `\*not bold\* but \_x`, "*not bold* but _x", nil},
		{"code span keeps backslashes", "`a\\*b`", `a\*b`, nil},
		{"chinese", "你好！用 coldcontext_query 查一下。", "你好！用 coldcontext_query 查一下。", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			test.NewTempApp(t)
			f := clienttest.New()
			f.Chat = func(ctx context.Context, req client.ChatRequest, turnID string, send func(client.ChatEvent)) {
				send(client.ChatEvent{Type: client.EventFinal, TurnID: turnID, Text: tc.markdown})
			}
			vm := NewChatVM(chatKernel(t, f, false), ChatOptions{})
			u := chatTestView(t, vm)
			chatSend(t, vm, "hello")
			u.settle()
			if len(u.v.bubbles) < 2 {
				t.Fatalf("%d bubbles, want the question and the reply", len(u.v.bubbles))
			}
			rich := u.v.bubbles[1].rich
			if got := rich.String(); got != tc.want {
				t.Errorf("reply %q renders as %q, want %q", tc.markdown, got, tc.want)
			}
			if tc.styles != nil {
				var got []widget.RichTextStyle
				for _, s := range rich.Segments {
					if ts, ok := s.(*widget.TextSegment); ok && ts.Text != "" {
						got = append(got, ts.Style)
					}
				}
				if len(got) != len(tc.styles) {
					t.Fatalf("styles %+v, want %+v", got, tc.styles)
				}
				for i := range got {
					if got[i] != tc.styles[i] {
						t.Errorf("segment %d style %+v, want %+v", i, got[i], tc.styles[i])
					}
				}
			}
		})
	}
}
