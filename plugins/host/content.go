package host

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// resultText renders a tools/call result as the text the model sees: text items as they are,
// images and audio summarised ("[image image/png, 1234 bytes]"), resource links and embedded
// resources by URI (an embedded text resource's text follows its URI), joined with newlines. A
// result with no content but structured content gives that JSON.
func resultText(res *protocol.CallToolResult) string {
	parts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		parts = append(parts, contentText(c))
	}
	if len(parts) == 0 && len(res.StructuredContent) > 0 && string(res.StructuredContent) != "null" {
		return string(res.StructuredContent)
	}
	return strings.Join(parts, "\n")
}

// contentText renders one content item.
func contentText(c protocol.Content) string {
	switch c.Type {
	case "text":
		return c.Text
	case "image", "audio":
		mime := c.MimeType
		if mime == "" {
			mime = "unknown type"
		}
		return fmt.Sprintf("[%s %s, %d bytes]", c.Type, mime, base64Len(c.Data))
	case "resource_link":
		if c.Name != "" && c.Name != c.URI {
			return fmt.Sprintf("[resource %s (%s)]", c.URI, c.Name)
		}
		return fmt.Sprintf("[resource %s]", c.URI)
	case "resource":
		var r struct {
			URI      string  `json:"uri"`
			MimeType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Blob     string  `json:"blob"`
		}
		if err := json.Unmarshal(c.Resource, &r); err != nil {
			return "[resource (unreadable)]"
		}
		switch {
		case r.Text != nil:
			return fmt.Sprintf("[resource %s]\n%s", r.URI, *r.Text)
		case r.Blob != "":
			return fmt.Sprintf("[resource %s, %d bytes]", r.URI, base64Len(r.Blob))
		}
		return fmt.Sprintf("[resource %s]", r.URI)
	}
	if c.Text != "" {
		return c.Text
	}
	return fmt.Sprintf("[%s content]", c.Type)
}

// imageTexts reads the text of a result's images with read (OCR) and renders it to follow the
// result's text: "\n[text in image N]\n…" for each image that holds any. An image read cannot
// read is skipped (its summary line already says it is there).
func imageTexts(ctx context.Context, read func(ctx context.Context, mime string, data []byte) (string, error), cs []protocol.Content) string {
	var b strings.Builder
	n := 0
	for _, c := range cs {
		if c.Type != "image" {
			continue
		}
		n++
		data, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil || len(data) == 0 {
			continue
		}
		text, err := read(ctx, c.MimeType, data)
		if err != nil || strings.TrimSpace(text) == "" {
			continue
		}
		fmt.Fprintf(&b, "\n[text in image %d]\n%s", n, strings.TrimSpace(text))
	}
	return b.String()
}

// base64Len is the decoded length of the standard base64 text s (padded or not), without
// decoding it.
func base64Len(s string) int {
	s = strings.TrimRight(s, "=\n\r ")
	return len(s) * 3 / 4
}

// containsFold reports whether s contains sub, ignoring case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// imageSinkKey carries the sink of [WithImageSink].
type imageSinkKey struct{}

// WithImageSink returns a context under which a tool call hands the images of its result
// (content items of type image, decoded) to sink, beside the text the call returns, so that
// they can reach a vision model. sink is called before the call returns, in the result's order.
func WithImageSink(ctx context.Context, sink func(mime string, data []byte)) context.Context {
	return context.WithValue(ctx, imageSinkKey{}, sink)
}

// sinkImages hands the result's images to the context's sink, if any.
func sinkImages(ctx context.Context, cs []protocol.Content) {
	sink, _ := ctx.Value(imageSinkKey{}).(func(mime string, data []byte))
	if sink == nil {
		return
	}
	for _, c := range cs {
		if c.Type != "image" {
			continue
		}
		if data, err := base64.StdEncoding.DecodeString(c.Data); err == nil && len(data) > 0 {
			sink(c.MimeType, data)
		}
	}
}
