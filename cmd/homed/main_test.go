package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRunCommandLine(t *testing.T) {
	env := func(k string) string {
		if k == "HOME" {
			return t.TempDir()
		}
		return ""
	}
	cases := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"version flag", []string{"--version"}, 0, "homed ", ""},
		{"version command", []string{"version"}, 0, "homed ", ""},
		{"help", []string{"--help"}, 0, "hologram-bench", ""},
		{"bench is gone", []string{"bench"}, 2, "", `unknown command "bench"`},
		{"unknown flag", []string{"--bogus"}, 2, "", "bogus"},
		{"unknown command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"half a TLS pair", []string{"--tls-cert", "/x.pem"}, 2, "", "tls-key"},
		{"bad listen address", []string{"--listen", "nonsense"}, 2, "", "listen"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var o, e bytes.Buffer
			code := run(context.Background(), tc.args, env, &o, &e)
			if code != tc.code || !strings.Contains(o.String(), tc.out) || !strings.Contains(e.String(), tc.err) {
				t.Fatalf("exit %d (want %d)\nstdout %q (want %q)\nstderr %q (want %q)", code, tc.code, o.String(), tc.out, e.String(), tc.err)
			}
		})
	}
}
