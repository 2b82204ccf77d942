package api

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// Image parts on /v1 (docs/api.md): a user message's content may hold
// {"type":"image_url","image_url":{"url":"data:image/png;base64,…"}} parts beside its text. The
// last user message's images become the turn's image attachments (stored as image blocks, sent
// to a vision model with the message, as a chat's are); the images of earlier messages, which
// the client resends on every call, are checked but not stored again (their turn stored them).
// Remote URLs are refused: the kernel never fetches a URL a client names.

// imageMIMEs are the image types vision models take (llm.VisionMIME).
var imageMIMEs = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true, "image/gif": true}

// imagePart decodes an image_url part's data URL into an attachment named name.
func imagePart(url, name string) (client.Attachment, error) {
	if url == "" {
		return client.Attachment{}, fmt.Errorf("%s: image_url.url is empty", name)
	}
	lower := strings.ToLower(url[:min(len(url), 8)])
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		return client.Attachment{}, fmt.Errorf("%s: remote image URLs are not fetched (the kernel never reaches out to a URL a client names): send the image inline as a data: URL (data:image/png;base64,…)", name)
	}
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return client.Attachment{}, fmt.Errorf("%s: image_url.url must be a data: URL (data:image/png;base64,…)", name)
	}
	meta, payload, ok := strings.Cut(rest, ",")
	mime, isBase64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isBase64 {
		return client.Attachment{}, fmt.Errorf("%s: the data URL must be base64 (data:<type>;base64,<data>)", name)
	}
	mime = strings.ToLower(strings.TrimSpace(mime))
	if !imageMIMEs[mime] {
		return client.Attachment{}, fmt.Errorf("%s: image type %q is not supported (image/png, image/jpeg, image/webp or image/gif)", name, clipModel(mime))
	}
	if base64.StdEncoding.DecodedLen(len(payload)) > client.MaxAttachmentBytes+3 {
		return client.Attachment{}, fmt.Errorf("%s: the image is larger than %d bytes", name, client.MaxAttachmentBytes)
	}
	data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(payload))
	if err != nil {
		data, err = base64.RawStdEncoding.DecodeString(strings.TrimSpace(payload))
	}
	if err != nil {
		return client.Attachment{}, fmt.Errorf("%s: the data URL's base64 is malformed: %v", name, err)
	}
	if len(data) == 0 {
		return client.Attachment{}, fmt.Errorf("%s: the image is empty", name)
	}
	if sniffed := http.DetectContentType(data); sniffed != mime {
		return client.Attachment{}, fmt.Errorf("%s: the data is not a %s image (it looks like %s)", name, mime, sniffed)
	}
	return client.Attachment{Kind: "image", Name: name, MIME: mime, Data: data}, nil
}

// imageURL is the URL of an image_url part: {"url": …} as OpenAI sends it, or the bare string
// some clients send; "" when it is neither.
func imageURL(raw json.RawMessage) string {
	var obj struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.URL != "" {
		return obj.URL
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}
