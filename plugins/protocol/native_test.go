package protocol

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestNativeNegotiation(t *testing.T) {
	t.Parallel()
	hello, _ := json.Marshal(NativeHello{Version: NativeVersion, Plugin: "p", Capabilities: []string{CapMemory}, Shm: &ShmInfo{ArenaSize: 1 << 20}})
	tests := []struct {
		name    string
		exp     map[string]json.RawMessage
		ok      bool
		wantErr string
	}{
		{"absent", nil, false, ""},
		{"present", map[string]json.RawMessage{ExtensionName: hello}, true, ""},
		{"malformed", map[string]json.RawMessage{ExtensionName: json.RawMessage(`{"version":"one"}`)}, false, "capabilities.experimental.hologram"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, ok, err := HelloFrom(ClientCapabilities{Experimental: tt.exp})
			if ok != tt.ok || (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("HelloFrom: %+v %v %v", h, ok, err)
			}
			if ok && (h.Plugin != "p" || h.Shm.ArenaSize != 1<<20 || h.Capabilities[0] != CapMemory) {
				t.Fatalf("hello %+v", h)
			}
			_, ok, err = OfferFrom(ServerCapabilities{Experimental: tt.exp})
			if ok != tt.ok || (err == nil) != (tt.wantErr == "") {
				t.Fatalf("OfferFrom: %v %v", ok, err)
			}
		})
	}
}

func TestCapabilityError(t *testing.T) {
	t.Parallel()
	e := CapabilityError(MethodLLMComplete, CapLLM)
	var d struct{ Capability string }
	if e.Code != CodeCapability || json.Unmarshal(e.Data, &d) != nil || d.Capability != "llm" ||
		e.Message != `method llm/complete needs capability "llm" (not declared in the manifest)` {
		t.Fatalf("%+v", e)
	}
	for method, want := range map[string]string{MethodHookRun: CapHooks, MethodChannelInput: CapChannels, NotifPaused: CapLifecycle,
		MethodEventsSubscribe: CapEvents, MethodOwnerNotify: CapNotify, MethodMemoryCommit: CapMemory, "tools/call": ""} {
		if got := CapabilityFor(method); got != want {
			t.Errorf("CapabilityFor(%s) = %q, want %q", method, got, want)
		}
	}
}

// TestOnResponded: the callback runs once the response is on the wire (a plugin exits after
// answering shutdown).
func TestOnResponded(t *testing.T) {
	t.Parallel()
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	responded := make(chan string, 1)
	server := NewConn(ar, aw, ConnOptions{
		Handler:     HandlerFunc(func(context.Context, string, json.RawMessage) (any, error) { return struct{}{}, nil }),
		OnResponded: func(method string, err error) { responded <- method },
	})
	client := NewConn(br, bw, ConnOptions{})
	go server.Run(context.Background())
	go client.Run(context.Background())
	defer server.Close()
	defer client.Close()
	if err := client.Call(context.Background(), MethodShutdown, nil, nil); err != nil {
		t.Fatal(err)
	}
	if m := <-responded; m != MethodShutdown {
		t.Fatalf("responded %q", m)
	}
}
