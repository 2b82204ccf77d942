package sdk

import (
	"io"
	"log/slog"
)

// NewLogger returns a logger writing JSON lines to w (a plugin passes os.Stderr, which the
// kernel captures and keeps under the plugin's name) at level and above.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}
