package protocol

import (
	"encoding/json"
	"testing"
)

func TestIDRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, str string
		ok            bool
	}{
		{"string", `"abc"`, "abc", true},
		{"leading zeros string", `"007"`, "007", true},
		{"escaped string", `"\u0035"`, "5", true},
		{"number", `42`, "42", true},
		{"negative", `-7`, "-7", true},
		{"zero", `0`, "0", true},
		{"big number", `12345678901234567890123`, "12345678901234567890123", true},
		{"null", `null`, "", false},
		{"bool", `true`, "", false},
		{"object", `{"a":1}`, "", false},
		{"array", `[1]`, "", false},
		{"fraction", `1.5`, "", false},
		{"exponent", `1e3`, "", false},
		{"leading zero number", `007`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var id ID
			err := json.Unmarshal([]byte(tt.in), &id)
			if (err == nil) != tt.ok {
				t.Fatalf("Unmarshal(%s) err = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if !tt.ok {
				return
			}
			out, err := json.Marshal(id)
			if err != nil || string(out) != tt.in {
				t.Errorf("Marshal = %s, %v; want %s", out, err, tt.in)
			}
			if id.String() != tt.str || id.IsZero() {
				t.Errorf("String() = %q IsZero=%v, want %q", id.String(), id.IsZero(), tt.str)
			}
		})
	}
}

func TestIDConstructors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		id   ID
		want string
	}{
		{"string", StringID("007"), `"007"`},
		{"html is not escaped", StringID("<a>"), `"<a>"`},
		{"int", IntID(-3), `-3`},
		{"zero value", ID{}, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := tt.id.MarshalJSON()
			if string(b) != tt.want {
				t.Errorf("got %s, want %s", b, tt.want)
			}
		})
	}
	if StringID("1") == IntID(1) {
		t.Error(`StringID("1") == IntID(1): string and number ids must differ`)
	}
}

func TestMessageClassification(t *testing.T) {
	t.Parallel()
	id := IntID(1)
	tests := []struct {
		name             string
		m                Message
		req, notif, resp bool
		wire             string
	}{
		{"request", Message{ID: &id, Method: "ping"}, true, false, false, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"notification", Message{Method: "n", Params: json.RawMessage(`{ "a" : 1 }`)}, false, true, false, `{"jsonrpc":"2.0","method":"n","params":{"a":1}}`},
		{"result", Message{ID: &id, Result: json.RawMessage(`{}`)}, false, false, true, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"error without id", Message{Error: &Error{Code: ParseError, Message: "x"}}, false, false, true, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`},
		{"empty", Message{}, false, false, false, `{"jsonrpc":"2.0","id":null,"result":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.m.IsRequest() != tt.req || tt.m.IsNotification() != tt.notif || tt.m.IsResponse() != tt.resp {
				t.Errorf("req/notif/resp = %v/%v/%v, want %v/%v/%v", tt.m.IsRequest(), tt.m.IsNotification(), tt.m.IsResponse(), tt.req, tt.notif, tt.resp)
			}
			b, err := json.Marshal(tt.m)
			if err != nil || string(b) != tt.wire {
				t.Errorf("Marshal = %s, %v; want %s", b, err, tt.wire)
			}
		})
	}
}
