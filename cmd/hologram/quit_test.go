package main

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

func TestWatchQuit(t *testing.T) {
	tests := []struct {
		name     string
		signal   bool // a quit signal arrived
		loopEnds bool // the UI loop returned
		grace    time.Duration
		wantExit bool
	}{
		{name: "loop ends without a signal", loopEnds: true, grace: time.Hour},
		{name: "loop ends after the signal", signal: true, loopEnds: true, grace: time.Hour},
		{name: "loop stalls after the signal", signal: true, grace: time.Millisecond, wantExit: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			quitting, runDone := make(chan struct{}), make(chan struct{})
			if tt.signal {
				close(quitting)
			}
			if tt.loopEnds {
				close(runDone)
			}
			shutdowns, exits := 0, []int{}
			shutdown := sync.OnceFunc(func() { shutdowns++ })
			watchQuit(quitting, runDone, tt.grace, shutdown, slog.New(slog.NewTextHandler(io.Discard, nil)), func(code int) { exits = append(exits, code) })
			shutdown() // what run does after the loop returns: never a second shutdown
			if shutdowns != 1 {
				t.Errorf("shutdown ran %d times, want once", shutdowns)
			}
			if got := len(exits) > 0; got != tt.wantExit {
				t.Fatalf("exit called %v, want %v", exits, tt.wantExit)
			}
			if tt.wantExit && exits[0] != 0 {
				t.Errorf("exit code %d, want 0 (a quit asked for)", exits[0])
			}
		})
	}
}
