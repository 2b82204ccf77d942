package assistants

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

// settings is an in-memory Settings; fail makes every call fail.
type settings struct {
	mu   sync.Mutex
	m    map[string]string
	fail error
}

func (s *settings) GetSetting(_ context.Context, k string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return "", s.fail
	}
	v, ok := s.m[k]
	if !ok {
		return "", memory.ErrNotFound
	}
	return v, nil
}

func (s *settings) SetSetting(_ context.Context, k, v string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.m[k] = v
	return nil
}

func (s *settings) DeleteSetting(_ context.Context, k string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[k]; !ok {
		return memory.ErrNotFound
	}
	delete(s.m, k)
	return nil
}

func (s *settings) ListSettings(_ context.Context, prefix string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for k, v := range s.m {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out, nil
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"Echo Helper", "echo-helper"},
		{"  Code   review!! v2 ", "code-review-v2"},
		{"Résumé writer", "r-sum-writer"},
		{strings.Repeat("ab", 40), strings.Repeat("ab", 24)},
	} {
		if got := slug(tc.name); got != tc.want || !idRe.MatchString(got) {
			t.Errorf("slug(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := slug("翻译助手"); !idRe.MatchString(got) || !strings.HasPrefix(got, "a-") {
		t.Errorf("slug of a CJK name = %q, want a random a-… id", got)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		in      client.Assistant
		wantErr bool
	}{
		{client.Assistant{Name: "ok", Tools: []string{"files", "echo", "files"}}, false},
		{client.Assistant{Name: "bad utf-8", Instructions: "\xff"}, true},
		{client.Assistant{Name: "tab\tname"}, true},
		{client.Assistant{Name: "x", Tools: []string{""}}, true},
		{client.Assistant{Name: "x", ID: strings.Repeat("a", 65)}, true},
	} {
		out, err := check(tc.in)
		if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, client.ErrInvalid)) {
			t.Errorf("check(%+v) = %v, want error %v", tc.in, err, tc.wantErr)
		}
		if err == nil && len(out.Tools) != 2 {
			t.Errorf("check kept tools %v, want them deduplicated", out.Tools)
		}
	}
}

// TestMayCall: the filter is read from the store after a restart (a new Service), the
// kernel's own tools always pass, a store error refuses, and at most MaxAssistants presets.
func TestMayCall(t *testing.T) {
	ctx := context.Background()
	db := &settings{m: map[string]string{}}
	create := func(_ context.Context, s client.Session) (client.Session, error) { return s, nil }
	s := &Service{DB: db, Create: create}
	if _, err := s.SaveAssistant(ctx, client.Assistant{Name: "Files only", Tools: []string{"files"}}); err != nil {
		t.Fatal(err)
	}
	sess, err := s.StartAssistant(ctx, "files-only", "")
	if err != nil {
		t.Fatal(err)
	}
	tool := func(name, source string) agent.ToolInfo {
		return agent.ToolInfo{Spec: llm.Tool{Name: name}, Source: source}
	}
	restarted := &Service{DB: db, Create: create}
	for _, tc := range []struct {
		session string
		tool    agent.ToolInfo
		want    bool
	}{
		{sess.ID, tool("read_file", "files"), true},
		{sess.ID, tool("echo", "everything"), false},
		{sess.ID, tool("files", "other"), true},
		{sess.ID, tool("time_now", "builtin"), true},
		{sess.ID, tool(agent.ToolSearchTool, "agent"), true},
		{"main", tool("echo", "everything"), true},
	} {
		if got := restarted.MayCall(ctx, agent.TurnRequest{Session: tc.session}, tc.tool); got != tc.want {
			t.Errorf("MayCall(%s, %s from %s) = %v, want %v", tc.session, tc.tool.Spec.Name, tc.tool.Source, got, tc.want)
		}
	}
	db.fail = errors.New("disk on fire")
	if (&Service{DB: db}).MayCall(ctx, agent.TurnRequest{Session: sess.ID}, tool("read_file", "files")) {
		t.Error("MayCall with an unreadable filter = true, want the tool refused")
	}
	db.fail = nil
	for i := len(db.m) - 1; i < client.MaxAssistants; i++ {
		if _, err := s.SaveAssistant(ctx, client.Assistant{Name: "n" + strings.Repeat("x", i%50), ID: "n" + string(rune('a'+i%26)) + strings.Repeat("0", i/26)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SaveAssistant(ctx, client.Assistant{Name: "one too many"}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("preset %d = %v, want ErrInvalid", client.MaxAssistants+1, err)
	}
	if _, err := s.SaveAssistant(ctx, client.Assistant{ID: "files-only", Name: "Files only", Tools: []string{"files", "notes"}}); err != nil {
		t.Fatalf("replacing a preset at the limit: %v", err)
	}
}
