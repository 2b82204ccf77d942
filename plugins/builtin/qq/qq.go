package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/plugins/builtin/internal/toolargs"
	"github.com/hologramagent/hologram/plugins/sdk"
)

// Channel is the name of the plugin's channel.
const Channel = "qq"

// groupPrefix starts the partner of a group ("group_<number>"); a private partner is the
// user's number.
const groupPrefix = "group_"

// Bounds of what the plugin sends and receives.
const (
	maxSendText  = 4500 // characters of one QQ message
	maxInputText = 8000 // characters passed on to the kernel
	turnMemory   = time.Hour
)

// ownerOnly are the tools only the owner's turns may use.
var ownerOnly = map[string]bool{"qq_groups": true, "qq_send": true}

// qq is the plugin: the bridge, the rules deciding what reaches the kernel, and the owner gate.
type qq struct {
	cfg    Config
	bridge *Bridge
	limit  *Limiter
	now    func() time.Time
	turns  *turnTable
	// ln is the reverse WebSocket's listener (reverse mode: opened before serving, so a port in
	// use stops the plugin at start). handled, when set, gets every event's outcome once
	// handled (tests wait on it).
	ln      net.Listener
	handled func(ev Event, outcome string)

	mu    sync.Mutex
	stats Stats
}

// Stats counts what the plugin did, for qq_status.
type Stats struct {
	Received int `json:"received"`  // message events from the bridge
	Passed   int `json:"passed"`    // accepted by the kernel
	Ignored  int `json:"ignored"`   // group messages without a mention or keyword, other groups, empty
	Limited  int `json:"limited"`   // over the partner's rate
	Paused   int `json:"paused"`    // dropped while the kernel was paused
	Refused  int `json:"refused"`   // the kernel refused the input
	Sent     int `json:"sent"`      // replies the bridge confirmed
	SendFail int `json:"send_fail"` // replies the bridge refused or could not take
}

// newQQ returns the plugin for cfg; now is its clock; ln is the reverse WebSocket's listener
// (nil in forward mode).
func newQQ(cfg Config, bridge *Bridge, ln net.Listener, now func() time.Time) *qq {
	return &qq{cfg: cfg, bridge: bridge, ln: ln, limit: NewLimiter(cfg.Rate, cfg.Per, now), now: now,
		turns: &turnTable{now: now, m: map[string]turnInfo{}}}
}

const sendSchema = `{"type":"object","properties":{
 "to":{"type":"string","description":"group_<number> for a group, or a user's QQ number"},
 "text":{"type":"string","description":"the message"}},
 "required":["to","text"],"additionalProperties":false}`

// plugin is the qq plugin's definition.
func (q *qq) plugin() sdk.Plugin {
	return sdk.Plugin{
		Name:    "qq",
		Version: "1.0.0",
		Instructions: "The qq plugin connects QQ through a OneBot v11 bridge. Private chats are partners named by QQ number, " +
			"groups by group_<number>. qq_groups and qq_send are for the owner only.",
		Tools: []sdk.Tool{
			{Name: "qq_status", Title: "QQ connection status", Description: "Reports the QQ bridge connection and message counts.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`), ReadOnly: true, Run: q.status},
			{Name: "qq_groups", Title: "List QQ groups", Description: "Lists the QQ groups the bot is in (owner only).",
				InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`), ReadOnly: true, Run: q.groups},
			{Name: "qq_send", Title: "Send a QQ message", Description: "Sends a message to a QQ group or user (owner only).",
				InputSchema: json.RawMessage(sendSchema), Run: q.sendTool},
		},
		Hooks: []sdk.Hook{
			// Records, for every call of an owner-only tool, whether its turn is the owner's,
			// and denies it when not; the tools themselves refuse turns it did not clear.
			{Name: "owner_gate", Stage: sdk.StageBeforeToolCall, Priority: 100, Run: q.gate},
		},
		Channels: []sdk.Channel{{Name: Channel, Send: q.send}},
		OnPause: func(_ context.Context, k *sdk.Kernel, paused bool) {
			k.Logger().Info("kernel pause", "paused", paused)
		},
		Start: q.start,
	}
}

// start connects the bridge and passes its events on until shutdown.
func (q *qq) start(ctx context.Context, k *sdk.Kernel) error {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned by start: ends with ctx
		defer wg.Done()
		for {
			select {
			case ev := <-q.bridge.Events():
				q.handle(ctx, k, ev)
			case <-ctx.Done():
				return
			}
		}
	}()
	defer wg.Wait()
	k.Logger().Info("qq started", "mode", q.cfg.Mode(), "owner_set", q.cfg.Owner != "", "keywords", len(q.cfg.Keywords),
		"groups", len(q.cfg.Groups), "rate", fmt.Sprintf("%d/%s", q.cfg.Rate, q.cfg.Per))
	if q.ln != nil {
		return q.bridge.RunReverse(ctx, q.ln, q.cfg.Token)
	}
	return q.bridge.RunForward(ctx, q.cfg.URL, q.cfg.Token)
}

// count adds one to a statistic.
func (q *qq) count(f func(*Stats)) {
	q.mu.Lock()
	f(&q.stats)
	q.mu.Unlock()
}

// Inbound is what the plugin makes of a message event: the kernel input, or why nothing.
type Inbound struct {
	Partner string
	Text    string
	Owner   bool   // a private message of the owner
	Skip    string // why the message is not passed on ("" to pass it)
}

// inbound applies the rules to a message event: private messages pass; group messages pass
// when they @-mention the bot or contain a keyword, in the configured groups.
func (q *qq) inbound(ev Event) Inbound {
	if ev.PostType != "message" {
		return Inbound{Skip: "not a message (" + ev.PostType + ")"}
	}
	segs, err := ParseMessage(ev.Message)
	if err != nil {
		return Inbound{Skip: err.Error()}
	}
	self := ev.SelfID
	if self == "" {
		self = q.bridge.Self()
	}
	if ev.UserID != "" && ev.UserID == self {
		return Inbound{Skip: "the bot's own message"}
	}
	text := PlainText(segs, self)
	switch ev.MessageType {
	case "private":
		if _, err := ev.UserID.Int(); err != nil {
			return Inbound{Skip: "private message without a sender: " + err.Error()}
		}
		in := Inbound{Partner: string(ev.UserID), Text: text, Owner: q.cfg.Owner != "" && ev.UserID == q.cfg.Owner}
		if text == "" {
			in.Skip = "empty message"
		}
		return in
	case "group":
		if _, err := ev.GroupID.Int(); err != nil {
			return Inbound{Skip: "group message without a group: " + err.Error()}
		}
		in := Inbound{Partner: groupPrefix + string(ev.GroupID)}
		lower := strings.ToLower(text)
		called := Mentions(segs, self)
		for _, kw := range q.cfg.Keywords {
			called = called || strings.Contains(lower, kw)
		}
		switch {
		case len(q.cfg.Groups) > 0 && !q.cfg.Groups[ev.GroupID]:
			in.Skip = "a group not in HOLOGRAM_QQ_GROUPS"
		case !called:
			in.Skip = "not @-mentioned and no keyword"
		case text == "":
			in.Skip = "a mention without text"
		}
		in.Text = ev.Sender.Name(ev.UserID) + " (" + string(ev.UserID) + "): " + text
		return in
	}
	return Inbound{Skip: "unknown message type " + ev.MessageType}
}

// handle passes one event on to the kernel, or counts why not.
func (q *qq) handle(ctx context.Context, k *sdk.Kernel, ev Event) {
	outcome := q.pass(ctx, k, ev)
	if q.handled != nil {
		q.handled(ev, outcome)
	}
}

// pass applies the rules, the pause and the rate to one event and passes it on; it returns
// the outcome ("passed", or why not).
func (q *qq) pass(ctx context.Context, k *sdk.Kernel, ev Event) string {
	if ev.PostType == "meta_event" {
		return "meta event"
	}
	if ev.PostType == "message" {
		q.count(func(s *Stats) { s.Received++ })
	}
	in := q.inbound(ev)
	log := k.Logger()
	switch {
	case in.Skip != "":
		if ev.PostType == "message" {
			q.count(func(s *Stats) { s.Ignored++ })
		}
		log.Debug("message not passed on", "partner", in.Partner, "why", in.Skip)
		return "ignored: " + in.Skip
	case k.Paused():
		q.count(func(s *Stats) { s.Paused++ })
		log.Info("message dropped: the kernel is paused", "partner", in.Partner)
		return "paused"
	case !in.Owner && !q.limit.Allow(in.Partner):
		q.count(func(s *Stats) { s.Limited++ })
		log.Warn("message dropped: over the partner's rate", "partner", in.Partner, "rate", fmt.Sprintf("%d/%s", q.cfg.Rate, q.cfg.Per))
		return "limited"
	}
	text := in.Text
	if utf8.RuneCountInString(text) > maxInputText {
		text = string([]rune(text)[:maxInputText]) + " […]"
	}
	res, err := k.Input(ctx, sdk.InMessage{Channel: Channel, Partner: in.Partner, Scene: "chan:" + Channel + "/peer:" + in.Partner, Text: text})
	if err != nil {
		q.count(func(s *Stats) { s.Refused++ })
		log.Warn("the kernel refused a message", "partner", in.Partner, "err", err)
		return "refused: " + err.Error()
	}
	q.count(func(s *Stats) { s.Passed++ })
	log.Info("message passed on", "partner", in.Partner, "session", res.Session, "message_id", ev.MessageID)
	return "passed"
}

// target is where a partner's messages go.
type target struct {
	action string // send_group_msg or send_private_msg
	key    string // group_id or user_id
	id     int64
}

// parsePartner maps a partner to its target: group_<number> is a group, a number a user.
func parsePartner(p string) (target, error) {
	if g, ok := strings.CutPrefix(p, groupPrefix); ok {
		n, err := ID(g).Int()
		if err != nil {
			return target{}, fmt.Errorf("partner %q: %w", p, err)
		}
		return target{action: "send_group_msg", key: "group_id", id: n}, nil
	}
	n, err := ID(p).Int()
	if err != nil {
		return target{}, fmt.Errorf("partner %q is neither group_<number> nor a QQ number", p)
	}
	return target{action: "send_private_msg", key: "user_id", id: n}, nil
}

// deliver sends segments to a partner and returns the bridge's message id.
func (q *qq) deliver(ctx context.Context, partner string, segs []sdk.Block, text string) (string, error) {
	t, err := parsePartner(partner)
	if err != nil {
		return "", err
	}
	var msg []Segment
	if strings.TrimSpace(text) != "" {
		if n := utf8.RuneCountInString(text); n > maxSendText {
			return "", fmt.Errorf("the message has %d characters, QQ takes at most %d", n, maxSendText)
		}
		msg = append(msg, TextSegment(text))
	}
	for i, b := range segs {
		switch b.Kind {
		case "text":
			if b.Text != "" {
				msg = append(msg, TextSegment(b.Text))
			}
		case "image":
			msg = append(msg, Segment{Type: "image", Data: map[string]any{"file": "base64://" + base64.StdEncoding.EncodeToString(b.Data)}})
		case "audio":
			msg = append(msg, Segment{Type: "record", Data: map[string]any{"file": "base64://" + base64.StdEncoding.EncodeToString(b.Data)}})
		default:
			return "", fmt.Errorf("block %d: kind %q cannot be sent to QQ", i+1, b.Kind)
		}
	}
	if len(msg) == 0 {
		return "", errors.New("nothing to send: the message is empty")
	}
	data, err := q.bridge.Call(ctx, t.action, map[string]any{t.key: t.id, "message": msg})
	if err != nil {
		q.count(func(s *Stats) { s.SendFail++ })
		return "", err
	}
	var out struct {
		MessageID ID `json:"message_id"`
	}
	if len(data) > 0 && string(data) != "null" {
		if err := json.Unmarshal(data, &out); err != nil {
			q.count(func(s *Stats) { s.SendFail++ })
			return "", fmt.Errorf("%s: the bridge's answer has no message id: %w", t.action, err)
		}
	}
	q.count(func(s *Stats) { s.Sent++ })
	return string(out.MessageID), nil
}

// send delivers a reply of the kernel: its success or failure is the bridge's answer.
func (q *qq) send(ctx context.Context, k *sdk.Kernel, m sdk.OutMessage) (string, error) {
	id, err := q.deliver(ctx, m.Partner, m.Blocks, m.Text)
	if err != nil {
		k.Logger().Warn("reply not delivered", "partner", m.Partner, "turn", m.TurnID, "err", err)
		return "", err
	}
	k.Logger().Info("reply delivered", "partner", m.Partner, "turn", m.TurnID, "message_id", id)
	return id, nil
}

// turnInfo is what the owner gate learnt of a turn.
type turnInfo struct {
	owner bool
	scope string
	at    time.Time
}

// turnTable remembers, for an hour, whether turns are the owner's. Safe for concurrent use.
type turnTable struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]turnInfo
}

func (t *turnTable) record(turn string, info turnInfo) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	info.at = now
	t.m[turn] = info
	for id, ti := range t.m {
		if now.Sub(ti.at) > turnMemory {
			delete(t.m, id)
		}
	}
}

func (t *turnTable) get(turn string) (turnInfo, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ti, ok := t.m[turn]
	return ti, ok
}

// ownerTool returns the plain name of an owner-only tool call (the kernel prefixes a plugin's
// tools with "<plugin>__" when names collide), or "".
func ownerTool(plugin, name string) string {
	name = strings.TrimPrefix(name, plugin+"__")
	if ownerOnly[name] {
		return name
	}
	return ""
}

// isOwnerTurn reports whether a turn is the owner's: a turn of the owner's own clients (the
// desktop, waiter, the API: the kernel gives them the private scope), or a private QQ chat with
// the configured owner. A group's turn never is, whoever wrote in it.
func (q *qq) isOwnerTurn(d *sdk.StageData) bool {
	if d.Scope == "private" {
		return true
	}
	return d.Channel == Channel && q.cfg.Owner != "" && d.Partner == string(q.cfg.Owner)
}

// gate is the before_toolcall hook: an owner-only tool called in a turn that is not the
// owner's is denied (the reason is the call's result).
func (q *qq) gate(_ context.Context, k *sdk.Kernel, d *sdk.StageData) (sdk.Patch, error) {
	if d.Call == nil {
		return sdk.Patch{}, nil
	}
	name := ownerTool(k.Name(), d.Call.Name)
	if name == "" {
		return sdk.Patch{}, nil
	}
	owner := q.isOwnerTurn(d)
	q.turns.record(d.TurnID, turnInfo{owner: owner, scope: d.Scope})
	if owner {
		return sdk.Patch{}, nil
	}
	k.Logger().Warn("owner-only tool denied", "tool", name, "session", d.Session, "scope", d.Scope)
	return sdk.Patch{Deny: sdk.Ptr(fmt.Sprintf("%s is for the owner only; this conversation (%s) is not the owner's", name, d.Scope))}, nil
}

// requireOwner refuses an owner-only tool outside a turn the gate cleared as the owner's.
func (q *qq) requireOwner(ctx context.Context, tool string) error {
	turn, ok := sdk.TurnFrom(ctx)
	if !ok {
		return fmt.Errorf("%s is for the owner only: it runs only in one of the owner's turns", tool)
	}
	ti, known := q.turns.get(turn)
	switch {
	case !known:
		return fmt.Errorf("%s is for the owner only: the owner gate did not clear this turn", tool)
	case !ti.owner:
		return fmt.Errorf("%s is for the owner only; this conversation (%s) is not the owner's", tool, ti.scope)
	}
	return nil
}

// Status is qq_status's answer.
type Status struct {
	Mode   string       `json:"mode"`
	Bridge BridgeStatus `json:"bridge"`
	Stats  Stats        `json:"stats"`
}

func (q *qq) status(_ context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	if err := toolargs.Decode(args, &struct{}{}); err != nil {
		return sdk.Result{}, err
	}
	q.mu.Lock()
	st := Status{Mode: q.cfg.Mode(), Bridge: q.bridge.Status(), Stats: q.stats}
	q.mu.Unlock()
	b, err := json.Marshal(st)
	if err != nil {
		return sdk.Result{}, err
	}
	return sdk.Text(string(b)), nil
}

func (q *qq) groups(ctx context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	if err := toolargs.Decode(args, &struct{}{}); err != nil {
		return sdk.Result{}, err
	}
	if err := q.requireOwner(ctx, "qq_groups"); err != nil {
		return sdk.Result{}, err
	}
	data, err := q.bridge.Call(ctx, "get_group_list", struct{}{})
	if err != nil {
		return sdk.Result{}, err
	}
	var gs []struct {
		GroupID     ID     `json:"group_id"`
		GroupName   string `json:"group_name"`
		MemberCount int    `json:"member_count"`
	}
	if err := json.Unmarshal(data, &gs); err != nil {
		return sdk.Result{}, fmt.Errorf("get_group_list: bad answer: %w", err)
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].GroupName < gs[j].GroupName })
	var b strings.Builder
	fmt.Fprintf(&b, "%d groups", len(gs))
	for _, g := range gs {
		fmt.Fprintf(&b, "\n- %s%s %s (%d members)", groupPrefix, g.GroupID, g.GroupName, g.MemberCount)
	}
	return sdk.Text(b.String()), nil
}

func (q *qq) sendTool(ctx context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct {
		To   string `json:"to"`
		Text string `json:"text"`
	}
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	if err := q.requireOwner(ctx, "qq_send"); err != nil {
		return sdk.Result{}, err
	}
	if strings.TrimSpace(a.Text) == "" {
		return sdk.Result{}, errors.New("the text is empty")
	}
	id, err := q.deliver(ctx, strings.TrimSpace(a.To), nil, a.Text)
	if err != nil {
		return sdk.Result{}, err
	}
	return sdk.Text(fmt.Sprintf("sent to %s (message %s)", strings.TrimSpace(a.To), id)), nil
}
