package main

import (
	"context"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk/sdktest"
)

// TestManifest keeps plugin.json in step with the plugin: its name, its entry (the binary go
// build makes here) and every capability the plugin uses.
func TestManifest(t *testing.T) {
	t.Parallel()
	plugintest.CheckManifest(t, newEcho().plugin(), sdktest.AllCapabilities...)
}

func TestEchoInMemory(t *testing.T) {
	t.Parallel()
	var notes []protocol.NotifyParams
	k := sdktest.Start(t, newEcho().plugin(), sdktest.Options{Plugin: "echo", Capabilities: sdktest.AllCapabilities,
		Notify: func(_ context.Context, p protocol.NotifyParams) (protocol.NotifyResult, error) {
			notes = append(notes, p)
			return protocol.NotifyResult{DeliveredTo: "chat"}, nil
		},
		Subscribe: func(context.Context, protocol.EventsSubscribeParams) (protocol.EventsSubscribeResult, error) {
			return protocol.EventsSubscribeResult{}, nil
		},
		Commit: func(_ context.Context, p protocol.MemoryCommitParams) (protocol.MemoryCommitResult, error) {
			return protocol.MemoryCommitResult{ID: 9, Session: "plugin:echo", Channel: "plugin:echo", Scope: "private"}, nil
		},
	})
	ctx := context.Background()
	tests := []struct{ tool, args, want, wantErr string }{
		{"echo", `{"text":"春眠不觉晓"}`, "春眠不觉晓", ""},
		{"echo_big", `{"bytes":130}`, BigText(130), ""},
		{"echo_big", `{"bytes":-1}`, "", "bytes must be from 0 to 67108864, got -1"},
		{"echo_big", `{"bytes":"x"}`, "", "bad arguments"},
		{"echo_notify", `{"title":"t","body":"b"}`, "notified the owner (chat)", ""},
		{"echo_remember", `{"text":"kites"}`, "remembered as event 9 in plugin:echo (channel plugin:echo, scope private)", ""},
		{"echo_recall", `{"query":"q"}`, "", "sdktest: no handler"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			got, err := k.ToolText(ctx, tt.tool, tt.args, "")
			if plugintest.WantErr(t, err, tt.wantErr) {
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q %v, want %q", got, err, tt.want)
			}
		})
	}
	if len(notes) != 1 || notes[0].Title != "t" {
		t.Fatalf("notes %+v", notes)
	}
	// BigText's lines are 64 bytes: offset in hex, a colon, 54 letters, a newline.
	lines := strings.Split(BigText(64*3), "\n")
	if lines[1] != "00000040:bcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabc" || len(BigText(1<<20)) != 1<<20 {
		t.Fatalf("BigText lines %q", lines[:2])
	}
	if _, err := k.Send(ctx, protocol.ChannelSendParams{Channel: Channel, Partner: "unreachable", Text: "x"}); err == nil ||
		!strings.Contains(err.Error(), "partner unreachable") {
		t.Fatalf("send to unreachable: %v", err)
	}
}
