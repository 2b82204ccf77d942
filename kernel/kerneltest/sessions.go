package kerneltest

import (
	"errors"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// sessionIDs lists the ids of the sessions s lists.
func sessionIDs(t *testing.T, s client.Service) map[string]client.Session {
	t.Helper()
	list, err := s.Sessions(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]client.Session{}
	for _, x := range list {
		out[x.ID] = x
	}
	return out
}

// recalls reports whether a search for text finds an event of session.
func recalls(t *testing.T, s client.Service, text, session string) bool {
	t.Helper()
	for _, h := range mustSearch(t, s, client.MemoryQuery{Text: text, K: 20}) {
		if h.Session == session {
			return true
		}
	}
	return false
}

// testSessionAdmin: rename and delete, with the memory of a deleted chat kept or forgotten,
// and the sessions the kernel keeps for itself told apart.
func testSessionAdmin(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	addFake(t, s)
	for _, id := range []string{"trip", "sail"} {
		if _, err := s.CreateSession(ctx, client.Session{ID: id, Title: id}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ session, input string }{
		{"trip", "we plan hiking near Porto in May"},
		{"sail", "we go sailing around Lisbon in June"},
	} {
		if _, err := s.Chat(ctx, client.ChatRequest{Session: tc.session, Input: tc.input}, nil); err != nil {
			t.Fatal(err)
		}
	}

	// Rename, and every bad title or id refused with its reason.
	got, err := s.RenameSession(ctx, "trip", "  Trip to Porto  ")
	if err != nil || got.Title != "Trip to Porto" || sessionIDs(t, s)["trip"].Title != "Trip to Porto" {
		t.Fatalf("RenameSession = %+v, %v; listed %+v", got, err, sessionIDs(t, s)["trip"])
	}
	for _, tc := range []struct {
		name, id, title string
		want            error
	}{
		{"empty title", "trip", "   ", client.ErrInvalid},
		{"two lines", "trip", "a\nb", client.ErrInvalid},
		{"too long", "trip", strings.Repeat("x", client.MaxSessionTitle+1), client.ErrInvalid},
		{"unknown session", "nope", "x", client.ErrNotFound},
	} {
		t.Run("rename "+tc.name, func(t *testing.T) {
			if _, err := s.RenameSession(ctx, tc.id, tc.title); !errors.Is(err, tc.want) {
				t.Errorf("RenameSession(%q, %q) = %v, want %v", tc.id, tc.title, err, tc.want)
			}
		})
	}

	// Delete keeps the memory: the chat leaves the list, its events are still recalled.
	if !recalls(t, s, "hiking Porto", "trip") {
		t.Fatal("the trip's events are not recalled before the delete")
	}
	d, err := s.DeleteSession(ctx, "trip", false)
	if err != nil || d.Session != "trip" || d.Events != 2 || d.Forgotten {
		t.Fatalf("DeleteSession(trip) = %+v, %v; want 2 events kept", d, err)
	}
	if _, listed := sessionIDs(t, s)["trip"]; listed {
		t.Error("a deleted session is still listed")
	}
	if !recalls(t, s, "hiking Porto", "trip") {
		t.Error("deleting the session forgot its events")
	}
	if _, err := s.DeleteSession(ctx, "trip", false); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("second DeleteSession(trip) = %v, want not found", err)
	}
	if _, err := s.RenameSession(ctx, "trip", "again"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("RenameSession(deleted) = %v, want not found", err)
	}

	// Delete with forget: the events go too.
	d, err = s.DeleteSession(ctx, "sail", true)
	if err != nil || !d.Forgotten || d.Events != 2 || d.Forget.Events != 2 {
		t.Fatalf("DeleteSession(sail, forget) = %+v, %v; want 2 events forgotten", d, err)
	}
	if recalls(t, s, "sailing Lisbon", "sail") {
		t.Error("the forgotten session's events are still recalled")
	}
	for _, tc := range []struct {
		id   string
		want error
	}{{"main", client.ErrInvalid}, {"nope", client.ErrNotFound}} {
		if _, err := s.DeleteSession(ctx, tc.id, false); !errors.Is(err, tc.want) {
			t.Errorf("DeleteSession(%s) = %v, want %v", tc.id, err, tc.want)
		}
	}

	// A plugin's memory session is a system one; the owner's chats are not.
	if _, err := s.CreateSession(ctx, client.Session{ID: "plugin.notes", Title: "Memory of plugin notes", Channel: "plugin:notes"}); err != nil {
		t.Fatal(err)
	}
	listed := sessionIDs(t, s)
	if !listed["plugin.notes"].System() || listed["main"].System() {
		t.Errorf("System(): plugin session %v, main %v", listed["plugin.notes"].System(), listed["main"].System())
	}
}
