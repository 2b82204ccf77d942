package client

import (
	"errors"
	"reflect"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr error
	}{
		{"words", "node  server.js\tstdio", []string{"node", "server.js", "stdio"}, nil},
		{"empty", "   ", nil, nil},
		{"single quotes keep everything", `echo 'a "b" \c $d'`, []string{"echo", `a "b" \c $d`}, nil},
		{"double quotes", `echo "a 'b' \"c\" \\ \x"`, []string{"echo", `a 'b' "c" \ \x`}, nil},
		{"backslash outside quotes", `a\ b c\\d \'e`, []string{"a b", `c\d`, "'e"}, nil},
		{"adjacent parts join", `--dir="/tmp/my dir"/x 'a'"b"c`, []string{"--dir=/tmp/my dir/x", "abc"}, nil},
		{"empty words", `a '' ""`, []string{"a", "", ""}, nil},
		{"line continuation", "a \\\nb", []string{"a", "b"}, nil},
		{"utf-8", `cat "/home/我的 笔记.txt"`, []string{"cat", "/home/我的 笔记.txt"}, nil},
		{"unterminated single", `a 'b`, nil, ErrUnterminatedQuote},
		{"unterminated double", `a "b\"`, nil, ErrUnterminatedQuote},
		{"trailing backslash", `a b\`, nil, ErrTrailingBackslash},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitCommand(tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("splitCommand(%q) error %v, want %v", tt.in, err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("splitCommand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
