package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseInterleaved(t *testing.T) {
	cases := []struct {
		name string
		args []string
		json string
		pos  []string
	}{
		{"flag first", []string{"--json", "o.json", "f.json"}, "o.json", []string{"f.json"}},
		{"flag last", []string{"f.json", "--json", "o.json"}, "o.json", []string{"f.json"}},
		{"flag between", []string{"a", "-json=o", "b"}, "o", []string{"a", "b"}},
		{"no flags", []string{"a", "b"}, "", []string{"a", "b"}},
		{"double dash", []string{"a", "--", "--json", "x"}, "", []string{"a", "--json", "x"}},
		{"nothing", nil, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			j := fs.String("json", "", "")
			pos, err := parseInterleaved(fs, tc.args)
			if err != nil || *j != tc.json || !slices.Equal(pos, tc.pos) {
				t.Fatalf("parseInterleaved(%q) = %q, json %q, %v; want %q, json %q", tc.args, pos, *j, err, tc.pos, tc.json)
			}
		})
	}
}

// TestRunCommandLine checks the dispatch and both argument orders: a missing input file is a
// run-time failure (exit 1 naming the file) in either order, never a usage error (exit 2).
func TestRunCommandLine(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.json")
	out := filepath.Join(t.TempDir(), "out.json")
	cases := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"help", []string{"--help"}, 0, "locomo", ""},
		{"locomo file then flag", []string{"locomo", missing, "--json", out}, 1, "", "missing.json"},
		{"locomo flag then file", []string{"locomo", "--json", out, missing}, 1, "", "missing.json"},
		{"locomo without file", []string{"locomo", "--json", out}, 2, "", "usage"},
		{"locomo two files", []string{"locomo", missing, missing}, 2, "", "usage"},
		{"memory stray argument", []string{"memory", "x", "--events", "10"}, 2, "", "usage"},
		{"turns bad count", []string{"turns", "--turns", "0"}, 2, "", "usage"},
		{"turns no homed", []string{"turns", "--homed", filepath.Join(t.TempDir(), "nohomed"), "--turns", "1", "--starts", "1"}, 1, "", "nohomed"},
		{"unknown command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"unknown flag", []string{"locomo", "--bogus", missing}, 2, "", "bogus"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var o, e bytes.Buffer
			code := run(context.Background(), tc.args, &o, &e)
			if code != tc.code || !strings.Contains(o.String(), tc.out) || !strings.Contains(e.String(), tc.err) {
				t.Fatalf("exit %d (want %d)\nstdout %q (want %q)\nstderr %q (want %q)", code, tc.code, o.String(), tc.out, e.String(), tc.err)
			}
		})
	}
}
