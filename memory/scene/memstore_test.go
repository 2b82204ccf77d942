package scene

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"sync"

	"github.com/hologramagent/hologram/memory"
)

// memStore is a small in-memory memory.SceneStore with the store's semantics (unique keys,
// ErrExists/ErrNotFound, copies in and out), for the tracker's unit tests; the same tests also
// run against the SQLite store. fail, when set, makes every call return it.
type memStore struct {
	mu     sync.Mutex
	next   int64
	scenes map[int64]memory.Scene
	tags   map[int64]string // event id → scene key
	fail   error
}

func newMemStore() *memStore {
	return &memStore{scenes: map[int64]memory.Scene{}, tags: map[int64]string{}}
}

func (m *memStore) Scenes(ctx context.Context) ([]memory.Scene, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	out := make([]memory.Scene, 0, len(m.scenes))
	for _, s := range m.scenes {
		s.Features = maps.Clone(s.Features)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (m *memStore) PutScene(ctx context.Context, s memory.Scene) (memory.Scene, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return memory.Scene{}, m.fail
	}
	if s.ID != 0 {
		if _, ok := m.scenes[s.ID]; !ok {
			return memory.Scene{}, fmt.Errorf("put scene %d: %w", s.ID, memory.ErrNotFound)
		}
	}
	for id, x := range m.scenes {
		if x.Key == s.Key && id != s.ID {
			return memory.Scene{}, fmt.Errorf("put scene %q: %w", s.Key, memory.ErrExists)
		}
	}
	if s.ID == 0 {
		m.next++
		s.ID = m.next
	}
	s.Features = maps.Clone(s.Features)
	m.scenes[s.ID] = s
	return s, nil
}

func (m *memStore) DeleteScene(ctx context.Context, id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	if _, ok := m.scenes[id]; !ok {
		return fmt.Errorf("delete scene %d: %w", id, memory.ErrNotFound)
	}
	delete(m.scenes, id)
	return nil
}

func (m *memStore) SetScene(ctx context.Context, ids []int64, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	for _, id := range ids {
		m.tags[id] = key
	}
	return nil
}

func (m *memStore) sceneOf(id int64) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tags[id]
}
