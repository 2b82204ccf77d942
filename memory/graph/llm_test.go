package graph

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// script is a Completer that answers with its replies in turn (the last one repeats) and
// records the prompts it was given.
type script struct {
	mu      sync.Mutex
	replies []string
	err     error          // returned instead of a reply when set
	hook    func(call int) // called before answering call n (1-based)
	calls   []struct{ system, user string }
	schemas []json.RawMessage
}

func (s *script) Complete(ctx context.Context, system, user string, schema json.RawMessage) (string, error) {
	s.mu.Lock()
	s.calls = append(s.calls, struct{ system, user string }{system, user})
	s.schemas = append(s.schemas, schema)
	n := len(s.calls)
	s.mu.Unlock()
	if s.hook != nil {
		s.hook(n)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if s.err != nil {
		return "", s.err
	}
	return s.replies[min(n, len(s.replies))-1], nil
}

var llmEvents = []memory.Event{
	{ID: 11, Session: "s", Time: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC), Role: memory.RoleUser, Partner: "Ann",
		Content: "I moved to Berlin\nlast month.", Blocks: []memory.Block{
			{ID: "blk", Kind: memory.BlockText, Name: "Berlin", Text: "flat notes", Holder: memory.BlockHolder{Layer: memory.LayerL2, Event: 11}}}},
	{ID: 12, Session: "s", Time: time.Date(2024, 5, 1, 10, 1, 0, 0, time.UTC), Role: memory.RoleAssistant, Content: "Nice!"},
	{ID: 13, Session: "s", Time: time.Date(2024, 5, 1, 10, 2, 0, 0, time.UTC), Role: memory.RoleUser, Content: "I love jazz."},
}

const validReply = `{"facts": [
  {"subject": "Ann", "subject_kind": "person", "predicate": "Lives  In", "object": "Berlin", "object_kind": "place",
   "sources": [11], "replaces": true, "valid_from": "2024-04-01T00:00:00Z"},
  {"subject": "owner", "subject_kind": "person", "predicate": "loves", "object": "jazz", "object_kind": "genre",
   "sources": [13, 13], "replaces": false, "valid_from": ""}
]}`

var validFacts = []string{"Ann/person -lives in-> Berlin/place (replaces)", "owner/person -loves-> jazz/thing"}

func TestLLMExtract(t *testing.T) {
	invalid := `{"facts": [{"subject": "Ann", "subject_kind": "person", "predicate": "likes", "object": "x", "object_kind": "thing", "sources": [99], "replaces": false, "valid_from": ""}]}`
	tests := []struct {
		name    string
		replies []string
		opts    LLMOptions
		want    []string
		calls   int
		wantErr string // substring of the error
	}{
		{name: "valid", replies: []string{validReply}, want: validFacts, calls: 1},
		{name: "fenced", replies: []string{"Here you are:\n```json\n" + validReply + "\n```\nAnything else?"}, want: validFacts, calls: 1},
		{name: "prose with braces first", replies: []string{"Sure {not json}: " + validReply}, want: validFacts, calls: 1},
		{name: "empty list", replies: []string{`{"facts": []}`}, want: nil, calls: 1},
		{name: "invalid then valid", replies: []string{invalid, validReply}, want: validFacts, calls: 2},
		{name: "always invalid", replies: []string{invalid}, calls: 3,
			wantErr: "no valid reply after 3 attempts: invalid extraction reply: fact 1: source 99 is not one of the events (11, 12, 13)"},
		{name: "no retries", replies: []string{"no json here"}, opts: LLMOptions{Retries: -1}, calls: 1,
			wantErr: "no valid reply after 1 attempts: invalid extraction reply: the reply holds no complete JSON object"},
		{name: "one retry", replies: []string{""}, opts: LLMOptions{Retries: 1}, calls: 2,
			wantErr: "the reply is empty"},
		{name: "unknown field", replies: []string{`{"facts": [], "confidence": 1}`}, calls: 3,
			wantErr: `unknown field "confidence"`},
		{name: "no facts list", replies: []string{`{"items": []}`, `{}`}, calls: 3,
			wantErr: `no "facts" list`},
		{name: "empty subject", replies: []string{strings.Replace(validReply, `"subject": "Ann"`, `"subject": "  "`, 1)}, calls: 3,
			wantErr: "fact 1: subject is empty"},
		{name: "long object", replies: []string{strings.Replace(validReply, `"object": "Berlin"`, `"object": "`+strings.Repeat("é", 201)+`"`, 1)}, calls: 3,
			wantErr: "fact 1: object is 201 characters long (at most 200)"},
		{name: "long predicate", replies: []string{strings.Replace(validReply, `"predicate": "loves"`, `"predicate": "`+strings.Repeat("p", 101)+`"`, 1)}, calls: 3,
			wantErr: "fact 2: predicate is 101 characters long (at most 100)"},
		{name: "no sources", replies: []string{strings.Replace(validReply, `[13, 13]`, `[]`, 1)}, calls: 3,
			wantErr: "fact 2: sources is empty"},
		{name: "bad time", replies: []string{strings.Replace(validReply, `2024-04-01T00:00:00Z`, `April 2024`, 1)}, calls: 3,
			wantErr: `fact 1: valid_from "April 2024" is not an RFC 3339 time`},
		{name: "wrong type", replies: []string{`{"facts": [{"subject": 3}]}`}, calls: 3,
			wantErr: "does not match the schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &script{replies: tt.replies}
			facts, adopt, err := NewLLM(c, tt.opts).Extract(context.Background(), llmEvents)
			if len(c.calls) != tt.calls {
				t.Errorf("%d calls, want %d", len(c.calls), tt.calls)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidReply) {
					t.Fatalf("err = %v, want one wrapping ErrInvalidReply with %q", err, tt.wantErr)
				}
				// Every retry tells the model the exact error.
				for i := 1; i < len(c.calls); i++ {
					if !strings.Contains(c.calls[i].user, "Your previous reply was rejected: ") {
						t.Errorf("retry %d does not give the error:\n%s", i, c.calls[i].user)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := renderAll(facts); !slices.Equal(got, tt.want) {
				t.Errorf("facts %q, want %q", got, tt.want)
			}
			if len(facts) > 0 {
				if !facts[0].ValidFrom.Equal(time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)) || !facts[1].ValidFrom.IsZero() {
					t.Errorf("valid from %v, %v", facts[0].ValidFrom, facts[1].ValidFrom)
				}
				if !slices.Equal(facts[1].Sources, []int64{13}) {
					t.Errorf("sources %v, want [13]", facts[1].Sources)
				}
				if want := []memory.Adoption{{Block: "blk", Entity: "Berlin"}}; !slices.Equal(adopt, want) {
					t.Errorf("adoptions %v, want %v", adopt, want)
				}
			}
		})
	}
}

func TestLLMRetryNamesTheError(t *testing.T) {
	bad := `{"facts": [{"subject": "Ann", "subject_kind": "person", "predicate": "likes", "object": "x", "object_kind": "thing", "sources": [5], "replaces": false, "valid_from": ""}]}`
	c := &script{replies: []string{bad, validReply}}
	if _, _, err := NewLLM(c, LLMOptions{}).Extract(context.Background(), llmEvents); err != nil {
		t.Fatal(err)
	}
	retry := c.calls[1].user
	for _, want := range []string{
		"invalid extraction reply: fact 1: source 5 is not one of the events (11, 12, 13)",
		bad,
		c.calls[0].user, // the events again
	} {
		if !strings.Contains(retry, want) {
			t.Errorf("retry prompt lacks %q:\n%s", want, retry)
		}
	}
}

func TestLLMPrompt(t *testing.T) {
	c := &script{replies: []string{`{"facts": []}`}}
	evs := append(slices.Clone(llmEvents), memory.Event{ID: 14, Time: llmEvents[2].Time, Role: memory.RoleTool,
		ToolName: "weather", Content: strings.Repeat("sun ", 100)})
	if _, _, err := NewLLM(c, LLMOptions{Owner: "Li", MaxEventRunes: 20}).Extract(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	user := c.calls[0].user
	for _, want := range []string{
		"[11] 2024-05-01T10:00:00Z Ann: I moved to Berlin la… (attachments: \"Berlin\")\n",
		"[12] 2024-05-01T10:01:00Z assistant: Nice!\n",
		"[13] 2024-05-01T10:02:00Z Li: I love jazz.\n",
		"[14] 2024-05-01T10:02:00Z tool weather: sun sun sun sun sun …\n",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("prompt lacks %q:\n%s", want, user)
		}
	}
	if !strings.Contains(c.calls[0].system, `"Li" is the owner`) {
		t.Errorf("system prompt does not name the owner:\n%s", c.calls[0].system)
	}
	if string(c.schemas[0]) != string(FactsSchema) {
		t.Error("the schema is not passed to the completer")
	}
	var schema map[string]any
	if err := json.Unmarshal(FactsSchema, &schema); err != nil {
		t.Fatalf("FactsSchema is not JSON: %v", err)
	}
}

func TestLLMContext(t *testing.T) {
	tests := []struct {
		name  string
		setup func(cancel context.CancelFunc) *script
		calls int
	}{
		{"cancelled before", func(cancel context.CancelFunc) *script {
			cancel()
			return &script{replies: []string{validReply}}
		}, 1},
		{"cancelled during the call", func(cancel context.CancelFunc) *script {
			return &script{replies: []string{validReply}, hook: func(int) { cancel() }}
		}, 1},
		{"cancelled while retrying", func(cancel context.CancelFunc) *script {
			return &script{replies: []string{"bad", validReply}, hook: func(n int) {
				if n == 2 {
					cancel()
				}
			}}
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := tt.setup(cancel)
			_, _, err := NewLLM(c, LLMOptions{}).Extract(ctx, llmEvents)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if len(c.calls) != tt.calls {
				t.Errorf("%d calls, want %d", len(c.calls), tt.calls)
			}
		})
	}
}

func TestLLMCompleterError(t *testing.T) {
	boom := errors.New("provider down")
	c := &script{err: boom}
	_, _, err := NewLLM(c, LLMOptions{}).Extract(context.Background(), llmEvents)
	if !errors.Is(err, boom) || len(c.calls) != 1 {
		t.Fatalf("err = %v after %d calls, want the provider's error after 1", err, len(c.calls))
	}
}
