package sdk

// The kernel's calls a plugin serves besides its tools: stage hooks and channel sends, the
// kernel's notifications, and the shared-memory event ring it subscribes to.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// runHook answers hooks/run.
func (s *server) runHook(ctx context.Context, params json.RawMessage) (any, error) {
	var p protocol.HookRunParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &protocol.Error{Code: protocol.InvalidParams, Message: "invalid params: " + err.Error()}
	}
	h := s.hooks[p.Hook]
	if h == nil {
		return nil, &protocol.Error{Code: protocol.InvalidParams, Message: "unknown hook " + p.Hook}
	}
	d := p.Data
	if p.DataRef != nil {
		b, err := s.readRef(*p.DataRef)
		if err != nil {
			return nil, &protocol.Error{Code: protocol.InvalidParams, Message: "hook data: " + err.Error()}
		}
		d = new(protocol.StageData)
		if err := json.Unmarshal(b, d); err != nil {
			return nil, &protocol.Error{Code: protocol.InvalidParams, Message: "hook data: " + err.Error()}
		}
	}
	if d == nil {
		return nil, &protocol.Error{Code: protocol.InvalidParams, Message: "hooks/run without data"}
	}
	if d.TurnID != "" {
		ctx = withTurn(ctx, d.TurnID)
	}
	return s.callHook(ctx, h, d)
}

// callHook runs a hook's Run, turning a panic into an error.
func (s *server) callHook(ctx context.Context, h *Hook, d *StageData) (p Patch, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("hook panicked", "hook", h.Name, "panic", r)
			err = fmt.Errorf("hook %s panicked: %v", h.Name, r)
		}
	}()
	return h.Run(ctx, s.k, d)
}

// channelSend answers channel/send: the reply is delivered by the channel's Send, and its
// failure is the answer's error.
func (s *server) channelSend(ctx context.Context, params json.RawMessage) (any, error) {
	var p protocol.ChannelSendParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &protocol.Error{Code: protocol.InvalidParams, Message: "invalid params: " + err.Error()}
	}
	c := s.channels[p.Channel]
	if c == nil {
		return nil, &protocol.Error{Code: protocol.InvalidParams, Message: "unknown channel " + p.Channel}
	}
	for i := range p.Blocks {
		if ref := p.Blocks[i].Ref; ref != nil {
			b, err := s.readRef(*ref)
			if err != nil {
				return nil, &protocol.Error{Code: protocol.InvalidParams, Message: fmt.Sprintf("block %d: %v", i+1, err)}
			}
			p.Blocks[i].Data, p.Blocks[i].Ref = b, nil
		}
	}
	id, err := s.send(ctx, c, p)
	if err != nil {
		return nil, &protocol.Error{Code: protocol.InternalError, Message: fmt.Sprintf("channel %s: not delivered: %v", c.Name, err)}
	}
	return protocol.ChannelSendResult{MessageID: id}, nil
}

// send runs a channel's Send, turning a panic into an error.
func (s *server) send(ctx context.Context, c *Channel, m OutMessage) (id string, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("channel send panicked", "channel", c.Name, "panic", r)
			err = fmt.Errorf("send panicked: %v", r)
		}
	}()
	return c.Send(ctx, s.k, m)
}

// notification handles the kernel's notifications (on the read loop: never blocks).
func (s *server) notification(method string, params json.RawMessage) {
	switch method {
	case protocol.NotifInitialized:
		s.started()
	case protocol.NotifPaused, protocol.NotifResumed:
		paused := method == protocol.NotifPaused
		s.k.paused.Store(paused)
		if s.p.OnPause != nil {
			s.enqueue(method, func() { s.p.OnPause(s.ctx, s.k, paused) })
		}
	case protocol.NotifRelease:
		var p protocol.ReleaseParams
		if err := json.Unmarshal(params, &p); err != nil {
			s.log.Warn("bad shm/release", "err", err)
			return
		}
		s.release(contentRefs(p.Refs))
	case protocol.NotifEvent:
		var e Event
		if err := json.Unmarshal(params, &e); err != nil {
			s.log.Warn("bad events/event", "err", err)
			return
		}
		if s.p.OnEvent != nil {
			s.enqueue("event "+e.Type, func() { s.p.OnEvent(s.ctx, s.k, e) })
		}
	}
}

// started runs once the handshake is done: it subscribes to the plugin's events and runs
// Start.
func (s *server) started() {
	s.mu.Lock()
	native, hello := s.native, s.hello
	s.mu.Unlock()
	if native && hello.Paused {
		s.k.paused.Store(true)
	}
	s.wg.Add(1)
	go func() { // owned by serve: returns at shutdown
		defer s.wg.Done()
		if len(s.p.Events) > 0 && native {
			if err := s.subscribe(s.ctx, s.p.Events); err != nil {
				s.log.Error("subscribing to kernel events", "err", err)
			}
		}
		if s.p.Start != nil {
			if err := s.p.Start(s.ctx, s.k); err != nil && s.ctx.Err() == nil {
				s.log.Error("plugin start", "err", err)
			}
		}
	}()
}

// subscribe replaces the subscription with types and, when events come through the ring,
// makes sure one goroutine reads it until shutdown.
func (s *server) subscribe(ctx context.Context, types []string) error {
	var res protocol.EventsSubscribeResult
	if err := s.k.call(ctx, protocol.MethodEventsSubscribe, protocol.EventsSubscribeParams{Types: types}, &res); err != nil {
		return err
	}
	s.mu.Lock()
	s.subTypes = slices.Clone(types)
	reg := s.region
	start := res.Ring && reg != nil && !s.ringRead
	if start {
		s.ringRead = true
	}
	s.mu.Unlock()
	if !start {
		return nil
	}
	s.wg.Add(1)
	go func() { // owned by serve
		defer s.wg.Done()
		s.readRing(reg)
	}()
	return nil
}

// readRing delivers the events of the ring to OnEvent until shutdown.
func (s *server) readRing(reg region) {
	for {
		b, dropped, err := reg.NextEvent(s.ctx)
		if err != nil {
			if s.ctx.Err() == nil {
				s.log.Error("reading the event ring", "err", err)
			}
			return
		}
		if dropped > 0 {
			s.log.Warn("kernel events dropped by the ring", "dropped", dropped)
		}
		var e Event
		if err := json.Unmarshal(b, &e); err != nil {
			s.log.Warn("bad event in the ring", "err", err)
			continue
		}
		s.mu.Lock()
		wanted := slices.Contains(s.subTypes, e.Type)
		s.mu.Unlock()
		if s.p.OnEvent != nil && wanted {
			s.enqueue("event "+e.Type, func() { s.p.OnEvent(s.ctx, s.k, e) })
		}
	}
}
