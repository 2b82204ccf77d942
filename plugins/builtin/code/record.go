package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// recordBytes is what the record keeps of each stream.
const recordBytes = 64 << 10

// recorder appends every run to <data dir>/code/runs.jsonl: its session, language, code and
// result (the status and the head of each stream). The kernel's own record of the tool call
// holds the same call and what the model saw.
type recorder struct {
	mu   sync.Mutex
	path string
}

// runRecord is one line of runs.jsonl.
type runRecord struct {
	Time        time.Time `json:"time"`
	Session     string    `json:"session"`
	Language    string    `json:"language"`
	Code        string    `json:"code"`
	Status      string    `json:"status"`
	Exit        int       `json:"exit"`
	Setup       string    `json:"setup_error,omitempty"`
	TookMS      int64     `json:"took_ms"`
	Stdout      string    `json:"stdout,omitempty"`
	Stderr      string    `json:"stderr,omitempty"`
	StdoutBytes int64     `json:"stdout_bytes"`
	StderrBytes int64     `json:"stderr_bytes"`
	Files       []string  `json:"files,omitempty"`
}

// record appends a run; a failure to write is returned nowhere but the record is best
// effort: the tool's result and the kernel's record still carry it.
func (r *recorder) record(session, language, code string, o *outcome, files []string) error {
	head := func(c *capped) string {
		c.mu.Lock()
		defer c.mu.Unlock()
		return strings.ToValidUTF8(string(c.buf[:min(len(c.buf), recordBytes)]), "\uFFFD")
	}
	line, err := json.Marshal(runRecord{Time: time.Now().UTC(), Session: session, Language: language, Code: code, Status: o.status,
		Exit: o.exit, Setup: o.setup, TookMS: o.took.Milliseconds(), Stdout: head(&o.stdout), Stderr: head(&o.stderr),
		StdoutBytes: o.stdout.total, StderrBytes: o.stderr.total, Files: files})
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// newRecorder records in dir.
func newRecorder(dir string) *recorder { return &recorder{path: filepath.Join(dir, "runs.jsonl")} }
