package security

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

// reapEvery is how often the reaper looks for orphans re-parented to the kernel that have
// exited. A zombie is reaped only when a sweep finds it a second time, so a child the process
// itself started and waits for (os/exec's Wait) is never taken from its waiter.
const reapEvery = 5 * time.Second

var subreaper struct {
	sync.Mutex
	users int
	stop  context.CancelFunc
	done  chan struct{}
}

// BecomeSubreaper makes this process a child subreaper (PR_SET_CHILD_SUBREAPER), so orphans of
// its descendants are re-parented to it, and starts the reaper that collects those orphans
// once they exit. It may be called by several kernels of one process; the returned func ends
// this caller's use (the reaper stops with the last one; the process stays a subreaper).
func BecomeSubreaper(log *slog.Logger) (func(), error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	subreaper.Lock()
	defer subreaper.Unlock()
	if subreaper.users == 0 {
		if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0, 0, 0, 0); errno != 0 {
			return nil, fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", errno)
		}
		ctx, cancel := context.WithCancel(context.Background())
		subreaper.stop, subreaper.done = cancel, make(chan struct{})
		go reap(ctx, log, subreaper.done)
	}
	subreaper.users++
	var once sync.Once
	return func() {
		once.Do(func() {
			subreaper.Lock()
			defer subreaper.Unlock()
			if subreaper.users--; subreaper.users == 0 {
				subreaper.stop()
				<-subreaper.done
			}
		})
	}, nil
}

// reap collects, every reapEvery, the zombie children that were already zombies at the sweep
// before.
func reap(ctx context.Context, log *slog.Logger, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(reapEvery)
	defer t.Stop()
	prev := map[int]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := zombieChildren(os.Getpid())
		for pid := range now {
			if !prev[pid] {
				continue
			}
			var ws syscall.WaitStatus
			if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); err == nil && got == pid {
				log.Debug("reaped an orphan of a plugin", "pid", pid, "status", ws.ExitStatus())
				delete(now, pid)
			}
		}
		prev = now
	}
}

// zombieChildren returns the pids of self's children that are zombies.
func zombieChildren(self int) map[int]bool {
	out := map[int]bool{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(raw)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) >= 2 && f[0] == "Z" && f[1] == strconv.Itoa(self) {
			out[pid] = true
		}
	}
	return out
}
