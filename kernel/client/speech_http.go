package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// Speaker is implemented by a Service that can speak text aloud (the HTTP client does; a kernel
// without espeak-ng answers *Error 503 saying how to install it).
type Speaker interface {
	// Speak writes text spoken to w in format ("" or "wav": a WAV stream; "ogg": Ogg/Opus) and
	// returns the voice used; an empty voice lets the kernel choose by the text's script.
	Speak(ctx context.Context, text, voice, format string, w io.Writer) (string, error)
}

// speechRequest is the body of POST /api/v1/speech.
type speechRequest struct {
	Text   string `json:"text"`
	Voice  string `json:"voice,omitempty"`
	Format string `json:"format,omitempty"`
}

// Speak asks POST /api/v1/speech and copies the audio to w as it arrives. It has no timeout of
// its own (a long text takes long to speak): cancel ctx instead.
func (c *HTTP) Speak(ctx context.Context, text, voice, format string, w io.Writer) (string, error) {
	req, err := c.newRequest(ctx, http.MethodPost, "/api/v1/speech", speechRequest{Text: text, Voice: voice, Format: format})
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "audio/wav, audio/ogg, application/json")
	resp, err := c.send(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return "", fmt.Errorf("speech: %w", err)
	}
	return resp.Header.Get("X-Hologram-Voice"), nil
}
