package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/clock/clocktest"
	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk/sdktest"
)

// harness is the plugin served in memory against the kernel double, connected to a fake
// bridge; inputs are the messages it passed to the kernel, outcomes every event's fate.
type harness struct {
	q        *qq
	k        *sdktest.Kernel
	bot      *fakeBot
	clock    *clocktest.Fake
	inputs   chan protocol.ChannelInputParams
	outcomes chan string
	addr     chan net.Addr
}

const (
	botID   = "10001"
	ownerID = "20002"
)

// startQQ serves the plugin with cfg (its URL or Listen filled in for the fake bridge when
// reverse is false or true); opts' Input is set by the harness.
func startQQ(t *testing.T, cfg Config, reverse bool, opts sdktest.Options) *harness {
	t.Helper()
	h := &harness{bot: newFakeBot(t, botID, cfg.Token), clock: clocktest.New(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)),
		inputs: make(chan protocol.ChannelInputParams, 64), outcomes: make(chan string, 64), addr: make(chan net.Addr, 1)}
	if cfg.Rate == 0 {
		cfg.Rate, cfg.Per = 5, time.Minute
	}
	if reverse {
		cfg.Listen = "127.0.0.1:0"
	} else {
		cfg.URL = h.bot.serveForward()
	}
	b := NewBridge(slog.New(slog.DiscardHandler))
	b.wait = func(ctx context.Context, d time.Duration) error { return ctx.Err() } // reconnect at once
	var ln net.Listener
	if reverse {
		var err error
		if ln, err = ListenReverse(context.Background(), cfg.Listen); err != nil {
			t.Fatal(err)
		}
		h.addr <- ln.Addr()
	}
	h.q = newQQ(cfg, b, ln, h.clock.Now)
	h.q.handled = func(_ Event, outcome string) { h.outcomes <- outcome }
	opts.Plugin = "qq"
	opts.Capabilities = []string{protocol.CapChannels, protocol.CapHooks, protocol.CapLifecycle}
	if opts.Input == nil {
		opts.Input = func(_ context.Context, p protocol.ChannelInputParams) (protocol.ChannelInputResult, error) {
			h.inputs <- p
			return protocol.ChannelInputResult{Session: "chan:qq:" + p.Partner, Scene: p.Scene}, nil
		}
	}
	p := h.q.plugin()
	p.Logger = slog.New(slog.DiscardHandler)
	h.k = sdktest.Start(t, p, opts)
	return h
}

// up waits until the fake bridge saw its n-th connection and the plugin uses it.
func (h *harness) up(t *testing.T, n int) {
	t.Helper()
	h.bot.waitUp(n)
	deadline := time.After(20 * time.Second)
	for {
		changed := h.q.bridge.Changed()
		if st := h.q.bridge.Status(); st.Connected && st.Connects >= n {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the plugin did not connect (%+v)", h.q.bridge.Status())
		}
	}
}

// outcome returns the next event's outcome.
func (h *harness) outcome(t *testing.T) string {
	t.Helper()
	select {
	case o := <-h.outcomes:
		return o
	case <-time.After(20 * time.Second):
		t.Fatal("no event handled within 20 s")
	}
	return ""
}

// input returns the next message passed to the kernel.
func (h *harness) input(t *testing.T) protocol.ChannelInputParams {
	t.Helper()
	select {
	case p := <-h.inputs:
		return p
	case <-time.After(20 * time.Second):
		t.Fatal("no channel input within 20 s")
	}
	return protocol.ChannelInputParams{}
}

func TestForwardMessagesAndReplies(t *testing.T) {
	t.Parallel()
	h := startQQ(t, Config{Token: "s3cret", Owner: ownerID, Keywords: []string{"hologram"}}, false, sdktest.Options{})
	h.up(t, 1)
	h.bot.mu.Lock()
	got := h.bot.authSeen[0]
	h.bot.mu.Unlock()
	if got != "Bearer s3cret" {
		t.Fatalf("the plugin dialed with Authorization %q", got)
	}
	ctx := context.Background()

	tests := []struct {
		name    string
		ev      map[string]any
		outcome string
		partner string
		text    string
	}{
		{"a group message without a mention is not answered", groupMsg(42, 777, "Ann", "", "lunch anyone?"), "ignored: not @-mentioned and no keyword", "", ""},
		{"a group message @-mentioning someone else is not answered", groupMsg(42, 777, "Ann", "30003", "hi Bob"), "ignored: not @-mentioned and no keyword", "", ""},
		{"a group message @-mentioning the bot is answered", groupMsg(42, 777, "Ann", botID, " what is 6*7?"), "passed", "group_42", "Ann (777): what is 6*7?"},
		{"a keyword calls it too", groupMsg(42, 778, "", "", "Hey HOLOGRAM, weather?"), "passed", "group_42", "nick (778): Hey HOLOGRAM, weather?"},
		{"a bare mention has nothing to answer", groupMsg(42, 777, "Ann", botID, "  "), "ignored: a mention without text", "", ""},
		{"a private message (CQ string form) is answered", privateMsg(555, "hello [CQ:face,id=14] there &#91;x&#93;"), "passed", "555", "hello [face] there [x]"},
		{"the owner's private message", privateMsg(20002, "status?"), "passed", "20002", "status?"},
		{"the bot's own message is not", privateMsg(10001, "echo"), "ignored: the bot's own message", "", ""},
		{"a notice is not a message", map[string]any{"post_type": "notice", "notice_type": "group_increase"}, "ignored: not a message (notice)", "", ""},
		{"a heartbeat", map[string]any{"post_type": "meta_event", "meta_event_type": "heartbeat"}, "meta event", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.bot.push(tt.ev)
			if got := h.outcome(t); got != tt.outcome {
				t.Fatalf("outcome %q, want %q", got, tt.outcome)
			}
			if tt.partner == "" {
				return
			}
			in := h.input(t)
			if in.Channel != "qq" || in.Partner != tt.partner || in.Scene != "chan:qq/peer:"+tt.partner || in.Text != tt.text {
				t.Fatalf("input %+v, want partner %s text %q", in, tt.partner, tt.text)
			}
		})
	}

	t.Run("a group reply goes out with send_group_msg and the bridge's message id", func(t *testing.T) {
		res, err := h.k.Send(ctx, protocol.ChannelSendParams{Channel: "qq", Partner: "group_42", Text: "42 [CQ:at,qq=all]", TurnID: "t1"})
		if err != nil {
			t.Fatal(err)
		}
		call := h.bot.nextCall()
		b, _ := json.Marshal(call.Params)
		// The text is a text segment, never CQ-decoded: the model cannot @all or inject media.
		if call.Action != "send_group_msg" || string(b) != `{"group_id":42,"message":[{"data":{"text":"42 [CQ:at,qq=all]"},"type":"text"}]}` {
			t.Fatalf("call %s %s", call.Action, b)
		}
		if res.MessageID != "1001" {
			t.Fatalf("message id %q", res.MessageID)
		}
	})

	t.Run("a private reply with an image", func(t *testing.T) {
		_, err := h.k.Send(ctx, protocol.ChannelSendParams{Channel: "qq", Partner: "555", Text: "look",
			Blocks: []protocol.Block{{Kind: "image", MIME: "image/png", Data: []byte("PNG")}}})
		if err != nil {
			t.Fatal(err)
		}
		call := h.bot.nextCall()
		b, _ := json.Marshal(call.Params)
		if call.Action != "send_private_msg" || string(b) != `{"message":[{"data":{"text":"look"},"type":"text"},{"data":{"file":"base64://UE5H"},"type":"image"}],"user_id":555}` {
			t.Fatalf("call %s %s", call.Action, b)
		}
	})

	t.Run("the bridge's refusal is the delivery's failure", func(t *testing.T) {
		h.bot.mu.Lock()
		h.bot.answer = func(r Request) Response {
			return Response{Status: "failed", RetCode: 1200, Wording: "群消息发送失败：被禁言"}
		}
		h.bot.mu.Unlock()
		defer func() { h.bot.mu.Lock(); h.bot.answer = nil; h.bot.mu.Unlock() }()
		_, err := h.k.Send(ctx, protocol.ChannelSendParams{Channel: "qq", Partner: "group_42", Text: "x"})
		if err == nil || !strings.Contains(err.Error(), "not delivered: send_group_msg: the bridge answered failed (retcode 1200): 群消息发送失败：被禁言") {
			t.Fatalf("err %v", err)
		}
		h.bot.nextCall()
	})

	t.Run("bad partners and empty replies are errors", func(t *testing.T) {
		for _, tt := range []struct{ partner, text, want string }{
			{"group_x", "hi", `partner "group_x": "x" is not a QQ number`},
			{"alice", "hi", `partner "alice" is neither group_<number> nor a QQ number`},
			{"555", "  ", "nothing to send: the message is empty"},
			{"555", strings.Repeat("长", 4501), "the message has 4501 characters, QQ takes at most 4500"},
		} {
			_, err := h.k.Send(ctx, protocol.ChannelSendParams{Channel: "qq", Partner: tt.partner, Text: tt.text})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("send to %q: %v, want %q", tt.partner, err, tt.want)
			}
		}
	})

	t.Run("after the bridge restarts the plugin reconnects", func(t *testing.T) {
		h.bot.drop()
		h.up(t, 2)
		h.bot.push(privateMsg(555, "still there?"))
		if o := h.outcome(t); o != "passed" {
			t.Fatalf("outcome %q", o)
		}
		h.input(t)
		if _, err := h.k.Send(ctx, protocol.ChannelSendParams{Channel: "qq", Partner: "555", Text: "yes"}); err != nil {
			t.Fatal(err)
		}
		h.bot.nextCall()
	})
}

func TestForwardWrongToken(t *testing.T) {
	t.Parallel()
	bot := newFakeBot(t, botID, "right")
	url := bot.serveForward()
	b := NewBridge(slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	tries := 0
	b.wait = func(context.Context, time.Duration) error {
		if tries++; tries == 2 {
			cancel()
		}
		return ctx.Err()
	}
	if err := b.RunForward(ctx, url, "wrong"); err != nil {
		t.Fatal(err)
	}
	if st := b.Status(); st.Connected || !strings.Contains(st.LastError, "the bridge refused the access token (HTTP 401)") {
		t.Fatalf("status %+v", st)
	}
	if _, err := b.Call(context.Background(), "get_status", nil); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("call while not connected: %v", err)
	}
}

func TestReverse(t *testing.T) {
	t.Parallel()
	h := startQQ(t, Config{Token: "tok"}, true, sdktest.Options{})
	var addr net.Addr
	select {
	case addr = <-h.addr:
	case <-time.After(20 * time.Second):
		t.Fatal("the plugin did not listen")
	}
	hdr := func(kv ...string) http.Header {
		h := http.Header{"X-Self-Id": {botID}}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	for _, tt := range []struct {
		name   string
		h      http.Header
		status int
	}{
		{"no token", hdr("X-Client-Role", "Universal"), http.StatusUnauthorized},
		{"a wrong token", hdr("X-Client-Role", "Universal", "Authorization", "Bearer nope"), http.StatusForbidden},
		{"the API role", hdr("X-Client-Role", "API", "Authorization", "Bearer tok"), http.StatusBadRequest},
	} {
		if st, err := h.bot.dialReverse(addr.String(), tt.h); st != tt.status {
			t.Errorf("%s: status %d (%v), want %d", tt.name, st, err, tt.status)
		}
	}
	if st, err := h.bot.dialReverse(addr.String(), hdr("X-Client-Role", "Universal", "Authorization", "Bearer tok")); st != 0 || err != nil {
		t.Fatalf("the right token: %d %v", st, err)
	}
	h.up(t, 1)
	h.bot.push(groupMsg(7, 777, "Ann", botID, "ping"))
	if o := h.outcome(t); o != "passed" {
		t.Fatalf("outcome %q", o)
	}
	if in := h.input(t); in.Partner != "group_7" || in.Text != "Ann (777): ping" {
		t.Fatalf("input %+v", in)
	}
	res, err := h.k.Send(context.Background(), protocol.ChannelSendParams{Channel: "qq", Partner: "group_7", Text: "pong"})
	if err != nil || res.MessageID != "1001" {
		t.Fatalf("send: %+v %v", res, err)
	}
	if call := h.bot.nextCall(); call.Action != "send_group_msg" {
		t.Fatalf("call %+v", call)
	}
	out, err := h.k.ToolText(context.Background(), "qq_status", `{}`, "")
	if err != nil || !strings.Contains(out, `"mode":"reverse"`) || !strings.Contains(out, `"connected":true`) || !strings.Contains(out, `"self_id":"10001"`) {
		t.Fatalf("status %s %v", out, err)
	}
}

func TestRateLimitAndPause(t *testing.T) {
	t.Parallel()
	h := startQQ(t, Config{Owner: ownerID, Rate: 2, Per: time.Minute}, false, sdktest.Options{})
	h.up(t, 1)
	want := []struct {
		ev      map[string]any
		outcome string
	}{
		{privateMsg(555, "one"), "passed"},
		{privateMsg(555, "two"), "passed"},
		{privateMsg(555, "three"), "limited"},
		{privateMsg(556, "another partner"), "passed"},
		{privateMsg(20002, "the owner 1"), "passed"},
		{privateMsg(20002, "the owner 2"), "passed"},
		{privateMsg(20002, "the owner is not limited"), "passed"},
	}
	for _, w := range want {
		h.bot.push(w.ev)
		if got := h.outcome(t); got != w.outcome {
			t.Fatalf("%v: outcome %q, want %q", w.ev["message"], got, w.outcome)
		}
	}
	h.clock.Advance(time.Minute)
	h.bot.push(privateMsg(555, "a minute later"))
	if got := h.outcome(t); got != "passed" {
		t.Fatalf("after the window: %q", got)
	}
	if err := h.k.Pause(true); err != nil {
		t.Fatal(err)
	}
	// The pause reaches the plugin on its own pipe: wait until qq_status sees it handled.
	deadline := time.Now().Add(20 * time.Second)
	for {
		h.bot.push(privateMsg(600, "while paused?"))
		if got := h.outcome(t); got == "paused" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the pause never reached the plugin")
		}
	}
	out, _ := h.k.ToolText(context.Background(), "qq_status", `{}`, "")
	var st Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if st.Stats.Limited != 1 || st.Stats.Paused != 1 {
		t.Fatalf("stats %+v", st.Stats)
	}
}

func TestOwnerOnlyTools(t *testing.T) {
	t.Parallel()
	h := startQQ(t, Config{Owner: ownerID}, false, sdktest.Options{})
	h.up(t, 1)
	h.bot.mu.Lock()
	h.bot.answer = func(r Request) Response {
		if r.Action == "get_group_list" {
			return Response{Status: "ok", Data: json.RawMessage(`[{"group_id":42,"group_name":"Kites","member_count":9},{"group_id":"7","group_name":"Family","member_count":4}]`)}
		}
		return Response{}
	}
	h.bot.mu.Unlock()
	ctx := context.Background()
	call := func(name, args string) *protocol.ToolCallData {
		return &protocol.ToolCallData{ID: "c", Name: name, Arguments: args}
	}
	tests := []struct {
		name     string
		d        protocol.StageData
		deny     string // the hook's denial ("" none)
		tool     string
		args     string
		want     string
		wantErr  string
		wantCall string
	}{
		{name: "the owner's desktop", d: protocol.StageData{TurnID: "t1", Scope: "private", Session: "main", Call: call("qq_groups", "{}")},
			tool: "qq_groups", args: `{}`, want: "2 groups\n- group_7 Family (4 members)\n- group_42 Kites (9 members)", wantCall: "get_group_list"},
		{name: "the owner's private QQ chat", d: protocol.StageData{TurnID: "t2", Scope: "group:qq/20002", Channel: "qq", Partner: ownerID,
			Call: call("qq__qq_send", `{"to":"group_42","text":"hi all"}`)},
			tool: "qq_send", args: `{"to":"group_42","text":"hi all"}`, want: "sent to group_42 (message 1001)", wantCall: "send_group_msg"},
		{name: "a group, even when the owner writes in it", d: protocol.StageData{TurnID: "t3", Scope: "group:qq/group_42", Channel: "qq", Partner: "group_42",
			Call: call("qq_groups", "{}")},
			deny: "qq_groups is for the owner only; this conversation (group:qq/group_42) is not the owner's", tool: "qq_groups", args: `{}`,
			wantErr: "qq_groups is for the owner only; this conversation (group:qq/group_42) is not the owner's"},
		{name: "a stranger's private chat", d: protocol.StageData{TurnID: "t4", Scope: "group:qq/555", Channel: "qq", Partner: "555",
			Call: call("qq_send", `{"to":"555","text":"x"}`)},
			deny: "qq_send is for the owner only", tool: "qq_send", args: `{"to":"555","text":"x"}`, wantErr: "qq_send is for the owner only"},
		{name: "another channel's partner named like the owner", d: protocol.StageData{TurnID: "t5", Scope: "group:echo/20002", Channel: "echo", Partner: ownerID,
			Call: call("qq_groups", "{}")},
			deny: "qq_groups is for the owner only", tool: "qq_groups", args: `{}`, wantErr: "qq_groups is for the owner only"},
		{name: "a turn the gate never saw", d: protocol.StageData{TurnID: "t6", Scope: "group:qq/555", Call: call("qq_status", "{}")},
			tool: "qq_groups", args: `{}`, wantErr: "the owner gate did not clear this turn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.d.Stage = "before_toolcall"
			patch, err := h.k.RunHook(ctx, "owner_gate", tt.d)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.deny == "" && patch.Deny != nil:
				t.Fatalf("denied: %s", *patch.Deny)
			case tt.deny != "" && (patch.Deny == nil || !strings.Contains(*patch.Deny, tt.deny)):
				t.Fatalf("deny %v, want %q", patch.Deny, tt.deny)
			}
			got, err := h.k.ToolText(ctx, tt.tool, tt.args, tt.d.TurnID)
			if plugintest.WantErr(t, err, tt.wantErr) {
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q %v, want %q", got, err, tt.want)
			}
			if c := h.bot.nextCall(); c.Action != tt.wantCall {
				t.Fatalf("bridge call %s, want %s", c.Action, tt.wantCall)
			}
		})
	}
	if _, err := h.k.ToolText(ctx, "qq_groups", `{}`, ""); err == nil || !strings.Contains(err.Error(), "runs only in one of the owner's turns") {
		t.Fatalf("outside a turn: %v", err)
	}
	if _, err := h.k.ToolText(ctx, "qq_send", `{"to":"1","text":"x","cc":"2"}`, "t1"); err == nil || !strings.Contains(err.Error(), `unknown field "cc"`) {
		t.Fatalf("unknown argument: %v", err)
	}
}

func TestInputRefusedByTheKernel(t *testing.T) {
	t.Parallel()
	h := startQQ(t, Config{}, false, sdktest.Options{Input: func(context.Context, protocol.ChannelInputParams) (protocol.ChannelInputResult, error) {
		return protocol.ChannelInputResult{}, errors.New("the kernel is paused")
	}})
	h.up(t, 1)
	h.bot.push(privateMsg(555, "hi"))
	if got := h.outcome(t); !strings.Contains(got, "refused: ") || !strings.Contains(got, "the kernel is paused") {
		t.Fatalf("outcome %q", got)
	}
}
