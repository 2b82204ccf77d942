package memory_test

import (
	"testing"

	"github.com/hologramagent/hologram/memory"
)

func TestNameKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Alice", "alice"},
		{"  Alice   SMITH ", "alice smith"},
		{"alice\tsmith\n", "alice smith"},
		{"北京", "北京"},
		{"ÉLODIE", "élodie"},
		{"   ", ""},
	}
	for _, tt := range tests {
		if got := memory.NameKey(tt.in); got != tt.want {
			t.Errorf("NameKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNormalizePredicate(t *testing.T) {
	tests := []struct{ in, want string }{
		{"lives in", "lives in"},
		{"Lives_In ", "lives in"},
		{"  WORKS   at", "works at"},
		{"works__at", "works at"},
		{"_", ""},
		{"", ""},
		{"住在", "住在"},
	}
	for _, tt := range tests {
		if got := memory.NormalizePredicate(tt.in); got != tt.want {
			t.Errorf("NormalizePredicate(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSingleValued(t *testing.T) {
	tests := []struct {
		pred string
		want bool
	}{
		{"lives in", true},
		{"Lives_In", true},
		{"works at", true},
		{"works as", true},
		{"age", true},
		{"is married to", true},
		{"married to", true},
		{"birthday", true},
		{"job", true},
		{"name", true},
		{"status", true},
		{"favourite colour", true},
		{"Favorite food", true},
		{"current employer", true},
		{"住在", true},
		{"工作于", true},
		{"年龄", true},
		{"最喜欢的水果", true},
		{"likes", false},
		{"knows", false},
		{"visited", false},
		{"has", false},
		{"喜欢", false},
		{"", false},
		{"lives", false},
		{"currently", false},
	}
	for _, tt := range tests {
		if got := memory.SingleValued(tt.pred); got != tt.want {
			t.Errorf("SingleValued(%q) = %v, want %v", tt.pred, got, tt.want)
		}
	}
}
