// Command waiter is HologramAgent's terminal client: an interactive chat and the admin commands
// (status, providers, sessions, tools, history, the context window, memory search) against a
// running kernel, over its unix socket or remotely with a token and TLS. It links only
// kernel/client, never the kernel itself.
//
// Usage: waiter [--socket PATH | --remote URL --token-file F [--fingerprint SHA256] [--insecure]] COMMAND
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
