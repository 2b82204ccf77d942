package agent

import (
	"fmt"

	"github.com/hologramagent/hologram/memory"
)

// Visibility says who may call a tool (ARCHITECTURE.md §5): the owner only, or anyone a session
// serves (a QQ group, a /v1 end user, the public). A tool that declares nothing is owner-only.
type Visibility string

// Visibilities.
const (
	VisibilityOwner Visibility = "owner" // the default: reads or writes the owner's data
	VisibilityAny   Visibility = "any"   // safe in any session; its results carry no owner data
)

// ParseVisibility checks a declared visibility; "" is [VisibilityOwner].
func ParseVisibility(s string) (Visibility, error) {
	switch Visibility(s) {
	case "", VisibilityOwner:
		return VisibilityOwner, nil
	case VisibilityAny:
		return VisibilityAny, nil
	}
	return "", fmt.Errorf("invalid tool visibility %q (want %q or %q)", s, VisibilityOwner, VisibilityAny)
}

// Scoped is implemented by tools that declare their visibility. A tool that does not is
// owner-only: the gate fails closed.
type Scoped interface {
	Visibility() Visibility
}

// visibilityOf is t's declared visibility, [VisibilityOwner] when it declares none (or an
// unknown one).
func visibilityOf(t Tool) Visibility {
	s, ok := t.(Scoped)
	if !ok {
		return VisibilityOwner
	}
	v, err := ParseVisibility(string(s.Visibility()))
	if err != nil {
		return VisibilityOwner
	}
	return v
}

// OwnerScope reports whether a session scope is the owner's own (private): only there are
// owner-only tools offered.
func OwnerScope(sc memory.Scope) bool { return sc.Kind == memory.ScopePrivate }

// MayCall reports whether a turn in scope sc may call a tool of visibility v.
func MayCall(v Visibility, sc memory.Scope) bool { return OwnerScope(sc) || v == VisibilityAny }

// Offered returns the tools a turn in scope sc may be offered, in order: every tool in the
// owner's sessions, only [VisibilityAny] tools elsewhere. It applies before any tool window
// or tool search, which choose among what it returns.
func Offered(tools []ToolInfo, sc memory.Scope) []ToolInfo {
	out := make([]ToolInfo, 0, len(tools))
	for _, t := range tools {
		if MayCall(t.Visibility, sc) {
			out = append(out, t)
		}
	}
	return out
}

// ToolScope is the scope of what a tool of visibility v returns: owner-private for owner-only
// tools, public for the others (whose results carry no owner data).
func ToolScope(v Visibility) memory.Scope {
	if v == VisibilityAny {
		return memory.Scope{Kind: memory.ScopePublic}
	}
	return memory.Scope{Kind: memory.ScopePrivate}
}

// ResultScope is the scope a tool result is stored in: the narrower of the tool's and the
// session's, so owner data never lands in a group's or a user's scope.
func ResultScope(v Visibility, session memory.Scope) memory.Scope {
	return memory.Narrowest(ToolScope(v), session)
}

// ownerOnlyDenial is the recorded result of a call to an owner-only tool outside the owner's
// sessions.
func ownerOnlyDenial(name string, sc memory.Scope) string {
	return denial(name, fmt.Sprintf("it is for the owner only and this conversation is in scope %s", sc))
}
