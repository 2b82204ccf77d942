package gui

import (
	"net/url"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdownSegments renders Markdown into rich-text segments, as Fyne's
// [widget.RichText.ParseMarkdown] does (the same goldmark parser and the same styles), with
// the text kept as written. Fyne's renderer adds a space after every text node followed by
// another inline node, and joins the text nodes of emphasis and links with spaces; goldmark
// splits text at every character that may open a construct, so "Hi!" came out as "Hi !" and
// coldcontext_query as "coldcontext_ query". Here a space is added only where the source has
// a line break inside a paragraph (goldmark's soft or hard break). Images are shown as their
// alt text and address, never fetched: a model's reply must not make the app load a URL.
func markdownSegments(content string) []widget.RichTextSegment {
	source := []byte(content)
	doc := goldmark.New().Parser().Parse(text.NewReader(source))
	return mdChildren(source, doc, false)
}

func mdNode(source []byte, n ast.Node, quote bool) []widget.RichTextSegment {
	switch t := n.(type) {
	case *ast.Document, *ast.TextBlock:
		return mdChildren(source, n, quote)
	case *ast.Paragraph:
		segs := mdChildren(source, n, quote)
		if !quote {
			segs = append(segs, &widget.TextSegment{Style: widget.RichTextStyleParagraph})
		}
		return segs
	case *ast.Blockquote:
		return mdChildren(source, n, true)
	case *ast.List:
		items := mdChildren(source, n, quote)
		return []widget.RichTextSegment{&widget.ListSegment{Items: items, Ordered: t.IsOrdered()}}
	case *ast.ListItem:
		return []widget.RichTextSegment{&widget.ParagraphSegment{Texts: mdChildren(source, n, quote)}}
	case *ast.Heading:
		txt := mdPlain(source, n, false)
		switch t.Level {
		case 1:
			return []widget.RichTextSegment{&widget.TextSegment{Style: widget.RichTextStyleHeading, Text: txt}}
		case 2:
			return []widget.RichTextSegment{&widget.TextSegment{Style: widget.RichTextStyleSubHeading, Text: txt}}
		}
		seg := &widget.TextSegment{Style: widget.RichTextStyleParagraph, Text: txt}
		seg.Style.TextStyle.Bold = true
		return []widget.RichTextSegment{seg}
	case *ast.ThematicBreak:
		return []widget.RichTextSegment{&widget.SeparatorSegment{}}
	case *ast.Link:
		link, _ := url.Parse(string(t.Destination))
		return []widget.RichTextSegment{&widget.HyperlinkSegment{Alignment: fyne.TextAlignLeading, Text: mdPlain(source, n, false), URL: link}}
	case *ast.AutoLink:
		link, _ := url.Parse(string(t.URL(source)))
		return []widget.RichTextSegment{&widget.HyperlinkSegment{Alignment: fyne.TextAlignLeading, Text: string(t.Label(source)), URL: link}}
	case *ast.Image:
		alt := mdPlain(source, n, false)
		if alt == "" {
			alt = "image"
		}
		return []widget.RichTextSegment{&widget.TextSegment{Style: mdInline(quote), Text: "[" + alt + ": " + string(t.Destination) + "]"}}
	case *ast.CodeSpan:
		return []widget.RichTextSegment{&widget.TextSegment{Style: widget.RichTextStyleCodeInline, Text: mdPlain(source, n, true)}}
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		var b strings.Builder
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			b.Write(seg.Value(source))
		}
		code := strings.TrimSuffix(b.String(), "\n")
		if code == "" {
			return nil
		}
		return []widget.RichTextSegment{&widget.TextSegment{Style: widget.RichTextStyleCodeBlock, Text: code}}
	case *ast.Emphasis:
		style := widget.RichTextStyleEmphasis
		if t.Level == 2 {
			style = widget.RichTextStyleStrong
		}
		return []widget.RichTextSegment{&widget.TextSegment{Style: style, Text: mdPlain(source, n, false)}}
	case *ast.String:
		return []widget.RichTextSegment{&widget.TextSegment{Style: mdInline(quote), Text: string(t.Value)}}
	case *ast.RawHTML:
		var b strings.Builder
		for i := 0; i < t.Segments.Len(); i++ {
			seg := t.Segments.At(i)
			b.Write(seg.Value(source))
		}
		return []widget.RichTextSegment{&widget.TextSegment{Style: mdInline(quote), Text: b.String()}}
	case *ast.HTMLBlock:
		var b strings.Builder
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			b.Write(seg.Value(source))
		}
		return []widget.RichTextSegment{&widget.TextSegment{Style: widget.RichTextStyleParagraph, Text: strings.TrimSuffix(b.String(), "\n")}}
	case *ast.Text:
		txt := string(util.UnescapePunctuations(t.Value(source)))
		if t.SoftLineBreak() || t.HardLineBreak() {
			txt += " "
		}
		if txt == "" {
			return nil
		}
		return []widget.RichTextSegment{&widget.TextSegment{Style: mdInline(quote), Text: txt}}
	}
	return nil
}

func mdInline(quote bool) widget.RichTextStyle {
	if quote {
		return widget.RichTextStyleBlockquote
	}
	return widget.RichTextStyleInline
}

func mdChildren(source []byte, n ast.Node, quote bool) []widget.RichTextSegment {
	var segs []widget.RichTextSegment
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		segs = append(segs, mdNode(source, c, quote)...)
	}
	return segs
}

// mdPlain is the text under n as written: its text nodes joined, with a space only at a line
// break; backslash escapes are undone unless raw (a code span keeps them).
func mdPlain(source []byte, n ast.Node, raw bool) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			if raw {
				b.Write(t.Value(source))
			} else {
				b.Write(util.UnescapePunctuations(t.Value(source)))
			}
			if t.SoftLineBreak() || t.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return strings.TrimSuffix(b.String(), " ")
}
