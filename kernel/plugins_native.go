package kernel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/memadmin"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/cold"
	"github.com/hologramagent/hologram/plugins/host"
	"github.com/hologramagent/hologram/plugins/protocol"
)

// Bounds of what native plugins may ask of the kernel (ARCHITECTURE.md §5).
const (
	maxPluginRecall     = 50
	defaultPluginRecall = 5
	maxPluginCommit     = 64 << 10  // bytes of one memory/commit text
	maxNotifyTitle      = 200       // runes
	maxNotifyBody       = 4000      // runes
	maxChannelText      = 256 << 10 // bytes of one channel message
	maxCompleteTokens   = 8192
	defaultCompleteMax  = 1024
	channelSendTimeout  = 30 * time.Second
)

// Events the kernel publishes about native plugins' channels and notifications.
const (
	EventChannelDelivered      = "channel_delivered"
	EventChannelDeliveryFailed = "channel_delivery_failed"
	EventChannelReplyFailed    = "channel_reply_failed" // the turn failed: nothing was sent
	EventOwnerNotification     = "owner_notification"
)

var (
	channelNameRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	eventTypeRe   = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)
)

// pluginChannel is the channel of memory a plugin writes outside a turn.
func pluginChannel(plugin string) string { return "plugin:" + plugin }

// grants records which plugin the kernel is waiting on in which turn: a native plugin may use a
// turn's memory scope only while it serves that turn (a tool call or a hook of it), so a turn
// id learned elsewhere (e.g. from events) opens nothing. Safe for concurrent use.
type grants struct {
	mu sync.Mutex
	m  map[string]int       // "turn\x00plugin" → calls in flight
	dl map[string]time.Time // "turn\x00plugin" → the latest deadline of its tool calls in flight
}

// grant opens turn's scope to plugin until the returned func is called.
func (g *grants) grant(turn, plugin string) func() { return g.grantUntil(turn, plugin, time.Time{}) }

// grantUntil is grant for a tool call that must end by deadline (zero: none known); approvals
// the plugin asks meanwhile end before it ([grants.deadline]).
func (g *grants) grantUntil(turn, plugin string, deadline time.Time) func() {
	if turn == "" {
		return func() {}
	}
	key := turn + "\x00" + plugin
	g.mu.Lock()
	if g.m == nil {
		g.m, g.dl = map[string]int{}, map[string]time.Time{}
	}
	g.m[key]++
	if deadline.After(g.dl[key]) {
		g.dl[key] = deadline
	}
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.m[key]--; g.m[key] <= 0 {
			delete(g.m, key)
			delete(g.dl, key)
		}
	}
}

// deadline returns the latest deadline of plugin's tool calls in flight in turn.
func (g *grants) deadline(turn, plugin string) (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	d, ok := g.dl[turn+"\x00"+plugin]
	return d, ok && !d.IsZero()
}

// has reports whether plugin serves turn now.
func (g *grants) has(turn, plugin string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.m[turn+"\x00"+plugin] > 0
}

// nativeServices is the kernel's side of the native extensions (host.Services).
type nativeServices struct {
	k *Kernel
	p *plugins
}

// turnSession returns the session of a turn plugin serves now.
func (s nativeServices) turnSession(ctx context.Context, plugin, turn string) (memory.Session, error) {
	s.k.turnMu.Lock()
	t := s.k.turns[turn]
	s.k.turnMu.Unlock()
	if t == nil || !s.p.grants.has(turn, plugin) {
		return memory.Session{}, invalid("turn %q is not one this plugin is serving now: memory calls carry the turn of the tool call or hook being served", turn)
	}
	sess, err := s.k.store.GetSession(ctx, t.session)
	if err != nil {
		return memory.Session{}, mapErr(err)
	}
	return sess, nil
}

// SetHooks implements host.Services: the plugin's hooks become agent hooks named
// "<plugin>/<hook>", run in the agent's order.
func (s nativeServices) SetHooks(plugin string, hooks []host.HookInfo) error {
	prefix := plugin + "/"
	s.k.agent.RemoveHooks(prefix)
	for _, h := range hooks {
		run := h.Run
		err := s.k.agent.AddHook(agent.Hook{Name: prefix + h.Name, Stage: agent.Stage(h.Stage), Priority: h.Priority,
			Fn: func(ctx context.Context, d *agent.StageData) (agent.Patch, error) {
				defer s.p.grants.grant(d.TurnID, plugin)()
				patch, err := run(ctx, toWireStage(d))
				if err != nil {
					return agent.Patch{}, err
				}
				return fromWirePatch(patch), nil
			}})
		if err != nil {
			s.k.agent.RemoveHooks(prefix)
			return err
		}
	}
	return nil
}

// toWireStage converts the agent's stage data for the wire.
func toWireStage(d *agent.StageData) protocol.StageData {
	w := protocol.StageData{Stage: string(d.Stage), Session: d.Session, TurnID: d.TurnID, Channel: d.Channel, Partner: d.Partner,
		Scope: d.Scope.String(), Round: d.Round, Input: d.Input, Text: d.Text, Reasoning: d.Reasoning, Result: d.Result,
		ResultStatus: d.ResultStatus, Messages: toWireMessages(d.Messages), ToolCalls: toWireCalls(d.ToolCalls)}
	if d.Call != nil {
		c := protocol.ToolCallData(*d.Call)
		w.Call = &c
	}
	return w
}

func toWireMessages(ms []llm.Message) []protocol.ChatMessage {
	if ms == nil {
		return nil
	}
	out := make([]protocol.ChatMessage, len(ms))
	for i, m := range ms {
		out[i] = protocol.ChatMessage{Role: m.Role, Content: m.Content, ToolCalls: toWireCalls(m.ToolCalls), ToolCallID: m.ToolCallID}
	}
	return out
}

func toWireCalls(cs []llm.ToolCall) []protocol.ToolCallData {
	if cs == nil {
		return nil
	}
	out := make([]protocol.ToolCallData, len(cs))
	for i, c := range cs {
		out[i] = protocol.ToolCallData(c)
	}
	return out
}

func fromWireMessages(ms []protocol.ChatMessage) []llm.Message {
	out := make([]llm.Message, len(ms))
	for i, m := range ms {
		out[i] = llm.Message{Role: m.Role, Content: m.Content, ToolCalls: fromWireCalls(m.ToolCalls), ToolCallID: m.ToolCallID}
	}
	return out
}

func fromWireCalls(cs []protocol.ToolCallData) []llm.ToolCall {
	if cs == nil {
		return nil
	}
	out := make([]llm.ToolCall, len(cs))
	for i, c := range cs {
		out[i] = llm.ToolCall(c)
	}
	return out
}

// fromWirePatch converts a plugin's patch for the agent.
func fromWirePatch(w protocol.HookPatch) agent.Patch {
	p := agent.Patch{Input: w.Input, Text: w.Text, Args: w.Args, Deny: w.Deny, Result: w.Result, Reply: w.Reply}
	if w.Messages != nil {
		ms := fromWireMessages(*w.Messages)
		p.Messages = &ms
	}
	if len(w.AppendMessages) > 0 {
		p.AppendMessages = fromWireMessages(w.AppendMessages)
	}
	if w.ToolCalls != nil {
		cs := fromWireCalls(*w.ToolCalls)
		if cs == nil {
			cs = []llm.ToolCall{}
		}
		p.ToolCalls = &cs
	}
	return p
}

// channelSession returns the id of the session of a channel and partner: "chan:<channel>:<partner>",
// or with a hash of the partner when the partner's id does not fit a session id.
func channelSession(channel, partner string) string {
	id := "chan:" + channel + ":" + partner
	if sessionIDRe.MatchString(id) {
		return id
	}
	sum := sha256.Sum256([]byte(partner))
	return "chan:" + channel + ":h" + hex.EncodeToString(sum[:12])
}

// channelScene is the declared scene key of a channel and partner (memory/engine derives the same).
func channelScene(channel, partner string) string { return "chan:" + channel + "/peer:" + partner }

// ChannelInput implements host.Services: the message starts an agent turn in the session of
// the channel and partner (scope group:<channel>/<partner>); the reply goes back with
// channel/send, and its delivery (or failure) is published.
func (s nativeServices) ChannelInput(ctx context.Context, plugin string, in protocol.ChannelInputParams) (protocol.ChannelInputResult, error) {
	k := s.k
	text := strings.TrimSpace(sanitize(in.Text))
	partner := strings.TrimSpace(sanitize(in.Partner))
	switch {
	case !channelNameRe.MatchString(in.Channel):
		return protocol.ChannelInputResult{}, invalid("channel name %q: 1 to 64 of A-Z a-z 0-9 . _ -", in.Channel)
	case partner == "" || utf8.RuneCountInString(partner) > 128:
		return protocol.ChannelInputResult{}, invalid("partner must be 1 to 128 characters, got %q", in.Partner)
	case text == "" && len(in.Blocks) == 0:
		return protocol.ChannelInputResult{}, invalid("the message is empty")
	case len(text) > maxChannelText:
		return protocol.ChannelInputResult{}, invalid("the message has %d bytes, at most %d", len(text), maxChannelText)
	}
	scene := channelScene(in.Channel, partner)
	if in.Scene != "" && in.Scene != scene {
		return protocol.ChannelInputResult{}, invalid("declared scene %q is not the scene of channel %s and partner %s (%q)", in.Scene, in.Channel, partner, scene)
	}
	if k.paused.Load() {
		return protocol.ChannelInputResult{}, fmt.Errorf("%w: the kernel is paused: input from channel %s is stopped until the owner resumes it", client.ErrUnavailable, in.Channel)
	}
	atts := make([]client.Attachment, len(in.Blocks))
	for i, b := range in.Blocks {
		atts[i] = client.Attachment{Kind: b.Kind, Name: b.Name, MIME: b.MIME, Text: b.Text, Data: b.Data}
	}
	blocks, _, err := memadmin.MediaBlocks(ctx, atts, nil)
	if err != nil {
		return protocol.ChannelInputResult{}, err
	}
	k.ocr.Blocks(ctx, blocks)
	if said, _ := k.stt.Blocks(ctx, blocks); text == "" && len(said) > 0 { // a voice message alone: its transcript is the text
		text = memadmin.VoiceInput("", said)
	}
	if text == "" {
		text = "(attachment)"
	}
	id := channelSession(in.Channel, partner)
	sess, err := k.store.GetSession(ctx, id)
	if errors.Is(err, memory.ErrNotFound) {
		sess, err = k.store.CreateSession(ctx, memory.Session{ID: id, Title: in.Channel + " · " + partner, Channel: in.Channel, Partner: partner,
			Scope: memory.Scope{Kind: memory.ScopeGroup, Group: in.Channel + "/" + partner}})
		if errors.Is(err, memory.ErrExists) {
			sess, err = k.store.GetSession(ctx, id)
		}
	}
	if err != nil {
		return protocol.ChannelInputResult{}, mapErr(err)
	}
	if sess.Channel != in.Channel || sess.Partner != partner {
		return protocol.ChannelInputResult{}, invalid("session %s belongs to channel %s and partner %s", id, sess.Channel, sess.Partner)
	}
	if err := k.checkProvider(sess.Model); err != nil {
		return protocol.ChannelInputResult{}, err
	}
	if err := s.p.goChannel(func(base context.Context) { s.channelTurn(base, plugin, in.Channel, sess, text, blocks) }); err != nil {
		return protocol.ChannelInputResult{}, err
	}
	return protocol.ChannelInputResult{Session: sess.ID, Scene: scene}, nil
}

// channelTurn runs the turn of a channel message and delivers its reply through the plugin.
func (s nativeServices) channelTurn(base context.Context, plugin, channel string, sess memory.Session, text string, blocks []memory.Block) {
	k := s.k
	res, err := k.runTurn(base, agent.TurnRequest{Session: sess.ID, Input: text, Channel: channel, Partner: sess.Partner, Scope: sess.Scope,
		Blocks: blocks}, nil, nil)
	payload := map[string]any{"plugin": plugin, "channel": channel, "partner": sess.Partner, "session": sess.ID, "turn_id": res.TurnID}
	if err != nil {
		payload["error"] = err.Error()
		k.log.Warn("channel turn failed; no reply sent", "plugin", plugin, "channel", channel, "session", sess.ID, "err", err)
		k.publish(EventChannelReplyFailed, payload)
		return
	}
	ctx, cancel := context.WithTimeout(base, channelSendTimeout)
	defer cancel()
	out, err := s.p.host.SendChannel(ctx, plugin, protocol.ChannelSendParams{Channel: channel, Partner: sess.Partner, Session: sess.ID,
		TurnID: res.TurnID, Text: res.Text})
	if err != nil {
		payload["error"] = err.Error()
		k.log.Warn("channel reply not delivered", "plugin", plugin, "channel", channel, "session", sess.ID, "turn", res.TurnID, "err", err)
		k.publish(EventChannelDeliveryFailed, payload)
		return
	}
	payload["message_id"] = out.MessageID
	k.log.Info("channel reply delivered", "plugin", plugin, "channel", channel, "session", sess.ID, "turn", res.TurnID, "message_id", out.MessageID)
	k.publish(EventChannelDelivered, payload)
}

// Recall implements host.Services: memory/recall in the scope of the turn the plugin serves, or
// public memory only outside a turn.
func (s nativeServices) Recall(ctx context.Context, plugin string, p protocol.MemoryRecallParams) (protocol.MemoryRecallResult, error) {
	m := s.k.mem
	if strings.TrimSpace(p.Query) == "" {
		return protocol.MemoryRecallResult{}, invalid("the query is empty")
	}
	if p.K < 0 || p.K > maxPluginRecall {
		return protocol.MemoryRecallResult{}, invalid("k must be from 1 to %d, got %d", maxPluginRecall, p.K)
	}
	if p.K == 0 {
		p.K = defaultPluginRecall
	}
	var (
		hits  []cold.Hit
		scope string
		err   error
	)
	if p.Turn != "" {
		sess, serr := s.turnSession(ctx, plugin, p.Turn)
		if serr != nil {
			return protocol.MemoryRecallResult{}, serr
		}
		scope = sess.Scope.String()
		hits, err = m.Recall(ctx, sess.ID, p.Query, p.K, nil, nil)
	} else {
		scope = memory.Scope{Kind: memory.ScopePublic}.String()
		hits, err = m.RecallFor(ctx, memory.Viewer{}, p.Query, p.K)
	}
	if err != nil {
		return protocol.MemoryRecallResult{}, mapErr(err)
	}
	out := protocol.MemoryRecallResult{Items: make([]protocol.MemoryItem, 0, len(hits)), Scope: scope}
	for _, h := range hits {
		e := h.Event
		out.Items = append(out.Items, protocol.MemoryItem{ID: e.ID, Time: e.Time, Role: string(e.Role), Content: e.Content,
			Channel: e.Channel, Partner: e.Partner, Scope: e.Scope.String(), Score: h.Score})
	}
	return out, nil
}

// Commit implements host.Services: the text becomes a memory event of the plugin's memory
// session "plugin:<name>", in the channel, partner and scope of the turn it serves, or
// owner-private on channel plugin:<name> outside a turn.
func (s nativeServices) Commit(ctx context.Context, plugin string, p protocol.MemoryCommitParams) (protocol.MemoryCommitResult, error) {
	k := s.k
	text := strings.TrimSpace(sanitize(p.Text))
	if text == "" {
		return protocol.MemoryCommitResult{}, invalid("the text is empty")
	}
	if len(text) > maxPluginCommit {
		return protocol.MemoryCommitResult{}, invalid("the text has %d bytes, at most %d", len(text), maxPluginCommit)
	}
	ev := memory.Event{Role: memory.RoleAssistant, Content: text, Channel: pluginChannel(plugin), Scope: memory.Scope{Kind: memory.ScopePrivate},
		Time: k.clock(), Tokens: llm.EstimateTokens(text), Meta: map[string]string{}}
	for key, v := range p.Meta {
		ev.Meta[key] = v
	}
	ev.Meta["plugin"] = plugin
	if p.Turn != "" {
		sess, err := s.turnSession(ctx, plugin, p.Turn)
		if err != nil {
			return protocol.MemoryCommitResult{}, err
		}
		ev.Channel, ev.Partner, ev.Scope, ev.TurnID = sess.Channel, sess.Partner, sess.Scope, p.Turn
		if ev.Channel == "" {
			ev.Channel = pluginChannel(plugin)
		}
	}
	id := pluginChannel(plugin)
	if _, err := k.ensurePluginSession(ctx, id, plugin); err != nil {
		return protocol.MemoryCommitResult{}, mapErr(err)
	}
	ev.Session = id
	stored, err := k.store.AppendEvents(ctx, []memory.Event{ev})
	if err != nil {
		return protocol.MemoryCommitResult{}, mapErr(err)
	}
	return protocol.MemoryCommitResult{ID: stored[0].ID, Session: id, Channel: ev.Channel, Scope: ev.Scope.String()}, nil
}

// ensurePluginSession returns the plugin's memory session, creating it (owner-private, channel
// plugin:<name>) on first use.
func (k *Kernel) ensurePluginSession(ctx context.Context, id, plugin string) (memory.Session, error) {
	s, err := k.store.GetSession(ctx, id)
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, memory.ErrNotFound) {
		return memory.Session{}, err
	}
	s, err = k.store.CreateSession(ctx, memory.Session{ID: id, Title: "Memory of plugin " + plugin, Channel: pluginChannel(plugin)})
	if errors.Is(err, memory.ErrExists) {
		return k.store.GetSession(ctx, id)
	}
	return s, err
}

// Notify implements host.Services: the notification goes to the owner's private chat (the main
// session) and is published for the desktop as owner_notification.
func (s nativeServices) Notify(ctx context.Context, plugin string, p protocol.NotifyParams) (protocol.NotifyResult, error) {
	k := s.k
	title := strings.TrimSpace(sanitize(p.Title))
	body := strings.TrimSpace(sanitize(p.Body))
	switch {
	case title == "":
		return protocol.NotifyResult{}, invalid("the title is empty")
	case utf8.RuneCountInString(title) > maxNotifyTitle:
		return protocol.NotifyResult{}, invalid("the title has %d characters, at most %d", utf8.RuneCountInString(title), maxNotifyTitle)
	case utf8.RuneCountInString(body) > maxNotifyBody:
		return protocol.NotifyResult{}, invalid("the body has %d characters, at most %d", utf8.RuneCountInString(body), maxNotifyBody)
	}
	content := "[" + plugin + "] " + title
	if body != "" {
		content += "\n" + body
	}
	if _, err := k.ensureSession(ctx, defaultSession, "Main"); err != nil {
		return protocol.NotifyResult{}, mapErr(err)
	}
	ev := memory.Event{Session: defaultSession, Role: memory.RoleAssistant, Content: content, Time: k.clock(),
		Tokens: llm.EstimateTokens(content), Meta: map[string]string{"notification": plugin}}
	if _, err := k.store.AppendEvents(ctx, []memory.Event{ev}); err != nil {
		return protocol.NotifyResult{}, mapErr(err)
	}
	k.publish(EventOwnerNotification, map[string]any{"plugin": plugin, "title": title, "body": body, "session": defaultSession})
	return protocol.NotifyResult{DeliveredTo: "chat"}, nil
}

// Complete implements host.Services: one non-streamed request to the owner's default provider.
func (s nativeServices) Complete(ctx context.Context, plugin string, p protocol.CompleteParams) (protocol.CompleteResult, error) {
	if len(p.Messages) == 0 {
		return protocol.CompleteResult{}, invalid("no messages")
	}
	if p.MaxTokens < 0 || p.MaxTokens > maxCompleteTokens {
		return protocol.CompleteResult{}, invalid("max_tokens must be from 1 to %d, got %d", maxCompleteTokens, p.MaxTokens)
	}
	if p.MaxTokens == 0 {
		p.MaxTokens = defaultCompleteMax
	}
	var msgs []llm.Message
	if p.System != "" {
		msgs = append(msgs, llm.Message{Role: "system", Content: p.System})
	}
	for i, m := range p.Messages {
		switch m.Role {
		case "system", "user", "assistant":
		default:
			return protocol.CompleteResult{}, invalid("message %d: role must be system, user or assistant, got %q", i+1, m.Role)
		}
		if len(m.ToolCalls) > 0 || m.ToolCallID != "" {
			return protocol.CompleteResult{}, invalid("message %d: llm/complete carries no tool calls", i+1)
		}
		msgs = append(msgs, llm.Message{Role: m.Role, Content: m.Content})
	}
	prov, err := s.k.resolveProvider("")
	if err != nil {
		return protocol.CompleteResult{}, mapErr(err)
	}
	resp, err := prov.Chat(ctx, llm.Request{Messages: msgs, MaxTokens: p.MaxTokens}, nil)
	if err != nil {
		return protocol.CompleteResult{}, fmt.Errorf("llm/complete via %s: %w", prov.Name(), err)
	}
	s.k.log.Info("plugin completion", "plugin", plugin, "provider", resp.Provider, "tokens", resp.Usage.TotalTokens)
	return protocol.CompleteResult{Text: resp.Message.Content, Model: resp.Model,
		Usage: protocol.Usage(resp.Usage)}, nil
}

// Subscribe implements host.Services: kernel bus events of types reach deliver, in order, from
// one goroutine per subscription until stop.
func (s nativeServices) Subscribe(plugin string, types []string, deliver func(protocol.EventParams)) (func(), error) {
	for _, t := range types {
		if !eventTypeRe.MatchString(t) {
			return nil, fmt.Errorf("event type %q: 1 to 64 of A-Z a-z 0-9 . _ : -", t)
		}
	}
	sub := s.k.bus.Subscribe(types...)
	done := make(chan struct{})
	go func() { // owned by the subscription: ends when stop closes it
		defer close(done)
		for ev := range sub.C() {
			deliver(protocol.EventParams{Type: ev.Type, Time: ev.Time, Payload: ev.Payload})
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			sub.Close()
			<-done
		})
	}, nil
}

// Paused implements host.Services.
func (s nativeServices) Paused() bool { return s.k.paused.Load() }

// forwardPause tells the plugins about the owner's pause until ctx ends.
func (p *plugins) forwardPause(ctx context.Context) {
	sub := p.k.bus.Subscribe(EventKernelPaused, EventKernelResumed)
	p.bg.Add(1)
	go func() { // owned by plugins: ends with close's cancel
		defer p.bg.Done()
		defer sub.Close()
		for {
			select {
			case ev := <-sub.C():
				p.host.SetPaused(ev.Type == EventKernelPaused)
			case <-ctx.Done():
				return
			}
		}
	}()
}

// goChannel runs f (a channel turn and its delivery) in a goroutine the plugins own: close waits
// for it. It fails once the plugins are closing.
func (p *plugins) goChannel(f func(base context.Context)) error {
	p.chanMu.Lock()
	defer p.chanMu.Unlock()
	if p.base == nil || p.base.Err() != nil {
		return fmt.Errorf("%w: the kernel is shutting down", client.ErrUnavailable)
	}
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		f(p.base)
	}()
	return nil
}

// turnOf returns the ids of the agent turn ctx belongs to and of its session (host.Options.TurnOf).
func turnOf(ctx context.Context) (string, string) {
	tr, _ := agent.TurnFrom(ctx)
	return tr.TurnID, tr.Session
}

var _ host.Services = nativeServices{}
