package client

import (
	"path/filepath"
	"strings"
)

// AudioMIME says whether a file to attach is audio, from the MIME type its content sniffs as
// (net/http.DetectContentType) and its name: it returns the audio type to send, or "". Ogg
// sniffs as application/ogg and M4A or WebM audio as their video containers, so those are told
// by the name's extension (.ogg/.opus/.oga, .m4a/.aac, .weba/.webm).
func AudioMIME(sniffed, name string) string {
	ext := strings.ToLower(filepath.Ext(name))
	switch {
	case strings.HasPrefix(sniffed, "audio/"):
		return sniffed
	case sniffed == "application/ogg":
		return "audio/ogg"
	case sniffed == "video/mp4" && (ext == ".m4a" || ext == ".aac" || ext == ".mp4a"):
		return "audio/mp4"
	case sniffed == "video/webm" && (ext == ".weba" || ext == ".webm" || ext == ".opus"):
		return "audio/webm"
	}
	return ""
}
