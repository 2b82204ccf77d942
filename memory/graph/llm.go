package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/memory"
)

// Completer asks a language model for one reply. The kernel implements it with its provider;
// schema is the JSON schema the reply must match (providers that support structured output
// pass it on). The reply may wrap the JSON in a ```json fence or in prose.
type Completer interface {
	Complete(ctx context.Context, system, user string, schema json.RawMessage) (string, error)
}

// FactsSchema is the JSON schema of an extraction reply: {"facts": [{subject, subject_kind,
// predicate, object, object_kind, sources, replaces, valid_from}]}. It is strict (every field
// required, no others) so providers with structured output can enforce it.
var FactsSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["facts"],
  "properties": {
    "facts": {
      "type": "array",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["subject", "subject_kind", "predicate", "object", "object_kind", "sources", "replaces", "ends", "valid_from"],
        "properties": {
          "subject": {"type": "string", "minLength": 1, "maxLength": 200},
          "subject_kind": {"type": "string", "enum": ["person", "place", "org", "thing", "concept", "time", "event", "animal"]},
          "predicate": {"type": "string", "minLength": 1, "maxLength": 100, "description": "one of the vocabulary's predicates: lives in, works at, likes, sister of, visited…"},
          "object": {"type": "string", "minLength": 1, "maxLength": 200},
          "object_kind": {"type": "string", "enum": ["person", "place", "org", "thing", "concept", "time", "event", "animal"]},
          "sources": {"type": "array", "minItems": 1, "items": {"type": "integer"}, "description": "ids of the events that state the fact"},
          "replaces": {"type": "boolean", "description": "true when the fact corrects or updates an earlier fact with the same subject and predicate"},
          "ends": {"type": "boolean", "description": "true when the events say the fact is no longer true (I no longer play cello): it ends, nothing new is stored"},
          "valid_from": {"type": "string", "description": "RFC 3339 time the fact became true, or empty"}
        }
      }
    }
  }
}`)

// ErrInvalidReply is wrapped by the errors of replies that do not parse or validate.
var ErrInvalidReply = errors.New("invalid extraction reply")

// Limits of the names in a reply.
const (
	maxNameRunes      = 200
	maxPredicateRunes = 100
)

// LLMOptions configures [NewLLM].
type LLMOptions struct {
	// Owner is the name of the owner (the speaker of user events without a partner).
	// "" means [DefaultOwner].
	Owner string
	// Retries is how many times a reply that does not parse or validate is asked again, with
	// the exact error. 0 means 2; negative means none.
	Retries int
	// MaxEventRunes bounds each event's text in the prompt. 0 means 2000.
	MaxEventRunes int
}

// LLM extracts facts with a language model: it numbers the events by id in the prompt, asks for
// a reply matching [FactsSchema], validates it strictly (known source ids, non-empty names of at
// most 200 runes, predicates of at most 100, RFC 3339 times; unknown kinds become "thing") and
// retries with the error. An LLM is safe for concurrent use if its Completer is.
type LLM struct {
	c        Completer
	owner    string
	retries  int
	maxRunes int
}

// NewLLM returns an LLM extractor that asks c.
func NewLLM(c Completer, o LLMOptions) *LLM {
	l := &LLM{c: c, owner: o.Owner, retries: o.Retries, maxRunes: o.MaxEventRunes}
	if l.owner == "" {
		l.owner = DefaultOwner
	}
	switch {
	case l.retries == 0:
		l.retries = 2
	case l.retries < 0:
		l.retries = 0
	}
	if l.maxRunes <= 0 {
		l.maxRunes = 2000
	}
	return l
}

// Name returns [OriginLLM].
func (l *LLM) Name() string { return OriginLLM }

// Extract implements [Extractor].
func (l *LLM) Extract(ctx context.Context, evs []memory.Event) ([]memory.Fact, []memory.Adoption, error) {
	if len(evs) == 0 {
		return nil, nil, nil
	}
	system := l.systemPrompt()
	prompt := l.userPrompt(evs)
	ids := make(map[int64]bool, len(evs))
	for _, e := range evs {
		ids[e.ID] = true
	}
	user := prompt
	var lastErr error
	for attempt := 0; attempt <= l.retries; attempt++ {
		reply, err := l.c.Complete(ctx, system, user, FactsSchema)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, nil, fmt.Errorf("llm extraction: %w", ctxErr)
			}
			return nil, nil, fmt.Errorf("llm extraction: complete: %w", err)
		}
		facts, err := parseFacts(reply, ids)
		if err == nil {
			facts = consolidate(facts)
			return facts, adoptions(evs, facts), nil
		}
		lastErr = err
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, nil, fmt.Errorf("llm extraction: %w", ctxErr)
		}
		user = prompt + "\n\nYour previous reply was rejected: " + err.Error() +
			"\nPrevious reply:\n" + truncateRunes(reply, 1000) +
			"\n\nReply again with only the corrected JSON object."
	}
	return nil, nil, fmt.Errorf("llm extraction: no valid reply after %d attempts: %w", l.retries+1, lastErr)
}

func (l *LLM) systemPrompt() string {
	return `You extract durable facts from a conversation for a personal memory graph.
Each fact is subject —predicate→ object between two named entities.
- State only what the events say; never guess. Skip small talk, questions and opinions about the conversation itself.
- First-person statements are about their speaker: use the speaker's name as shown in the event line ("` + l.owner + `" is the owner). The assistant's own statements are not facts about anyone.
- predicate: one of ` + vocabularyList() + `; "<relation> of" takes the relative as subject and the person as object ("Anna" sister of "` + l.owner + `"); use "talks about" only when none fits.
- subject_kind and object_kind: one of person, place, org, thing, concept, time, event, animal.
- sources: the ids (the numbers in brackets) of the events that state the fact.
- replaces: true when the fact corrects or updates an earlier one with the same subject and predicate (moved to a new city, changed jobs).
- ends: true when the events say a fact no longer holds ("I no longer play cello", "我现在不住在北京了"); give that old fact with ends true, and the new one, if any, as its own fact.
- valid_from: the RFC 3339 time the fact became true when the events say so, otherwise "".
Reply with only a JSON object matching the schema: {"facts": [...]}, an empty list when there is nothing to keep.`
}

// userPrompt lists the events, one a line: [id] time speaker: text.
func (l *LLM) userPrompt(evs []memory.Event) string {
	var b strings.Builder
	b.WriteString("Events:\n")
	for _, e := range evs {
		who := speaker(e, l.owner)
		switch e.Role {
		case memory.RoleAssistant:
			who = "assistant"
		case memory.RoleTool:
			who = "tool"
			if e.ToolName != "" {
				who += " " + e.ToolName
			}
		case memory.RoleSystem:
			who = "system"
		}
		text := strings.Join(strings.Fields(e.Content), " ")
		fmt.Fprintf(&b, "[%d] %s %s: %s", e.ID, e.Time.UTC().Format(time.RFC3339), who, truncateRunes(text, l.maxRunes))
		var names []string
		for _, bl := range e.Blocks {
			if bl.Name != "" {
				names = append(names, strconv.Quote(bl.Name))
			}
		}
		if len(names) > 0 {
			fmt.Fprintf(&b, " (attachments: %s)", strings.Join(names, ", "))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// truncateRunes cuts s to at most n runes, marking the cut with "…".
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// wireFact is one fact as the model writes it.
type wireFact struct {
	Subject     string  `json:"subject"`
	SubjectKind string  `json:"subject_kind"`
	Predicate   string  `json:"predicate"`
	Object      string  `json:"object"`
	ObjectKind  string  `json:"object_kind"`
	Sources     []int64 `json:"sources"`
	Replaces    bool    `json:"replaces"`
	Ends        bool    `json:"ends"`
	ValidFrom   string  `json:"valid_from"`
}

// parseFacts reads and validates a reply. ids are the events of the batch.
func parseFacts(reply string, ids map[int64]bool) ([]memory.Fact, error) {
	raw, err := firstObject(reply)
	if err != nil {
		return nil, err
	}
	var w struct {
		Facts *[]wireFact `json:"facts"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("%w: the JSON object does not match the schema: %v", ErrInvalidReply, err)
	}
	if w.Facts == nil {
		return nil, fmt.Errorf(`%w: the JSON object has no "facts" list`, ErrInvalidReply)
	}
	facts := make([]memory.Fact, 0, len(*w.Facts))
	for i, wf := range *w.Facts {
		f, err := validFact(wf, ids)
		if err != nil {
			return nil, fmt.Errorf("%w: fact %d: %v", ErrInvalidReply, i+1, err)
		}
		facts = append(facts, f)
	}
	return facts, nil
}

// validFact checks one fact and normalises it.
func validFact(wf wireFact, ids map[int64]bool) (memory.Fact, error) {
	f := memory.Fact{
		Subject: normName(wf.Subject), Object: normName(wf.Object),
		Predicate: memory.NormalizePredicate(wf.Predicate), Replaces: wf.Replaces, Ends: wf.Ends,
		SubjectKind: validKindOr(wf.SubjectKind), ObjectKind: validKindOr(wf.ObjectKind),
	}
	for _, c := range []struct {
		field, v string
		max      int
	}{{"subject", f.Subject, maxNameRunes}, {"predicate", f.Predicate, maxPredicateRunes}, {"object", f.Object, maxNameRunes}} {
		if c.v == "" {
			return f, fmt.Errorf("%s is empty", c.field)
		}
		if n := utf8.RuneCountInString(c.v); n > c.max {
			return f, fmt.Errorf("%s is %d characters long (at most %d)", c.field, n, c.max)
		}
	}
	if len(wf.Sources) == 0 {
		return f, errors.New("sources is empty (give the ids of the events that state it)")
	}
	for _, id := range wf.Sources {
		if !ids[id] {
			return f, fmt.Errorf("source %d is not one of the events (%s)", id, idList(ids))
		}
	}
	f.Sources = slices.Clone(wf.Sources)
	slices.Sort(f.Sources)
	f.Sources = slices.Compact(f.Sources)
	if v := strings.TrimSpace(wf.ValidFrom); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return f, fmt.Errorf("valid_from %q is not an RFC 3339 time (like 2024-05-01T00:00:00Z) nor empty", wf.ValidFrom)
		}
		f.ValidFrom = t
	}
	return f, nil
}

// validKindOr lower-cases a kind, replacing an unknown one by thing.
func validKindOr(k string) string {
	k = strings.ToLower(strings.TrimSpace(k))
	if ValidKind(k) {
		return k
	}
	return KindThing
}

// idList renders the batch's ids in order.
func idList(ids map[int64]bool) string {
	l := make([]int64, 0, len(ids))
	for id := range ids {
		l = append(l, id)
	}
	slices.Sort(l)
	s := make([]string, len(l))
	for i, id := range l {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}

// firstObject returns the first JSON object in a reply, which may wrap it in a code fence or
// prose.
func firstObject(reply string) (json.RawMessage, error) {
	for i := 0; i < len(reply); {
		j := strings.IndexByte(reply[i:], '{')
		if j < 0 {
			break
		}
		i += j
		dec := json.NewDecoder(strings.NewReader(reply[i:]))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == nil {
			return raw, nil
		}
		i++
	}
	if strings.TrimSpace(reply) == "" {
		return nil, fmt.Errorf("%w: the reply is empty (want a JSON object)", ErrInvalidReply)
	}
	return nil, fmt.Errorf("%w: the reply holds no complete JSON object", ErrInvalidReply)
}

// vocabularyList renders the predicate vocabulary for the prompt.
func vocabularyList() string {
	names := make([]string, 0, len(Vocabulary))
	for _, p := range Vocabulary {
		names = append(names, strconv.Quote(p.Name))
	}
	return strings.Join(names, ", ")
}
