package kernel_test

import (
	"context"
	"errors"
	"testing"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
)

// TestInputEmptyOnceCleaned: text that is empty once made safe (NUL bytes, invalid UTF-8 turned
// to nothing, spaces) is refused before anything is stored, by Chat and by Ingest alike.
func TestInputEmptyOnceCleaned(t *testing.T) {
	k := newMemKernel(t, memOptions{})
	ctx := context.Background()
	for _, in := range []string{"", "   ", "\x00\x00", " \x00 \n"} {
		if _, err := k.Service().Chat(ctx, client.ChatRequest{Input: in}, nil); !errors.Is(err, client.ErrInvalid) {
			t.Errorf("Chat(%q) = %v, want ErrInvalid", in, err)
		}
		if _, err := k.Ingest(ctx, []kernel.IngestEvent{{Session: "main", Content: "fine"}, {Session: "main", Content: in}}); !errors.Is(err, client.ErrInvalid) {
			t.Errorf("Ingest(%q) = %v, want ErrInvalid", in, err)
		}
	}
	if h, err := k.Service().History(ctx, "main", 0); err != nil || len(h) != 0 {
		t.Fatalf("something was stored: %+v %v", h, err)
	}
}
