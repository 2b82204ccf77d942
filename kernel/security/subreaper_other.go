//go:build !linux

package security

import (
	"errors"
	"fmt"
	"log/slog"
)

// BecomeSubreaper is only implemented on Linux.
func BecomeSubreaper(*slog.Logger) (func(), error) {
	return nil, fmt.Errorf("child subreaper on this system: %w", errors.ErrUnsupported)
}
