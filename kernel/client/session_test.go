package client

import "testing"

func TestSessionSystem(t *testing.T) {
	for _, tc := range []struct {
		channel string
		want    bool
	}{
		{"", false}, {"waiter", false}, {"qq", false}, {"plugin:notes", true}, {"plugin:", true},
		{"openai", true}, {"openai-like", false}, {"pluginx", false},
	} {
		if got := (Session{Channel: tc.channel}).System(); got != tc.want {
			t.Errorf("Session{Channel: %q}.System() = %v, want %v", tc.channel, got, tc.want)
		}
	}
}
