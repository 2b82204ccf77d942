package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hologramagent/hologram/kernel/config"
)

// One hologram per data dir (or remote kernel): the first one listens on a unix socket in the
// runtime dir; a second `hologram` tells it to show its window, `hologram --quick-chat` to
// toggle its quick chat, and exits. The protocol is one line each way: a command, then "ok"
// or "error: …".

// Commands of the instance socket.
const (
	cmdShow      = "show"
	cmdQuickChat = "quick-chat"
)

// instanceTimeout bounds one exchange over the instance socket.
const instanceTimeout = 5 * time.Second

// instanceSocket is the socket of the hologram for f's kernel: app-<hash>.sock beside the
// kernel's default socket ($XDG_RUNTIME_DIR/hologram or /tmp/hologram-<uid>), the hash of the
// data dir or the remote URL.
func instanceSocket(f flags, getenv func(string) string) string {
	key := "remote " + f.remote
	if f.remote == "" {
		dir := f.data
		if dir == "" {
			dir = config.Default(getenv).DataDir
		}
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		key = "data " + filepath.Clean(dir)
	}
	h := sha256.Sum256([]byte(key))
	return filepath.Join(filepath.Dir(config.DefaultSocket(getenv)), "app-"+hex.EncodeToString(h[:6])+".sock")
}

// signalRunning sends cmd to the hologram listening on path. running reports whether one
// answered; err what went wrong with it.
func signalRunning(path, cmd string) (running bool, err error) {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return false, nil // none (or a stale socket, which the next one replaces)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(instanceTimeout))
	if _, err := fmt.Fprintf(c, "%s\n", cmd); err != nil {
		return true, fmt.Errorf("the running hologram (%s): %w", path, err)
	}
	reply, err := bufio.NewReader(io.LimitReader(c, 512)).ReadString('\n')
	if err != nil {
		return true, fmt.Errorf("the running hologram (%s) did not answer: %w", path, err)
	}
	if reply = strings.TrimSpace(reply); reply != "ok" {
		return true, fmt.Errorf("the running hologram: %s", strings.TrimPrefix(reply, "error: "))
	}
	return true, nil
}

// errRunning: another hologram answers on the instance socket.
var errRunning = errors.New("another hologram runs for this data dir")

// instance is the listening side of the instance socket.
type instance struct {
	ln    *net.UnixListener
	wg    sync.WaitGroup
	close sync.Once
}

// listenInstance listens on path and calls handle (on its own goroutine) for each command from
// a process of the same user. A socket nobody answers on is stale and replaced; errRunning
// when somebody does.
func listenInstance(path string, handle func(cmd string) error, log *slog.Logger) (*instance, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("instance socket: %w", err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if errors.Is(err, syscall.EADDRINUSE) {
		if c, derr := net.DialTimeout("unix", path, time.Second); derr == nil {
			c.Close()
			return nil, errRunning
		}
		if rerr := os.Remove(path); rerr != nil {
			return nil, fmt.Errorf("instance socket: stale %s: %w", path, rerr)
		}
		ln, err = net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	}
	if err != nil {
		return nil, fmt.Errorf("instance socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("instance socket: %w", err)
	}
	in := &instance{ln: ln}
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		for {
			c, err := ln.AcceptUnix()
			if err != nil {
				if !errors.Is(err, net.ErrClosed) {
					log.Warn("instance socket", "err", err)
				}
				return
			}
			in.wg.Add(1)
			go func() {
				defer in.wg.Done()
				defer c.Close()
				serveInstance(c, handle, log)
			}()
		}
	}()
	return in, nil
}

// serveInstance answers one connection: one command line, one reply.
func serveInstance(c *net.UnixConn, handle func(cmd string) error, log *slog.Logger) {
	_ = c.SetDeadline(time.Now().Add(instanceTimeout))
	if uid, err := peerUID(c); err != nil || uid != os.Getuid() {
		log.Warn("instance socket: a connection from another user refused", "uid", uid, "err", err)
		return
	}
	line, err := bufio.NewReader(io.LimitReader(c, 256)).ReadString('\n')
	if err != nil {
		fmt.Fprintf(c, "error: want one command line (%s or %s)\n", cmdShow, cmdQuickChat)
		return
	}
	cmd := strings.TrimSpace(line)
	switch cmd {
	case cmdShow, cmdQuickChat:
		if err := handle(cmd); err != nil {
			fmt.Fprintf(c, "error: %v\n", err)
			return
		}
		fmt.Fprintln(c, "ok")
	default:
		fmt.Fprintf(c, "error: unknown command %q (want %s or %s)\n", clipCmd(cmd), cmdShow, cmdQuickChat)
	}
}

func clipCmd(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// peerUID is the uid of the process at the other end of c.
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid := -1
	var serr error
	if err := raw.Control(func(fd uintptr) {
		var cred *unix.Ucred
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if serr == nil {
			uid = int(cred.Uid)
		}
	}); err != nil {
		return -1, err
	}
	return uid, serr
}

// Close stops listening (the socket file goes) and waits for the connections being served.
// Later calls do nothing.
func (in *instance) Close() {
	in.close.Do(func() {
		in.ln.Close()
		in.wg.Wait()
	})
}
