//go:build !linux

package main

import (
	"bufio"
	"io"
	"os"
)

// isTerminal reports whether v is an *os.File open on a character device.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// readHidden reads one line; hiding the input is only implemented on Linux.
func readHidden(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err == io.EOF {
		err = nil
	}
	return line, err
}
