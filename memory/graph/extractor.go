// Package graph distils cold memory (L2 events) into the L3 graph: entities and triples with
// provenance (ARCHITECTURE.md §4).
//
// An [Extractor] reads one batch of one session's events and returns facts about the people
// and things they speak of. Two extractors are provided: [Rules], LLM-free English and Chinese
// patterns that work with no model at all, and [LLM], which asks a model (through the small
// [Completer] interface the kernel implements) for facts matching [FactsSchema], validates them
// strictly and retries with the exact error. The [Distiller] finds cold events with
// [memory.Graph.ColdEvents], runs the extractor (falling back to the rules when it fails) and
// applies each batch with one [memory.Graph.ApplyDistillation] transaction.
//
// The package imports only the standard library and memory; the kernel wires in the LLM.
package graph

import (
	"context"
	"strings"
	"unicode"

	"github.com/hologramagent/hologram/memory"
)

// Extractor reads facts from events (ARCHITECTURE.md §4: distillation extracts with an LLM and
// a JSON schema, validated and retried, and falls back to LLM-free rules).
type Extractor interface {
	// Name is the origin recorded on what the extractor produces ("rules", "llm").
	Name() string
	// Extract reads one batch of one session's events, in chronological order, and returns the
	// facts they state and the blocks to adopt as entities' text blocks. Every fact's Sources
	// are ids of events in evs. An error means nothing was extracted (the distiller then tries
	// its fallback); a cancelled ctx returns an error wrapping ctx.Err().
	Extract(ctx context.Context, evs []memory.Event) ([]memory.Fact, []memory.Adoption, error)
}

// Entity kinds the extractors produce. Other kinds an LLM proposes become KindThing.
const (
	KindPerson  = "person"
	KindPlace   = "place"
	KindOrg     = "org"
	KindThing   = "thing"
	KindConcept = "concept"
	KindTime    = "time"
	KindEvent   = "event"
	KindAnimal  = "animal"
)

// kinds is the set of valid entity kinds.
var kinds = map[string]bool{
	KindPerson: true, KindPlace: true, KindOrg: true, KindThing: true,
	KindConcept: true, KindTime: true, KindEvent: true, KindAnimal: true,
}

// ValidKind reports whether k is one of the entity kinds extractors produce.
func ValidKind(k string) bool { return kinds[k] }

// Origins of extracted facts ([Extractor.Name] of the built-in extractors).
const (
	OriginRules = "rules"
	OriginLLM   = "llm"
)

// DefaultOwner is the subject of the owner's first-person statements (user events without a
// partner).
const DefaultOwner = "owner"

// normName collapses the white space of an entity name.
func normName(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// adoptions returns, for each text block held by one of evs whose name equals (case-
// insensitively) an entity named in facts, an adoption of that block by that entity. Each
// block is adopted at most once.
func adoptions(evs []memory.Event, facts []memory.Fact) []memory.Adoption {
	names := map[string]string{}
	for _, f := range facts {
		for _, n := range []string{f.Subject, f.Object} {
			if k := memory.NameKey(n); k != "" {
				if _, ok := names[k]; !ok {
					names[k] = n
				}
			}
		}
	}
	var out []memory.Adoption
	seen := map[string]bool{}
	for _, e := range evs {
		for _, b := range e.Blocks {
			if b.Kind != memory.BlockText || b.ID == "" || seen[b.ID] {
				continue
			}
			if b.Holder.Layer == memory.LayerL3 {
				continue // already held by an entity
			}
			if n, ok := names[memory.NameKey(b.Name)]; ok {
				seen[b.ID] = true
				out = append(out, memory.Adoption{Block: b.ID, Entity: n})
			}
		}
	}
	return out
}

// speaker is who says an event's first-person statements, or "" when they are not facts about
// anyone (assistant and tool events).
func speaker(e memory.Event, owner string) string {
	if e.Role != memory.RoleUser {
		return ""
	}
	if p := strings.TrimSpace(e.Partner); p != "" {
		return p
	}
	return owner
}

// mentioner is the subject of an event's mentions facts: the speaker or the tool ("" for the
// assistant, whose events give no facts).
func mentioner(e memory.Event, owner string) (name, kind string) {
	switch e.Role {
	case memory.RoleUser:
		return speaker(e, owner), KindPerson
	case memory.RoleTool:
		if n := strings.TrimSpace(e.ToolName); n != "" {
			return "tool " + n, KindThing
		}
		return "tool", KindThing
	}
	return "", ""
}

// isUpperStart reports whether s starts with an upper-case letter.
func isUpperStart(s string) bool {
	for _, r := range s {
		return unicode.IsUpper(r)
	}
	return false
}
