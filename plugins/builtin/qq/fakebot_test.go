package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// fakeBot is a OneBot v11 bridge written for the tests: it serves the plugin's forward
// WebSocket (checking the access token) or dials its reverse one, records the API calls it
// gets, answers them with answer, and pushes events. Safe for concurrent use.
type fakeBot struct {
	t     *testing.T
	self  ID
	token string
	// answer answers an API call; nil: ok, with a message id for sends and a login for
	// get_login_info.
	answer func(r Request) Response

	mu       sync.Mutex
	conn     *websocket.Conn
	conns    int
	authSeen []string
	calls    chan Request
	up       chan struct{} // closed and replaced when a connection comes up
	nextID   int
}

func newFakeBot(t *testing.T, self ID, token string) *fakeBot {
	return &fakeBot{t: t, self: self, token: token, calls: make(chan Request, 64), up: make(chan struct{}), nextID: 1000}
}

// serveForward serves the forward WebSocket on a test server and returns its ws:// URL.
func (f *fakeBot) serveForward() string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		f.mu.Lock()
		f.authSeen = append(f.authSeen, auth)
		f.mu.Unlock()
		if f.token != "" && auth != "Bearer "+f.token {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			f.t.Errorf("fake bridge: accept: %v", err)
			return
		}
		f.run(r.Context(), c)
	}))
	f.t.Cleanup(srv.Close)
	return "ws" + srv.URL[len("http"):] + "/"
}

// dialReverse connects to the plugin's reverse WebSocket with the given headers; it returns
// the HTTP status of a refused handshake (0 when connected, then served until the test ends).
func (f *fakeBot) dialReverse(addr string, h http.Header) (int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	c, resp, err := websocket.Dial(ctx, "ws://"+addr+"/onebot/v11/ws", &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		cancel()
		if resp != nil {
			return resp.StatusCode, err
		}
		return 0, err
	}
	done := make(chan struct{})
	go func() { defer close(done); f.run(ctx, c) }()
	f.t.Cleanup(func() { cancel(); <-done })
	return 0, nil
}

// run serves one connection: it answers API calls until the connection ends.
func (f *fakeBot) run(ctx context.Context, c *websocket.Conn) {
	c.SetReadLimit(1 << 20)
	f.mu.Lock()
	f.conn = c
	f.conns++
	close(f.up)
	f.up = make(chan struct{})
	f.mu.Unlock()
	defer c.CloseNow()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		var r Request
		if err := json.Unmarshal(data, &r); err != nil {
			f.t.Errorf("fake bridge: bad request %s: %v", data, err)
			return
		}
		resp := f.reply(r)
		resp.Echo, _ = json.Marshal(r.Echo)
		b, _ := json.Marshal(resp)
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			return
		}
		if r.Action != "get_login_info" {
			f.calls <- r
		}
	}
}

// reply answers a call.
func (f *fakeBot) reply(r Request) Response {
	f.mu.Lock()
	answer := f.answer
	f.mu.Unlock()
	if answer != nil {
		if resp := answer(r); resp.Status != "" {
			return resp
		}
	}
	switch r.Action {
	case "get_login_info":
		return Response{Status: "ok", Data: json.RawMessage(`{"user_id":` + string(f.self) + `,"nickname":"hologram"}`)}
	case "send_group_msg", "send_private_msg":
		f.mu.Lock()
		f.nextID++
		id := f.nextID
		f.mu.Unlock()
		return Response{Status: "ok", Data: json.RawMessage(`{"message_id":` + strconv.Itoa(id) + `}`)}
	}
	return Response{Status: "failed", RetCode: 1404, Message: "unknown action " + r.Action}
}

// waitUp waits until a connection is up (at least n so far).
func (f *fakeBot) waitUp(n int) {
	f.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		f.mu.Lock()
		conns, up := f.conns, f.up
		f.mu.Unlock()
		if conns >= n {
			return
		}
		select {
		case <-up:
		case <-deadline:
			f.t.Fatalf("fake bridge: %d connections, want %d", conns, n)
		}
	}
}

// push sends an event on the current connection.
func (f *fakeBot) push(ev map[string]any) {
	f.t.Helper()
	if _, ok := ev["self_id"]; !ok {
		n, _ := f.self.Int()
		ev["self_id"] = n
	}
	if _, ok := ev["time"]; !ok {
		ev["time"] = 1767225600
	}
	b, err := json.Marshal(ev)
	if err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	c := f.conn
	f.mu.Unlock()
	if c == nil {
		f.t.Fatal("fake bridge: not connected")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		f.t.Fatalf("fake bridge: push: %v", err)
	}
}

// drop closes the current connection as a bridge restart would.
func (f *fakeBot) drop() {
	f.mu.Lock()
	c := f.conn
	f.mu.Unlock()
	c.Close(websocket.StatusGoingAway, "restarting")
}

// nextCall returns the next API call the bridge got (get_login_info aside).
func (f *fakeBot) nextCall() Request {
	f.t.Helper()
	select {
	case r := <-f.calls:
		return r
	case <-time.After(20 * time.Second):
		f.t.Fatal("fake bridge: no API call within 20 s")
	}
	return Request{}
}

// groupMsg is a group message event; at, when set, is @-mentioned before the text.
func groupMsg(group, user int64, card, at, text string) map[string]any {
	var segs []map[string]any
	if at != "" {
		segs = append(segs, map[string]any{"type": "at", "data": map[string]any{"qq": at}})
	}
	segs = append(segs, map[string]any{"type": "text", "data": map[string]any{"text": text}})
	return map[string]any{"post_type": "message", "message_type": "group", "sub_type": "normal", "message_id": 1,
		"group_id": group, "user_id": user, "message": segs, "sender": map[string]any{"user_id": user, "nickname": "nick", "card": card}}
}

// privateMsg is a private message event in the string (CQ code) form.
func privateMsg(user int64, text string) map[string]any {
	return map[string]any{"post_type": "message", "message_type": "private", "sub_type": "friend", "message_id": 2,
		"user_id": user, "message": text, "raw_message": text, "sender": map[string]any{"user_id": user, "nickname": "friend"}}
}
