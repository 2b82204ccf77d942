package events

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

var kernel = Publisher{Kind: KindKernel, Name: "kernel"}

func drain(s *Subscription) []Event {
	var out []Event
	for {
		select {
		case ev, ok := <-s.C():
			if !ok {
				return out
			}
			out = append(out, ev)
		default:
			return out
		}
	}
}

func TestTypeFiltering(t *testing.T) {
	b := New(Options{})
	all := b.Subscribe()
	turns := b.Subscribe("turn.started", "turn.finished")
	plugins := b.Subscribe("plugin.crashed")
	t.Cleanup(func() { all.Close(); turns.Close(); plugins.Close() })

	for _, typ := range []string{"turn.started", "memory.pruned", "turn.finished"} {
		if err := b.Publish(Event{Type: typ, Publisher: kernel}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		sub  *Subscription
		want []string
	}{
		{"no types gets all", all, []string{"turn.started", "memory.pruned", "turn.finished"}},
		{"filtered", turns, []string{"turn.started", "turn.finished"}},
		{"nothing matching", plugins, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, ev := range drain(tt.sub) {
				got = append(got, ev.Type)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
	if st := b.Stats(); st != (Stats{Published: 3, Delivered: 5}) {
		t.Fatalf("Stats = %+v", st)
	}
}

func TestClockStamp(t *testing.T) {
	fixed := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	b := New(Options{Clock: func() time.Time { return fixed }})
	s := b.Subscribe()
	defer s.Close()
	given := fixed.Add(time.Hour)
	tests := []struct {
		name string
		in   time.Time
		want time.Time
	}{
		{"zero time stamped by clock", time.Time{}, fixed},
		{"given time kept", given, given},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := b.Publish(Event{Type: "x", Publisher: kernel, Time: tt.in}); err != nil {
				t.Fatal(err)
			}
			if got := (<-s.C()).Time; !got.Equal(tt.want) {
				t.Fatalf("Time = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestUnsubscribe(t *testing.T) {
	b := New(Options{})
	s := b.Subscribe()
	s.Close()
	s.Close() // idempotent
	if _, ok := <-s.C(); ok {
		t.Fatal("channel not closed")
	}
	if err := b.Publish(Event{Type: "x", Publisher: kernel}); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.Delivered != 0 || st.Dropped != 0 {
		t.Fatalf("closed subscription still counted: %+v", st)
	}
}

func TestPublishRejects(t *testing.T) {
	kernelTypes := func(typ string) bool { return strings.HasPrefix(typ, "kernel.") }
	b := New(Options{Guard: DenyPluginTypes(kernelTypes)})
	s := b.Subscribe()
	defer s.Close()
	tests := []struct {
		name       string
		ev         Event
		wantDenied bool
		wantErr    string
	}{
		{"plugin kernel type denied", Event{Type: "kernel.paused", Publisher: Publisher{Kind: KindPlugin, Name: "qq"}}, true, "plugins may not publish kernel event type"},
		{"empty type", Event{Publisher: kernel}, false, "empty event type"},
		{"unknown kind", Event{Type: "x", Publisher: Publisher{Name: "?"}}, false, "unknown publisher kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := b.Publish(tt.ev)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
			}
			if errors.Is(err, ErrDenied) != tt.wantDenied {
				t.Fatalf("errors.Is(err, ErrDenied) = %v, want %v", !tt.wantDenied, tt.wantDenied)
			}
		})
	}
	if got := drain(s); len(got) != 0 {
		t.Fatalf("rejected events delivered: %v", got)
	}
	allowed := []Event{
		{Type: "kernel.paused", Publisher: kernel},
		{Type: "qq.message", Publisher: Publisher{Kind: KindPlugin, Name: "qq"}},
	}
	for _, ev := range allowed {
		if err := b.Publish(ev); err != nil {
			t.Fatalf("Publish(%s by %s) = %v", ev.Type, ev.Publisher.Kind, err)
		}
	}
	if got := drain(s); len(got) != 2 {
		t.Fatalf("delivered %d events, want 2", len(got))
	}
	if st := b.Stats(); st.Published != 2 {
		t.Fatalf("Published = %d, want 2", st.Published)
	}
}

func TestScrub(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]any
		want map[string]any
	}{
		{
			name: "secret keys",
			in: map[string]any{
				"api_key": "abc", "APIKey": "abc", "token": 1, "Password": "p", "client_secret": "s",
				"Authorization": "x", "key": "k", "provider_key": "k", "accessToken": "t",
				"monkey": "banana", "prompt_tokens": 12, "keys_total": 3, "name": "openai",
			},
			want: map[string]any{
				"api_key": Redacted, "APIKey": Redacted, "token": Redacted, "Password": Redacted, "client_secret": Redacted,
				"Authorization": Redacted, "key": Redacted, "provider_key": Redacted, "accessToken": Redacted,
				"monkey": "banana", "prompt_tokens": 12, "keys_total": 3, "name": "openai",
			},
		},
		{
			name: "secret strings anywhere",
			in: map[string]any{
				"header": "Authorization: Bearer abc.DEF-123_x",
				"note":   "my key is sk-proj-ABCDEFGHIJ1234 ok",
				"plain":  "risk-assessment and bearer of news",
			},
			want: map[string]any{
				"header": "Authorization: Bearer " + Redacted,
				"note":   "my key is " + Redacted + " ok",
				"plain":  "risk-assessment and Bearer " + Redacted + " news",
			},
		},
		{
			name: "nested maps and slices",
			in: map[string]any{
				"provider": map[string]any{"name": "deepseek", "api_key": "sk-abcdefghijklmnop"},
				"list":     []any{"Bearer zzz", map[string]any{"secret": "s", "ok": true}, []string{"sk-0123456789abc"}},
				"headers":  map[string]string{"X-Api-Key": "k", "Accept": "json"},
				"items":    []map[string]any{{"password": "p", "n": 1}},
			},
			want: map[string]any{
				"provider": map[string]any{"name": "deepseek", "api_key": Redacted},
				"list":     []any{"Bearer " + Redacted, map[string]any{"secret": Redacted, "ok": true}, []string{Redacted}},
				"headers":  map[string]string{"X-Api-Key": Redacted, "Accept": "json"},
				"items":    []map[string]any{{"password": Redacted, "n": 1}},
			},
		},
		{name: "nil payload", in: nil, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(Options{})
			s := b.Subscribe()
			defer s.Close()
			before := deepCopyForTest(tt.in)
			if err := b.Publish(Event{Type: "x", Publisher: kernel, Payload: tt.in}); err != nil {
				t.Fatal(err)
			}
			got := (<-s.C()).Payload
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("delivered %#v\nwant %#v", got, tt.want)
			}
			if !reflect.DeepEqual(tt.in, before) {
				t.Errorf("original payload modified: %#v", tt.in)
			}
		})
	}
}

// deepCopyForTest copies through the scrubber's own types without scrubbing,
// so the test can prove the original is untouched.
func deepCopyForTest(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	var cp func(v any) any
	cp = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, val := range x {
				out[k] = cp(val)
			}
			return out
		case map[string]string:
			out := map[string]string{}
			for k, val := range x {
				out[k] = val
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, val := range x {
				out[i] = cp(val)
			}
			return out
		case []string:
			return append([]string(nil), x...)
		case []map[string]any:
			out := make([]map[string]any, len(x))
			for i, val := range x {
				out[i] = cp(val).(map[string]any)
			}
			return out
		default:
			return v
		}
	}
	return cp(m).(map[string]any)
}

func TestSlowSubscriber(t *testing.T) {
	b := New(Options{Buffer: 2})
	slow := b.Subscribe()
	defer slow.Close()
	fast := b.Subscribe()
	defer fast.Close()

	received := 0
	for range 5 {
		// Publish must return even though slow is never read.
		if err := b.Publish(Event{Type: "tick", Publisher: kernel}); err != nil {
			t.Fatal(err)
		}
		received += len(drain(fast))
	}
	if received != 5 {
		t.Fatalf("fast subscriber got %d, want 5", received)
	}
	if got := len(drain(slow)); got != 2 {
		t.Fatalf("slow subscriber buffered %d, want 2", got)
	}
	if slow.Dropped() != 3 || fast.Dropped() != 0 {
		t.Fatalf("Dropped slow=%d fast=%d, want 3 and 0", slow.Dropped(), fast.Dropped())
	}
	if st := b.Stats(); st != (Stats{Published: 5, Delivered: 7, Dropped: 3}) {
		t.Fatalf("Stats = %+v", st)
	}
}

func TestConcurrentPublish(t *testing.T) {
	const publishers, each = 8, 100
	b := New(Options{Buffer: publishers * each})
	s := b.Subscribe("a")
	defer s.Close()
	var wg sync.WaitGroup
	for i := range publishers {
		wg.Go(func() {
			for range each {
				typ := "a"
				if i%2 == 1 {
					typ = "b"
				}
				if err := b.Publish(Event{Type: typ, Publisher: kernel, Payload: map[string]any{"token": "t", "n": i}}); err != nil {
					t.Error(err)
				}
			}
		})
		wg.Go(func() {
			extra := b.Subscribe()
			extra.Close()
		})
	}
	wg.Wait()
	got := drain(s)
	if len(got) != publishers/2*each {
		t.Fatalf("got %d events, want %d", len(got), publishers/2*each)
	}
	for _, ev := range got {
		if ev.Payload["token"] != Redacted {
			t.Fatalf("payload not scrubbed: %v", ev.Payload)
		}
	}
	if st := b.Stats(); st.Published != publishers*each || st.Dropped != 0 {
		t.Fatalf("Stats = %+v", st)
	}
}

// TestPublishCausalOrder: an event published in answer to another (by a subscriber that got the
// first) reaches every other subscriber after the event it answers, whatever order Publish
// visits the subscribers in.
func TestPublishCausalOrder(t *testing.T) {
	const rounds, watchers = 300, 16
	b := New(Options{Buffer: 2 * rounds})
	answer := b.Subscribe("ask")
	var ws []*Subscription
	for range watchers {
		ws = append(ws, b.Subscribe("ask", "answer"))
	}
	done := make(chan struct{})
	go func() { // the answering subscriber: as fast as it can
		defer close(done)
		for ev := range answer.C() {
			if err := b.Publish(Event{Type: "answer", Publisher: kernel, Payload: ev.Payload}); err != nil {
				t.Error(err)
			}
		}
	}()
	for i := range rounds {
		if err := b.Publish(Event{Type: "ask", Publisher: kernel, Payload: map[string]any{"n": i}}); err != nil {
			t.Fatal(err)
		}
	}
	for wi, w := range ws {
		asked := map[any]bool{}
		for got := 0; got < 2*rounds; got++ {
			ev := <-w.C()
			n := ev.Payload["n"]
			if ev.Type == "ask" {
				asked[n] = true
			} else if !asked[n] {
				t.Fatalf("watcher %d got the answer to %v before the question", wi, n)
			}
		}
	}
	answer.Close()
	<-done
}
