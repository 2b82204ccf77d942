package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/kernel/speech"
)

// POST /api/v1/speech {"text": "…", "voice": "…"?, "format": "wav"|"ogg"?} answers the text
// spoken, as audio/wav (or audio/ogg, Opus, when the format or the Accept header asks for it)
// streamed while espeak-ng speaks; the X-Hologram-Voice header names the voice (by default the
// text's script decides: speech.Synth.Voice). Without espeak-ng it is 503 with how to install it.

func (s *Server) speechRoutes() {
	s.mux.HandleFunc("POST /api/v1/speech", s.handleSpeech)
}

// speechRequest is the body of POST /api/v1/speech.
type speechRequest struct {
	Text   string `json:"text"`
	Voice  string `json:"voice,omitempty"`
	Format string `json:"format,omitempty"`
}

func (s *Server) handleSpeech(w http.ResponseWriter, r *http.Request) {
	var in speechRequest
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if !validVoice(in.Voice) {
		s.writeError(w, r, http.StatusBadRequest, "voice must be an espeak-ng voice name (letters, digits, - and _), got "+quote(in.Voice))
		return
	}
	format := in.Format
	if format == "" && prefersOgg(r.Header.Get("Accept")) {
		format = speech.FormatOgg
	}
	if format != "" && format != speech.FormatWAV && format != speech.FormatOgg {
		s.writeError(w, r, http.StatusBadRequest, "format must be wav or ogg, got "+quote(format))
		return
	}
	sw := &speechWriter{w: w, contentType: speech.ContentType(format)}
	voice := in.Voice
	if voice == "" {
		voice = s.speech.Voice(in.Text)
	}
	sw.voice = voice
	_, err := s.speech.Speak(r.Context(), in.Text, voice, format, sw)
	switch {
	case err == nil:
		if !sw.started { // espeak-ng wrote nothing at all
			s.writeError(w, r, http.StatusInternalServerError, "speech: no audio")
		}
	case sw.started: // the stream broke off: the client sees a short WAV
		s.log.Warn("api: speech stream ended early", "err", err)
	case errors.Is(err, speech.ErrUnavailable), errors.Is(err, speech.ErrNoFFmpeg):
		s.writeError(w, r, http.StatusServiceUnavailable, err.Error())
	case errors.Is(err, speech.ErrTooLong):
		s.writeError(w, r, http.StatusRequestEntityTooLarge, err.Error())
	case r.Context().Err() != nil:
	default:
		s.writeError(w, r, http.StatusBadRequest, err.Error())
	}
}

// speechWriter sends the headers with the first audio bytes, so that an error before them is
// still a JSON error; the voice header names the voice of the audio (Speak tells a fallback to
// English through SetVoice before it writes).
type speechWriter struct {
	w           http.ResponseWriter
	contentType string
	voice       string
	started     bool
}

func (sw *speechWriter) Write(p []byte) (int, error) {
	if !sw.started {
		sw.started = true
		h := sw.w.Header()
		h.Set("Content-Type", sw.contentType)
		h.Set("X-Hologram-Voice", sw.voice)
		h.Set("Cache-Control", "no-store")
		sw.w.WriteHeader(http.StatusOK)
	}
	n, err := sw.w.Write(p)
	if f, ok := sw.w.(http.Flusher); ok {
		f.Flush()
	}
	return n, err
}

func (sw *speechWriter) SetVoice(v string) { sw.voice = v }

// prefersOgg reports whether an Accept header names audio/ogg (or audio/opus) before audio/wav
// and without a zero quality: a browser or chat bridge asking for a voice note.
func prefersOgg(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		typ, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		typ = strings.ToLower(strings.TrimSpace(typ))
		if refusedType(params) {
			continue
		}
		switch typ {
		case "audio/ogg", "audio/opus":
			return true
		case "audio/wav", "audio/x-wav", "audio/wave", "audio/*":
			return false
		}
	}
	return false
}

// refusedType reports whether an Accept entry's parameters give it quality 0 ("q=0", "q=0.0").
func refusedType(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q == 0
		}
	}
	return false
}

func validVoice(v string) bool {
	if len(v) > 40 {
		return false
	}
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '+') {
			return false
		}
	}
	return true
}
