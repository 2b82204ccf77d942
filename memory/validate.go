package memory

import (
	"errors"
	"fmt"
)

// ErrInvalid is returned by Store implementations when an argument breaks an invariant (an unknown
// role, an empty session id, a malformed scope). Callers test it with errors.Is.
var ErrInvalid = errors.New("invalid argument")

// Valid reports whether r is one of the four roles ([RoleSystem], [RoleUser], [RoleAssistant],
// [RoleTool]).
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// Validate reports whether s is well formed: Kind is one of the three kinds, and Group is set
// exactly when Kind is [ScopeGroup]. The error wraps [ErrInvalid].
func (s Scope) Validate() error {
	switch s.Kind {
	case ScopePrivate, ScopePublic:
		if s.Group != "" {
			return fmt.Errorf("scope %s carries group %q (only group scopes name a group): %w", s, s.Group, ErrInvalid)
		}
	case ScopeGroup:
		if s.Group == "" {
			return fmt.Errorf("group scope without a group id: %w", ErrInvalid)
		}
	default:
		return fmt.Errorf("unknown scope kind %d: %w", int(s.Kind), ErrInvalid)
	}
	return nil
}

// ValidateEvent checks what every Store checks before AppendEvents stores an event: a session id,
// a known role and a well-formed scope. The error wraps [ErrInvalid]. It is safe for concurrent use.
func ValidateEvent(e Event) error {
	if e.Session == "" {
		return fmt.Errorf("event without a session id: %w", ErrInvalid)
	}
	if !e.Role.Valid() {
		return fmt.Errorf("event role %q is not one of system, user, assistant, tool: %w", string(e.Role), ErrInvalid)
	}
	if err := e.Scope.Validate(); err != nil {
		return fmt.Errorf("event scope: %w", err)
	}
	return nil
}

// ValidateSession checks what every Store checks before CreateSession or UpdateSession: a
// non-empty id. The error wraps [ErrInvalid].
func ValidateSession(s Session) error {
	if s.ID == "" {
		return fmt.Errorf("session without an id: %w", ErrInvalid)
	}
	return nil
}
