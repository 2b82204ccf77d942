// Package events is the kernel's typed publish/subscribe bus.
//
// Every event passes the bus's [Guard] before fan-out and has its payload
// deep-copied with secrets scrubbed, so subscribers (including plugins) never
// see API keys or bearer tokens. Delivery never blocks a publisher: each
// [Subscription] has a bounded buffer and events that do not fit are dropped
// and counted.
//
// Plugins never publish kernel events. The bus does not know which event types
// belong to the kernel; the host installs a Guard (for example
// [DenyPluginTypes]) that refuses them when [Publisher.Kind] is [KindPlugin].
//
// The API is internal to the kernel and may change between releases.
package events

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// ErrDenied is returned (wrapped with the guard's reason) by [Bus.Publish]
// when the guard refuses an event.
var ErrDenied = errors.New("event denied")

// Redacted replaces scrubbed secrets in delivered payloads.
const Redacted = "[redacted]"

// PublisherKind says who published an event.
type PublisherKind string

const (
	// KindKernel marks events published by the kernel itself.
	KindKernel PublisherKind = "kernel"
	// KindPlugin marks events published on behalf of a plugin.
	KindPlugin PublisherKind = "plugin"
)

// Publisher identifies the source of an event.
type Publisher struct {
	Kind PublisherKind
	Name string
}

// Event is one message on the bus. Payload should hold JSON-like values
// (maps, slices, strings, numbers, booleans).
type Event struct {
	Type      string
	Publisher Publisher
	Time      time.Time
	Payload   map[string]any
}

// Guard decides whether an event may be published; reason explains a denial.
// A Guard must be safe for concurrent use.
type Guard func(Event) (allow bool, reason string)

// Options configures a [Bus]. The zero value is usable.
type Options struct {
	// Logger receives diagnostics (e.g. the first drop of a subscriber).
	// Nil discards them.
	Logger *slog.Logger
	// Buffer is the per-subscriber channel capacity; default 256.
	Buffer int
	// Guard is consulted before every fan-out; nil allows everything.
	Guard Guard
	// Clock stamps events published with a zero Time; default time.Now.
	Clock func() time.Time
}

// Stats are cumulative bus counters.
type Stats struct {
	// Published counts events accepted by Publish.
	Published uint64
	// Delivered counts events placed in subscriber buffers.
	Delivered uint64
	// Dropped counts events lost because a subscriber's buffer was full.
	Dropped uint64
}

// Bus fans events out to subscribers. It is safe for concurrent use.
type Bus struct {
	log    *slog.Logger
	buffer int
	guard  Guard
	clock  func() time.Time

	mu   sync.RWMutex
	subs map[*Subscription]struct{}
	// order makes each event's delivery one step: an event a subscriber publishes in answer to
	// another (a plugin notified of a resume sends a reminder) can never reach a third
	// subscriber before the event it answers, whatever the order the subscribers are visited in.
	order sync.Mutex

	published atomic.Uint64
	delivered atomic.Uint64
	dropped   atomic.Uint64
}

// New returns a Bus configured by opts.
func New(opts Options) *Bus {
	b := &Bus{
		log:    opts.Logger,
		buffer: opts.Buffer,
		guard:  opts.Guard,
		clock:  opts.Clock,
		subs:   make(map[*Subscription]struct{}),
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.buffer <= 0 {
		b.buffer = 256
	}
	if b.clock == nil {
		b.clock = time.Now
	}
	return b
}

// Subscription receives the events of the types it asked for. It is safe for
// concurrent use.
type Subscription struct {
	bus     *Bus
	types   map[string]bool // nil: every type
	ch      chan Event
	dropped atomic.Uint64
	once    sync.Once
}

// Subscribe returns a subscription to the given event types, or to every
// type when none are given. The caller must [Subscription.Close] it.
func (b *Bus) Subscribe(types ...string) *Subscription {
	s := &Subscription{bus: b, ch: make(chan Event, b.buffer)}
	if len(types) > 0 {
		s.types = make(map[string]bool, len(types))
		for _, t := range types {
			s.types[t] = true
		}
	}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// C returns the channel events are delivered on. It is closed by
// [Subscription.Close].
func (s *Subscription) C() <-chan Event { return s.ch }

// Dropped returns how many events this subscription lost to a full buffer.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Close unsubscribes and closes the channel. It is idempotent.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.bus.mu.Lock()
		delete(s.bus.subs, s)
		close(s.ch)
		s.bus.mu.Unlock()
	})
}

func (s *Subscription) wants(typ string) bool {
	return s.types == nil || s.types[typ]
}

// Publish consults the guard, scrubs a deep copy of the payload and delivers
// the event to every matching subscriber without blocking. A denied event
// returns an error wrapping [ErrDenied] and reaches no one. Events with a
// zero Time are stamped with the bus clock.
//
// Publish does not itself stop plugins from publishing kernel event types:
// the host enforces that with the [Guard] (see [DenyPluginTypes]).
func (b *Bus) Publish(ev Event) error {
	if ev.Type == "" {
		return errors.New("publish: empty event type")
	}
	if ev.Publisher.Kind != KindKernel && ev.Publisher.Kind != KindPlugin {
		return fmt.Errorf("publish %s: unknown publisher kind %q", ev.Type, ev.Publisher.Kind)
	}
	if b.guard != nil {
		if ok, reason := b.guard(ev); !ok {
			return fmt.Errorf("publish %s by %s %q: %w: %s", ev.Type, ev.Publisher.Kind, ev.Publisher.Name, ErrDenied, reason)
		}
	}
	if ev.Time.IsZero() {
		ev.Time = b.clock()
	}
	ev.Payload = Scrub(ev.Payload)
	b.published.Add(1)

	slow := false
	b.order.Lock()
	b.mu.RLock()
	for s := range b.subs {
		if !s.wants(ev.Type) {
			continue
		}
		select {
		case s.ch <- ev:
			b.delivered.Add(1)
		default:
			b.dropped.Add(1)
			slow = slow || s.dropped.Add(1) == 1
		}
	}
	b.mu.RUnlock()
	b.order.Unlock()
	if slow { // logged outside the locks: a logger may publish
		b.log.Warn("event subscriber is slow; dropping events", "event_type", ev.Type, "buffer", b.buffer)
	}
	return nil
}

// Stats returns the bus counters.
func (b *Bus) Stats() Stats {
	return Stats{
		Published: b.published.Load(),
		Delivered: b.delivered.Load(),
		Dropped:   b.dropped.Load(),
	}
}

// DenyPluginTypes returns a Guard that refuses events published by plugins
// whose type is reserved for the kernel according to isKernelType.
func DenyPluginTypes(isKernelType func(eventType string) bool) Guard {
	return func(ev Event) (bool, string) {
		if ev.Publisher.Kind == KindPlugin && isKernelType(ev.Type) {
			return false, fmt.Sprintf("plugins may not publish kernel event type %q", ev.Type)
		}
		return true, ""
	}
}

var secretKeyTerms = []string{"api_key", "apikey", "token", "password", "secret", "authorization", "key"}

// isSecretKey reports whether a payload key names a secret: one of the
// secret terms as the whole key or as a suffix after a separator or a
// camelCase boundary (provider_key, accessToken), case-insensitively.
func isSecretKey(key string) bool {
	lower := strings.ToLower(key)
	for _, term := range secretKeyTerms {
		if !strings.HasSuffix(lower, term) {
			continue
		}
		i := len(lower) - len(term)
		if i == 0 || len(lower) != len(key) {
			return true
		}
		prev := rune(key[i-1])
		if strings.ContainsRune("_-. ", prev) {
			return true
		}
		if unicode.IsUpper(rune(key[i])) && !unicode.IsUpper(prev) {
			return true
		}
	}
	return false
}

var (
	bearerRe = regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9\-._~+/]+=*`)
	skKeyRe  = regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{10,}`)
)

func scrubString(s string) string {
	if !strings.Contains(s, "sk-") && !strings.Contains(strings.ToLower(s), "bearer") {
		return s
	}
	s = bearerRe.ReplaceAllString(s, "Bearer "+Redacted)
	return skKeyRe.ReplaceAllString(s, Redacted)
}

// Scrub returns a deep copy of payload with secrets redacted: values under
// secret-looking keys become [Redacted], and bearer tokens and sk- keys are
// redacted inside any string. Maps and slices of JSON-like values are copied;
// values of other types are copied shallowly. The input is not modified.
func Scrub(payload map[string]any) map[string]any {
	if payload == nil {
		return nil
	}
	return scrubValue(payload).(map[string]any)
}

func scrubValue(v any) any {
	switch x := v.(type) {
	case string:
		return scrubString(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if isSecretKey(k) {
				out[k] = Redacted
				continue
			}
			out[k] = scrubValue(val)
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(x))
		for k, val := range x {
			if isSecretKey(k) {
				out[k] = Redacted
				continue
			}
			out[k] = scrubString(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = scrubValue(val)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, val := range x {
			out[i] = scrubString(val)
		}
		return out
	case []map[string]any:
		out := make([]map[string]any, len(x))
		for i, val := range x {
			out[i] = scrubValue(val).(map[string]any)
		}
		return out
	default:
		return v
	}
}
