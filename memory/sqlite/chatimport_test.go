package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// TestImportConversation: the session is created once, messages are stored once by their
// import id (also when two imports of the same conversation race), the session's Updated is
// the conversation's time, and malformed input stores nothing.
func TestImportConversation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	at := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	sess := memory.Session{ID: "chatgpt-x", Title: "X", Channel: "chatgpt", Created: at, Updated: at}
	ev := func(id, text string, dt time.Duration) memory.Event {
		return memory.Event{Session: sess.ID, Role: memory.RoleUser, Content: text, Time: at.Add(dt), Channel: "chatgpt",
			Meta: map[string]string{backup.MetaImport: "chatgpt", backup.MetaImportID: id}}
	}
	stored, created, err := s.ImportConversation(ctx, sess, []memory.Event{ev("m1", "one", time.Second), ev("m1", "one again", 2*time.Second), ev("m2", "two", 3*time.Second)})
	if err != nil || !created || len(stored) != 2 {
		t.Fatalf("first import: %d stored, created %v, %v", len(stored), created, err)
	}
	got, err := s.GetSession(ctx, sess.ID)
	if err != nil || !got.Updated.Equal(at.Add(3*time.Second)) || got.Title != "X" {
		t.Errorf("session %+v, %v", got, err)
	}

	// Eight imports of the conversation with one more message race: it is stored once.
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range 8 {
		wg.Go(func() {
			st, created, err := s.ImportConversation(ctx, sess, []memory.Event{ev("m1", "one", time.Second), ev("m2", "two", 3*time.Second), ev("m3", "three", 4*time.Second)})
			if err != nil || created {
				t.Errorf("racing import: created %v, %v", created, err)
			}
			mu.Lock()
			total += len(st)
			mu.Unlock()
		})
	}
	wg.Wait()
	if n, _ := s.CountEvents(ctx, sess.ID); total != 1 || n != 3 {
		t.Errorf("racing imports stored %d, the session holds %d events; want 1 and 3", total, n)
	}

	bad := []struct {
		name string
		sess memory.Session
		evs  []memory.Event
		want error
	}{
		{"no id", memory.Session{Channel: "chatgpt"}, nil, memory.ErrInvalid},
		{"other session", sess, []memory.Event{{Session: "y", Role: memory.RoleUser, Meta: map[string]string{backup.MetaImportID: "a"}}}, memory.ErrInvalid},
		{"no import id", sess, []memory.Event{{Session: sess.ID, Role: memory.RoleUser, Content: "z"}}, memory.ErrInvalid},
		{"bad role", sess, []memory.Event{{Session: sess.ID, Role: "robot", Content: "z", Meta: map[string]string{backup.MetaImportID: "m9"}}}, memory.ErrInvalid},
		{"another channel", memory.Session{ID: sess.ID, Channel: "openwebui"}, []memory.Event{ev("m9", "nine", 0)}, memory.ErrExists},
	}
	for _, tc := range bad {
		if _, _, err := s.ImportConversation(ctx, tc.sess, tc.evs); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if n, _ := s.CountEvents(ctx, sess.ID); n != 3 {
		t.Errorf("after the refused calls the session holds %d events, want 3", n)
	}
}
