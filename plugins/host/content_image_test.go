package host

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/hologramagent/hologram/plugins/protocol"
)

func TestImageTexts(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("png bytes"))
	other := base64.StdEncoding.EncodeToString([]byte("unreadable"))
	read := func(_ context.Context, mime string, data []byte) (string, error) {
		switch string(data) {
		case "png bytes":
			return "  Invoice 4711\nTotal due  ", nil
		case "blank":
			return " ", nil
		}
		return "", errors.New("cannot decode " + mime)
	}
	tests := []struct {
		name string
		cs   []protocol.Content
		want string
	}{
		{"no images", []protocol.Content{{Type: "text", Text: "hello"}}, ""},
		{"an image with text", []protocol.Content{{Type: "text", Text: "shot"}, {Type: "image", MimeType: "image/png", Data: png}},
			"\n[text in image 1]\nInvoice 4711\nTotal due"},
		{"the second image reads, the first does not", []protocol.Content{{Type: "image", Data: other}, {Type: "image", Data: png}},
			"\n[text in image 2]\nInvoice 4711\nTotal due"},
		{"bad base64 and blank text are skipped", []protocol.Content{{Type: "image", Data: "!!!"},
			{Type: "image", Data: base64.StdEncoding.EncodeToString([]byte("blank"))}}, ""},
		{"audio is not read", []protocol.Content{{Type: "audio", Data: png}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := imageTexts(context.Background(), read, tt.cs); got != tt.want {
				t.Errorf("imageTexts = %q, want %q", got, tt.want)
			}
		})
	}
}
