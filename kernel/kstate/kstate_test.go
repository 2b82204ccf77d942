package kstate

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

func TestReadiness(t *testing.T) {
	tests := []struct {
		name      string
		declare   []string
		mark      []string
		wantReady map[string]bool
		wantSnap  Snapshot
	}{
		{
			name:      "declared is not ready",
			declare:   []string{"memory", "llm"},
			wantReady: map[string]bool{"memory": false, "llm": false},
			wantSnap:  Snapshot{Declared: []string{"memory", "llm"}, Ready: []string{}, Pending: []string{"memory", "llm"}},
		},
		{
			name:      "ready in readiness order",
			declare:   []string{"memory", "llm", "api"},
			mark:      []string{"api", "memory"},
			wantReady: map[string]bool{"memory": true, "llm": false, "api": true},
			wantSnap:  Snapshot{Declared: []string{"memory", "llm", "api"}, Ready: []string{"api", "memory"}, Pending: []string{"llm"}},
		},
		{
			name:      "marking an undeclared name declares it",
			mark:      []string{"jieba"},
			wantReady: map[string]bool{"jieba": true},
			wantSnap:  Snapshot{Declared: []string{"jieba"}, Ready: []string{"jieba"}, Pending: []string{}},
		},
		{
			name:      "repeated marks recorded once",
			declare:   []string{"a", "a"},
			mark:      []string{"a", "a", "a"},
			wantReady: map[string]bool{"a": true},
			wantSnap:  Snapshot{Declared: []string{"a"}, Ready: []string{"a"}, Pending: []string{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := New()
			s.Declare(tt.declare...)
			for _, m := range tt.mark {
				s.MarkReady(m)
			}
			for n, want := range tt.wantReady {
				if got := s.IsReady(n); got != want {
					t.Errorf("IsReady(%q) = %v, want %v", n, got, want)
				}
			}
			snap := s.Snapshot()
			if !slices.Equal(snap.Declared, tt.wantSnap.Declared) || !slices.Equal(snap.Ready, tt.wantSnap.Ready) ||
				!slices.Equal(snap.Pending, tt.wantSnap.Pending) || snap.Complete != tt.wantSnap.Complete {
				t.Errorf("Snapshot() = %+v, want %+v", snap, tt.wantSnap)
			}
		})
	}
}

func TestSnapshotIsCopy(t *testing.T) {
	s := New()
	s.Declare("a", "b")
	s.MarkReady("a")
	snap := s.Snapshot()
	snap.Declared[0] = "x"
	snap.Ready[0] = "x"
	snap.Pending[0] = "x"
	again := s.Snapshot()
	if !slices.Equal(again.Declared, []string{"a", "b"}) || !slices.Equal(again.Ready, []string{"a"}) || !slices.Equal(again.Pending, []string{"b"}) {
		t.Fatalf("state changed through a snapshot: %+v", again)
	}
}

func TestWaitReady(t *testing.T) {
	t.Run("already ready returns at once", func(t *testing.T) {
		s := New()
		s.MarkReady("a")
		if err := s.WaitReady(t.Context(), "a"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("no names returns at once", func(t *testing.T) {
		if err := New().WaitReady(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("unblocks when all become ready", func(t *testing.T) {
		s := New()
		s.Declare("a", "b")
		done := make(chan error, 1)
		go func() { done <- s.WaitReady(t.Context(), "a", "b") }()
		s.MarkReady("a")
		select {
		case err := <-done:
			t.Fatalf("returned with b pending: %v", err)
		default:
		}
		s.MarkReady("b")
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
	t.Run("context cancel", func(t *testing.T) {
		s := New()
		s.Declare("a", "b")
		s.MarkReady("a")
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := s.WaitReady(ctx, "a", "b")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

func TestComplete(t *testing.T) {
	s := New()
	if s.Complete() {
		t.Fatal("complete before MarkComplete")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.WaitComplete(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitComplete on cancelled ctx = %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.WaitComplete(t.Context()) }()
	s.MarkComplete()
	s.MarkComplete()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !s.Complete() || !s.Snapshot().Complete {
		t.Fatal("not complete after MarkComplete")
	}
}

func TestMount(t *testing.T) {
	type store struct{ name string }
	s := New()
	st := &store{name: "sqlite"}
	if err := s.Mount("store", st); err != nil {
		t.Fatal(err)
	}
	if err := s.Mount("store", st); !errors.Is(err, ErrAlreadyMounted) {
		t.Fatalf("second Mount = %v, want ErrAlreadyMounted", err)
	}
	tests := []struct {
		name   string
		get    func() (any, bool)
		wantOK bool
	}{
		{"Get mounted", func() (any, bool) { return s.Get("store") }, true},
		{"Get missing", func() (any, bool) { return s.Get("nope") }, false},
		{"GetAs right type", func() (any, bool) { return GetAs[*store](s, "store") }, true},
		{"GetAs wrong type", func() (any, bool) { return GetAs[string](s, "store") }, false},
		{"GetAs missing", func() (any, bool) { return GetAs[*store](s, "nope") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := tt.get()
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if ok && v.(*store) != st {
				t.Fatalf("got %v, want %v", v, st)
			}
		})
	}
}

func TestClose(t *testing.T) {
	s := New()
	var order []string
	errA := errors.New("a failed")
	errC := errors.New("c failed")
	s.OnClose("a", func() error { order = append(order, "a"); return errA })
	s.OnClose("b", func() error { order = append(order, "b"); return nil })
	s.OnClose("c", func() error { order = append(order, "c"); return errC })
	err := s.Close()
	if !errors.Is(err, errA) || !errors.Is(err, errC) {
		t.Fatalf("Close() = %v, want both errors joined", err)
	}
	if !slices.Equal(order, []string{"c", "b", "a"}) {
		t.Fatalf("order = %v, want reverse registration", order)
	}
	if err2 := s.Close(); !errors.Is(err2, errA) {
		t.Fatalf("second Close() = %v", err2)
	}
	if len(order) != 3 {
		t.Fatalf("closers ran again: %v", order)
	}
}

func TestStart(t *testing.T) {
	t.Run("runs after needs and marks ready", func(t *testing.T) {
		s := New()
		t.Cleanup(func() { _ = s.Close() })
		s.Declare("store")
		ran := make(chan struct{})
		s.Start(t.Context(), "window", []string{"store"}, func(ctx context.Context) error {
			close(ran)
			return nil
		})
		if !slices.Contains(s.Snapshot().Declared, "window") {
			t.Fatal("Start did not declare the name")
		}
		select {
		case <-ran:
			t.Fatal("ran before its need was ready")
		default:
		}
		s.MarkReady("store")
		if err := s.WaitReady(t.Context(), "window"); err != nil {
			t.Fatal(err)
		}
		<-ran
		if err := s.Err("window"); err != nil {
			t.Fatalf("Err = %v", err)
		}
		if got := s.Snapshot().Ready; !slices.Equal(got, []string{"store", "window"}) {
			t.Fatalf("Ready = %v", got)
		}
	})
	t.Run("records error", func(t *testing.T) {
		s := New()
		boom := errors.New("boom")
		s.Start(t.Context(), "jieba", nil, func(ctx context.Context) error { return boom })
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Err("jieba"); !errors.Is(err, boom) {
			t.Fatalf("Err = %v, want boom", err)
		}
		if s.IsReady("jieba") {
			t.Fatal("failed facility marked ready")
		}
	})
	t.Run("close cancels and waits", func(t *testing.T) {
		s := New()
		started := make(chan struct{})
		var mu sync.Mutex
		finished := false
		s.Start(t.Context(), "loop", nil, func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			mu.Lock()
			finished = true
			mu.Unlock()
			return ctx.Err()
		})
		<-started
		var closerSawFinished bool
		s.OnClose("after", func() error {
			mu.Lock()
			defer mu.Unlock()
			closerSawFinished = finished
			return nil
		})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if !finished || !closerSawFinished {
			t.Fatal("Close returned before the started goroutine finished")
		}
		if !errors.Is(s.Err("loop"), context.Canceled) {
			t.Fatalf("Err = %v, want context.Canceled", s.Err("loop"))
		}
	})
	t.Run("close while waiting for needs", func(t *testing.T) {
		s := New()
		s.Start(t.Context(), "never", []string{"missing"}, func(ctx context.Context) error {
			t.Error("fn ran without its need")
			return nil
		})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(s.Err("never"), context.Canceled) {
			t.Fatalf("Err = %v, want context.Canceled", s.Err("never"))
		}
	})
	t.Run("start after close", func(t *testing.T) {
		s := New()
		_ = s.Close()
		s.Start(t.Context(), "late", nil, func(ctx context.Context) error {
			t.Error("fn ran after Close")
			return nil
		})
		if !errors.Is(s.Err("late"), ErrClosed) {
			t.Fatalf("Err = %v, want ErrClosed", s.Err("late"))
		}
	})
}

func TestConcurrentMarks(t *testing.T) {
	s := New()
	names := []string{"a", "b", "c", "d", "e", "f"}
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Go(func() {
			s.MarkReady(n)
			s.MarkReady(n)
		})
	}
	if err := s.WaitReady(t.Context(), names...); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if got := s.Snapshot(); len(got.Ready) != len(names) || len(got.Pending) != 0 {
		t.Fatalf("snapshot = %+v", got)
	}
}
