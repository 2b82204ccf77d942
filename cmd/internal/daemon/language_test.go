package daemon

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// TestExpectChinese: jieba loads after start only for a Chinese locale or a store whose newest
// events hold Han text; older Han text, other locales and an empty store leave it lazy.
func TestExpectChinese(t *testing.T) {
	ctx := context.Background()
	open := func(t *testing.T, contents ...string) *sqlite.Store {
		s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"), sqlite.Options{Tokenize: memory.DefaultTokenize})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if _, err := s.CreateSession(ctx, memory.Session{ID: "main"}); err != nil {
			t.Fatal(err)
		}
		var evs []memory.Event
		for _, c := range contents {
			evs = append(evs, memory.Event{Session: "main", Role: memory.RoleUser, Content: c, Time: time.Now()})
		}
		if len(evs) > 0 {
			if _, err := s.AppendEvents(ctx, evs); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	many := func(first string, n int, rest string) []string {
		out := []string{first}
		for range n {
			out = append(out, rest)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		env    map[string]string
		events []string
		want   bool
	}{
		{"empty store, English locale", map[string]string{"LANG": "en_GB.UTF-8"}, nil, false},
		{"empty store, no locale", nil, nil, false},
		{"Chinese LANG", map[string]string{"LANG": "zh_CN.UTF-8"}, nil, true},
		{"LC_ALL wins over a Chinese LANG", map[string]string{"LC_ALL": "de_DE.UTF-8", "LANG": "zh_CN.UTF-8"}, nil, false},
		{"Chinese LC_MESSAGES", map[string]string{"LC_MESSAGES": "zh_TW.UTF-8", "LANG": "en_US.UTF-8"}, nil, true},
		{"a recent Chinese message", map[string]string{"LANG": "en_US.UTF-8"}, []string{"hello", "我明天去上海", "ok"}, true},
		{"English messages only", map[string]string{"LANG": "en_US.UTF-8"}, []string{"hello", "see you in Porto"}, false},
		{"Chinese only long ago", map[string]string{"LANG": "en_US.UTF-8"}, many("我明天去上海", recentForLanguage, "fine, thanks"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, tc.events...)
			if got := expectChinese(ctx, s, func(k string) string { return tc.env[k] }); got != tc.want {
				t.Fatalf("expectChinese = %v, want %v", got, tc.want)
			}
		})
	}
	if expectChinese(ctx, nil, func(string) string { return "" }) {
		t.Fatal("expectChinese without a store = true")
	}
}
