package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseCQ(t *testing.T) {
	t.Parallel()
	seg := func(typ string, kv ...string) Segment {
		s := Segment{Type: typ, Data: map[string]any{}}
		for i := 0; i < len(kv); i += 2 {
			s.Data[kv[i]] = kv[i+1]
		}
		return s
	}
	tests := []struct {
		in   string
		want []Segment
	}{
		{"", nil},
		{"plain", []Segment{TextSegment("plain")}},
		{"[CQ:at,qq=10001] hi", []Segment{seg("at", "qq", "10001"), TextSegment(" hi")}},
		{"a&#91;b&#93;&amp;c", []Segment{TextSegment("a[b]&c")}},
		{"[CQ:image,file=x.png,url=https://e.com/?a=1&#44;2] 看", []Segment{seg("image", "file", "x.png", "url", "https://e.com/?a=1,2"), TextSegment(" 看")}},
		{"[CQ:face,id=14][CQ:at,qq=all]", []Segment{seg("face", "id", "14"), seg("at", "qq", "all")}},
		{"broken [CQ:at,qq=1", []Segment{TextSegment("broken [CQ:at,qq=1")}},
	}
	for _, tt := range tests {
		if got := ParseCQ(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseCQ(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseMessageMentionsAndText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw       string
		mentioned bool
		text      string
		wantErr   string
	}{
		{`[{"type":"at","data":{"qq":"10001"}},{"type":"text","data":{"text":" 你好 "}}]`, true, "你好", ""},
		{`[{"type":"at","data":{"qq":10001}},{"type":"text","data":{"text":"numeric id"}}]`, true, "numeric id", ""},
		{`[{"type":"at","data":{"qq":"all"}},{"type":"text","data":{"text":"everyone"}}]`, false, "@all everyone", ""},
		{`[{"type":"at","data":{"qq":"3","name":"Bob"}},{"type":"image","data":{"file":"a.jpg"}},{"type":"reply","data":{"id":"9"}}]`, false, "@Bob [image]", ""},
		{`"[CQ:at,qq=10001]ping"`, true, "ping", ""},
		{`"no mention"`, false, "no mention", ""},
		{`null`, false, "", ""},
		{`42`, false, "", "want an array of segments or a string"},
		{`[{"type":1}]`, false, "", "message segments"},
	}
	for _, tt := range tests {
		segs, err := ParseMessage(json.RawMessage(tt.raw))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseMessage(%s): %v, want %q", tt.raw, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseMessage(%s): %v", tt.raw, err)
			continue
		}
		if m := Mentions(segs, "10001"); m != tt.mentioned {
			t.Errorf("Mentions(%s) = %v", tt.raw, m)
		}
		if got := PlainText(segs, "10001"); got != tt.text {
			t.Errorf("PlainText(%s) = %q, want %q", tt.raw, got, tt.text)
		}
	}
	if Mentions([]Segment{{Type: "at", Data: map[string]any{"qq": ""}}}, "") {
		t.Error("an unknown self is mentioned")
	}
}

func TestIDAndFrames(t *testing.T) {
	t.Parallel()
	var ev Event
	if err := json.Unmarshal([]byte(`{"post_type":"message","self_id":10001,"user_id":"20002","group_id":null}`), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.SelfID != "10001" || ev.UserID != "20002" || ev.GroupID != "" {
		t.Fatalf("%+v", ev)
	}
	for _, bad := range []string{`{"user_id":1.5}`, `{"user_id":true}`} {
		if err := json.Unmarshal([]byte(bad), &ev); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if _, err := ID("-3").Int(); err == nil {
		t.Error("a negative QQ number accepted")
	}
	for _, tt := range []struct {
		in    string
		event bool
		err   string
	}{
		{`{"post_type":"meta_event"}`, true, ""},
		{`{"status":"ok","retcode":0,"echo":"hologram-1"}`, false, ""},
		{`{"status":"ok","echo":7}`, false, ""},
		{`{"status":"ok"}`, false, "neither an event"},
		{`not json`, false, "bad JSON"},
	} {
		ev, err := classifyFrame([]byte(tt.in))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("classifyFrame(%s): %v", tt.in, err)
			}
			continue
		}
		if err != nil || ev != tt.event {
			t.Errorf("classifyFrame(%s) = %v %v", tt.in, ev, err)
		}
	}
	if echoKey(json.RawMessage(`"hologram-3"`)) != "hologram-3" || echoKey(json.RawMessage(`7`)) != "7" {
		t.Error("echo keys")
	}
	for _, tt := range []struct {
		r   Response
		err string
	}{
		{Response{Status: "ok"}, ""},
		{Response{Status: "async", RetCode: 1}, ""},
		{Response{Status: "failed", RetCode: 100, Message: "bad group"}, "the bridge answered failed (retcode 100): bad group"},
		{Response{Status: "ok", RetCode: 102}, "(retcode 102): no reason given"},
	} {
		err := tt.r.Err()
		if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%+v.Err() = %v, want %q", tt.r, err, tt.err)
		}
	}
}
