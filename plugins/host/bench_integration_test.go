//go:build integration

package host

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// reportLatencies reports the p50 and p99 of ds as benchmark metrics.
func reportLatencies(b *testing.B, ds []time.Duration, unit string, scale time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2])/float64(scale), "p50-"+unit)
	b.ReportMetric(float64(ds[len(ds)*99/100])/float64(scale), "p99-"+unit)
}

// realEnv is a host on real time with a running fake plugin "p".
func realEnv(b *testing.B, mut func(*Options)) *env {
	e := newEnv(b, func(o *Options) {
		o.Clock, o.After = nil, nil
		o.PingInterval = 0
		if mut != nil {
			mut(o)
		}
	})
	e.add(b, mcpSpec(b, "p", "normal"))
	return e
}

// BenchmarkToolCallPlugin calls the echo tool through a real child process: CallFunc,
// tools/call over the pipes, the fake server, the response.
func BenchmarkToolCallPlugin(b *testing.B) {
	e := realEnv(b, nil)
	benchEchoCalls(b, e.reg.call("p.echo"))
}

// BenchmarkToolCallInProcess calls the same echo function directly, as an in-process tool: the
// same loop as BenchmarkToolCallPlugin, so the two differ only by the plugin.
func BenchmarkToolCallInProcess(b *testing.B) {
	benchEchoCalls(b, func(_ context.Context, args json.RawMessage) (string, error) { return echoTool(args) })
}

// benchEchoCalls times echo calls one by one and reports their p50/p99.
func benchEchoCalls(b *testing.B, call CallFunc) {
	args := json.RawMessage(`{"text":"hello"}`)
	ctx := context.Background()
	ds := make([]time.Duration, 0, 1<<16)
	for b.Loop() {
		t0 := time.Now()
		if s, err := call(ctx, args); err != nil || s != "hello" {
			b.Fatalf("%q %v", s, err)
		}
		ds = append(ds, time.Since(t0))
	}
	reportLatencies(b, ds, "µs", time.Microsecond)
}

// BenchmarkSpawnToReady measures Add to running: fork/exec, initialize, initialized, two pages
// of tools/list, eight tools attached.
func BenchmarkSpawnToReady(b *testing.B) {
	e := newEnv(b, func(o *Options) { o.Clock, o.After, o.PingInterval = nil, nil, 0 })
	ctx := context.Background()
	spec := mcpSpec(b, "p", "normal")
	var ds []time.Duration
	for b.Loop() {
		t0 := time.Now()
		st, err := e.h.Add(ctx, spec)
		d := time.Since(t0)
		if err != nil || st.State != StateRunning {
			b.Fatalf("%+v %v", st, err)
		}
		ds = append(ds, d)
		b.StopTimer()
		if _, err := e.h.Remove(ctx, "p"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	reportLatencies(b, ds, "ms", time.Millisecond)
}

// BenchmarkCrashToToolsBack measures from a crash (the crash tool exits the process during the
// call) to the tools being attached again, with a zero restart delay: the mechanism's own
// cost. In production add RestartDelays[0] (1 s).
func BenchmarkCrashToToolsBack(b *testing.B) {
	e := realEnv(b, func(o *Options) {
		o.RestartDelays = []time.Duration{0}
		o.BreakerCrashes = 1 << 30
	})
	added := make(chan string, 64)
	e.reg.mu.Lock()
	e.reg.added = added
	e.reg.mu.Unlock()
	ctx := context.Background()
	var ds []time.Duration
	for b.Loop() {
		for len(added) > 0 {
			<-added
		}
		crash := e.reg.call("p.crash")
		t0 := time.Now()
		if _, err := crash(ctx, nil); err == nil {
			b.Fatal("crash returned no error")
		}
		for n := 0; n < len(allTools); n++ {
			<-added
		}
		ds = append(ds, time.Since(t0))
	}
	reportLatencies(b, ds, "ms", time.Millisecond)
}
