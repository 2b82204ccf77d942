package main

import (
	"encoding/json"
	"testing"
)

// FuzzFrame feeds OneBot v11 frames as a bridge (or anyone on its WebSocket) may send them
// through the same steps the bridge reader and the channel take: classify, decode an event or
// an answer, read the message segments (array or CQ-coded string) and their text. Nothing
// panics.
func FuzzFrame(f *testing.F) {
	for _, s := range []string{
		`{"post_type":"message","message_type":"group","group_id":123,"user_id":"456","self_id":789,"message":[{"type":"at","data":{"qq":"789"}},{"type":"text","data":{"text":" 你好"}}],"sender":{"nickname":"小明","card":""}}`,
		`{"post_type":"message","message_type":"private","user_id":1,"message":"[CQ:at,qq=2] hi [CQ:face,id=1]&#91;x&#93;"}`,
		`{"status":"ok","retcode":0,"data":{"message_id":5},"echo":"r1"}`,
		`{"status":"failed","retcode":100,"msg":"bad","wording":"不行","echo":7}`,
		`{"post_type":"meta_event","meta_event_type":"heartbeat","self_id":"12"}`,
		`{"echo":null}`,
		`{"post_type":"message","message":"[CQ:at,qq=","user_id":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		isEvent, err := classifyFrame(data)
		if err != nil {
			return
		}
		if !isEvent {
			var r Response
			if json.Unmarshal(data, &r) == nil {
				_ = echoKey(r.Echo)
				_ = r.Err()
			}
			return
		}
		var ev Event
		if json.Unmarshal(data, &ev) != nil {
			return
		}
		_, _ = ev.UserID.Int()
		_ = ev.Sender.Name(ev.UserID)
		segs, err := ParseMessage(ev.Message)
		if err != nil {
			segs = ParseCQ(ev.RawMessage)
		}
		_ = Mentions(segs, ev.SelfID)
		_ = PlainText(segs, ev.SelfID)
		for _, s := range segs {
			_ = s.Str("text")
		}
	})
}
