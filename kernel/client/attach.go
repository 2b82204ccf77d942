package client

import (
	"net/http"
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
	case sniffed == "video/webm" && (ext == ".weba" || ext == ".opus"):
		return "audio/webm"
	}
	return ""
}

// VideoMIME says whether a file to attach is a video (MP4, WebM, Matroska, QuickTime, AVI) from
// its content and name: it returns the video type to send, or "". A file that sniffs as MP4 or
// WebM but is named as audio (.m4a, .weba…) is audio ([AudioMIME]); a video without pictures
// (a WebM voice recording) is kept as audio by the kernel.
func VideoMIME(data []byte, name string) string {
	if AudioMIME(http.DetectContentType(data), name) != "" {
		return ""
	}
	ext := strings.ToLower(filepath.Ext(name))
	switch sniffed := http.DetectContentType(data); {
	case sniffed == "video/webm" && ext == ".mkv":
		return "video/x-matroska"
	case sniffed == "video/webm", sniffed == "video/avi":
		return sniffed
	case sniffed == "video/mp4" && ext == ".mov":
		return "video/quicktime"
	case sniffed == "video/mp4":
		return sniffed
	case len(data) >= 12 && ext == ".mov" && strings.Contains("ftyp moov mdat wide free skip", string(data[4:8])):
		return "video/quicktime" // QuickTime's own atoms, which DetectContentType does not know
	}
	return ""
}
