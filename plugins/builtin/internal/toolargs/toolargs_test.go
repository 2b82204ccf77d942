package toolargs

import (
	"encoding/json"
	"testing"
)

func TestDecode(t *testing.T) {
	type args struct {
		Path string `json:"path"`
		Max  int    `json:"max"`
	}
	tests := []struct {
		name      string
		in        string
		want      args
		wantErr   string // of Decode
		wantWhole string // of DecodeWhole ("-": as wantErr)
	}{
		{"an object", `{"path":"a","max":2}`, args{"a", 2}, "", "-"},
		{"an unknown field", `{"path":"a","maxx":2}`, args{}, `bad arguments: json: unknown field "maxx"`, "-"},
		{"a wrong type", `{"max":"2"}`, args{}, "bad arguments: json: cannot unmarshal string into Go struct field args.max of type int", "-"},
		{"nothing", ``, args{}, "bad arguments: EOF", ""},
		{"blank", " \n", args{}, "bad arguments: EOF", ""},
		{"trailing data", `{"path":"a"} {"max":1}`, args{Path: "a"}, "", "bad arguments: trailing data after the JSON object"},
		{"trailing garbage", `{"path":"a"}]`, args{Path: "a"}, "", "bad arguments: trailing data after the JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got args
			err := Decode(json.RawMessage(tt.in), &got)
			if msg(err) != tt.wantErr || (err == nil && got != tt.want) {
				t.Fatalf("Decode = %+v, %v; want %+v, %q", got, err, tt.want, tt.wantErr)
			}
			wantWhole := tt.wantWhole
			if wantWhole == "-" {
				wantWhole = tt.wantErr
			}
			got = args{}
			err = DecodeWhole(json.RawMessage(tt.in), &got)
			if msg(err) != wantWhole || (err == nil && got != tt.want) {
				t.Fatalf("DecodeWhole = %+v, %v; want %+v, %q", got, err, tt.want, wantWhole)
			}
		})
	}
}

// msg is err's text, "" for nil.
func msg(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
