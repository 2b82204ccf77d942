package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"strings"
	"testing"
)

func tinyPNG(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestImageParts: image_url data URLs become attachments; remote URLs, other schemes, bad
// base64, types vision models do not take and data that is not the image it claims are clear
// errors.
func TestImageParts(t *testing.T) {
	pic := tinyPNG(t)
	b64 := base64.StdEncoding.EncodeToString(pic)
	part := func(url string) string {
		return fmt.Sprintf(`[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":%q,"detail":"low"}}]`, url)
	}
	tests := []struct {
		name, content string
		wantText      string
		wantImages    int
		wantErr       string
	}{
		{"png data URL", part("data:image/png;base64," + b64), "what is this?", 1, ""},
		{"unpadded base64", part("data:image/png;base64," + strings.TrimRight(b64, "=")), "what is this?", 1, ""},
		{"two images", `[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + b64 + `"}},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + b64 + `"}}]`, "", 2, ""},
		{"remote URL", part("https://example.com/cat.png"), "", 0, "remote image URLs are not fetched"},
		{"another scheme", part("file:///etc/passwd"), "", 0, "must be a data: URL"},
		{"not base64", part("data:image/png,rawbytes"), "", 0, "must be base64"},
		{"bad base64", part("data:image/png;base64,@@@@"), "", 0, "malformed"},
		{"svg", part("data:image/svg+xml;base64,PHN2Zy8+"), "", 0, `image type "image/svg+xml" is not supported`},
		{"a png that is not", part("data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("hello, not an image"))), "", 0, "is not a image/png image"},
		{"empty", part("data:image/png;base64,"), "", 0, "empty"},
		{"no url", `[{"type":"image_url"}]`, "", 0, "image_url.url is empty"},
		{"responses-style part", `[{"type":"input_image","image_url":"data:"}]`, "", 0, `"input_image" is not supported`},
		{"audio part", `[{"type":"input_audio"}]`, "", 0, `"input_audio" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, images, err := messageContent(json.RawMessage(tt.content))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || text != tt.wantText || len(images) != tt.wantImages {
				t.Fatalf("%q %d images %v", text, len(images), err)
			}
			for _, im := range images {
				if im.Kind != "image" || im.MIME != "image/png" || !bytes.Equal(im.Data, pic) {
					t.Fatalf("attachment %+v", im)
				}
			}
		})
	}
	// Only the last user message's images are the turn's; an assistant's are refused.
	in := completionRequest{Messages: []completionMessage{
		{Role: "user", Content: json.RawMessage(part("data:image/png;base64," + b64))},
		{Role: "assistant", Content: json.RawMessage(`"a cat"`)},
		{Role: "user", Content: json.RawMessage(`"and its colour?"`)},
	}}
	req, _, err := parseCompletion(in, "", v1Client{owner: true})
	if err != nil || len(req.Attachments) != 0 || req.Messages[0].Content != "what is this?" {
		t.Fatalf("earlier images: %+v %v", req, err)
	}
	in.Messages[2].Content = json.RawMessage(part("data:image/png;base64," + b64))
	if req, _, err = parseCompletion(in, "", v1Client{owner: true}); err != nil || len(req.Attachments) != 1 {
		t.Fatalf("the last message's image: %+v %v", req.Attachments, err)
	}
	in.Messages[1].Content = json.RawMessage(part("data:image/png;base64," + b64))
	if _, param, err := parseCompletion(in, "", v1Client{owner: true}); err == nil || param != "messages[1].content" {
		t.Fatalf("an assistant's image: %q %v", param, err)
	}
	// Images count in a conversation's key: two image-only first messages are two conversations.
	other := base64.StdEncoding.EncodeToString(append(pic[:len(pic):len(pic)], 0))
	a := conversationSession("m", []completionMessage{{Role: "user", Content: json.RawMessage(`[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + b64 + `"}}]`)}}, "")
	b := conversationSession("m", []completionMessage{{Role: "user", Content: json.RawMessage(`[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + other + `"}}]`)}}, "")
	if a == b {
		t.Fatal("two different images share a conversation")
	}
}
