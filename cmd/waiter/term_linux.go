package main

import (
	"bufio"
	"io"
	"os"
	"os/signal"
	"syscall"
	"unsafe"
)

// termios reads the terminal attributes of fd; ok is false when fd is not a terminal.
func termios(fd uintptr) (t syscall.Termios, ok bool) {
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return t, e == 0
}

// isTerminal reports whether v is an *os.File open on a terminal.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return false
	}
	_, ok = termios(f.Fd())
	return ok
}

// readHidden reads one line from a terminal with echo off, restoring the terminal afterwards, on
// Ctrl-C too (which then exits 130).
func readHidden(r io.Reader) (string, error) {
	f, ok := r.(*os.File)
	if !ok {
		return bufio.NewReader(r).ReadString('\n')
	}
	fd := f.Fd()
	old, ok := termios(fd)
	if !ok {
		return bufio.NewReader(r).ReadString('\n')
	}
	quiet := old
	quiet.Lflag &^= syscall.ECHO
	quiet.Lflag |= syscall.ICANON | syscall.ISIG
	restore := func() {
		syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCSETS, uintptr(unsafe.Pointer(&old)))
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCSETS, uintptr(unsafe.Pointer(&quiet))); e != 0 {
		return bufio.NewReader(r).ReadString('\n')
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-sigs:
			restore()
			os.Stderr.WriteString("\n")
			os.Exit(130)
		case <-done:
		}
	}()
	line, err := bufio.NewReader(f).ReadString('\n')
	close(done)
	<-stopped
	signal.Stop(sigs)
	restore()
	if err == io.EOF {
		err = nil
	}
	return line, err
}
