package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRepairPreferences(t *testing.T) {
	tests := []struct {
		name     string
		content  *string // nil: no file
		repaired bool
	}{
		{"missing", nil, false},
		{"readable", ptr(`{"language":"zh"}`), false},
		{"empty object", ptr("{}\n"), false},
		{"empty (a save cut short)", ptr(""), true},
		{"garbage", ptr("{\"language\":"), true},
		{"not an object", ptr("[1,2]"), true},
		{"null", ptr("null"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "preferences.json")
			if tt.content != nil {
				if err := os.WriteFile(path, []byte(*tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			msg, err := repairPreferences(path)
			if err != nil {
				t.Fatal(err)
			}
			if (msg != "") != tt.repaired {
				t.Fatalf("message %q, want repaired %v", msg, tt.repaired)
			}
			_, errNow := os.Stat(path)
			kept, errKept := os.ReadFile(path + ".unreadable")
			switch {
			case tt.repaired && (!os.IsNotExist(errNow) || errKept != nil || string(kept) != *tt.content):
				t.Errorf("not moved aside: %v, kept %q (%v)", errNow, kept, errKept)
			case !tt.repaired && tt.content != nil && errNow != nil:
				t.Errorf("a readable file was touched: %v", errNow)
			}
		})
	}
}

func ptr(s string) *string { return &s }
