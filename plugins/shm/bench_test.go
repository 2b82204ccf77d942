package shm

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkTransfer moves one payload of 1–64 MiB to a real plugin process,
// three ways, in the same run:
//
//	memcpy  a plain copy of the same size in this process (the baseline)
//	arena   Put (one copy into the arena) + the reference as a JSON line over
//	        the plugin's stdin + a checked, in-place, read-only View in the
//	        plugin (it touches the first and last byte) + its answer + Release
//	json    the same bytes as base64 in a JSON line over the same pipe,
//	        decoded by the plugin, + its answer
//
// The machine is shared, so memory bandwidth drifts between sub-benchmarks:
// each ratio is measured on interleaved operations within one sub-benchmark.
// arena interleaves an untimed memcpy per iteration and reports its
// throughput (memcpy-MB/s) and the arena's share of it (pct-of-memcpy);
// json interleaves an untimed arena transfer and reports arena-MB/s and how
// many times faster the arena is (arena-x).
func BenchmarkTransfer(b *testing.B) {
	k, err := Create(Options{ArenaSize: 128 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { k.Close() })
	p := startPlugin(b, k)
	for _, mib := range []int{1, 4, 16, 64} {
		size := mib << 20
		data := payload(size, uint64(mib))
		dst := make([]byte, size)
		edges := [2]byte{data[0], data[size-1]}
		memcpy := func() time.Duration {
			t0 := time.Now()
			copy(dst, data)
			return time.Since(t0)
		}
		arena := func(b *testing.B) time.Duration {
			t0 := time.Now()
			ref, err := k.Put(data)
			if err != nil {
				b.Fatal(err)
			}
			if a := p.must(request{Op: "view", Ref: ref}); a.Edges != edges {
				b.Fatalf("the plugin saw edges %v, want %v", a.Edges, edges)
			}
			if err := k.Release(ref); err != nil {
				b.Fatal(err)
			}
			return time.Since(t0)
		}
		mbps := func(n int, d time.Duration) float64 { return float64(n) * float64(size) / d.Seconds() / 1e6 }
		b.Run(fmt.Sprintf("%dMiB/memcpy", mib), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				memcpy()
			}
		})
		b.Run(fmt.Sprintf("%dMiB/arena", mib), func(b *testing.B) {
			defer p.reportTo(b)()
			b.SetBytes(int64(size))
			var own, base time.Duration
			n := 0
			for b.Loop() {
				b.StopTimer()
				base += memcpy()
				b.StartTimer()
				own += arena(b)
				n++
			}
			b.ReportMetric(mbps(n, base), "memcpy-MB/s")
			b.ReportMetric(100*base.Seconds()/own.Seconds(), "pct-of-memcpy")
		})
		// arena-stream keeps two transfers in flight (one at 64 MiB), as a plugin streaming results does: the
		// reference of one crosses the pipe and is viewed while the next is copied in, so the
		// process wake-ups overlap the copies instead of adding to each.
		b.Run(fmt.Sprintf("%dMiB/arena-stream", mib), func(b *testing.B) {
			defer p.reportTo(b)()
			b.SetBytes(int64(size))
			window := max(1, min(2, (128<<20)/size-1)) // what the 128 MiB arena holds
			var inflight []Ref
			var own, base time.Duration
			n := 0
			drain := func() {
				var a reply
				if err := p.dec.Decode(&a); err != nil || a.Err != "" {
					b.Fatalf("plugin: %v %s", err, a.Err)
				}
				if a.Edges != edges {
					b.Fatalf("the plugin saw edges %v, want %v", a.Edges, edges)
				}
				if err := k.Release(inflight[0]); err != nil {
					b.Fatal(err)
				}
				inflight = inflight[1:]
			}
			for b.Loop() {
				b.StopTimer()
				base += memcpy()
				b.StartTimer()
				t0 := time.Now()
				ref, err := k.Put(data)
				if err != nil {
					b.Fatal(err)
				}
				if err := p.enc.Encode(request{Op: "view", Ref: ref}); err != nil {
					b.Fatal(err)
				}
				inflight = append(inflight, ref)
				if len(inflight) == window {
					drain()
				}
				own += time.Since(t0)
				n++
			}
			t0 := time.Now()
			for len(inflight) > 0 {
				drain()
			}
			own += time.Since(t0)
			b.ReportMetric(mbps(n, base), "memcpy-MB/s")
			b.ReportMetric(100*base.Seconds()/own.Seconds(), "pct-of-memcpy")
		})
		b.Run(fmt.Sprintf("%dMiB/json", mib), func(b *testing.B) {
			defer p.reportTo(b)()
			b.SetBytes(int64(size))
			var own, other time.Duration
			n := 0
			for b.Loop() {
				b.StopTimer()
				other += arena(b)
				b.StartTimer()
				t0 := time.Now()
				if a := p.must(request{Op: "json", Data: data}); a.Edges != edges {
					b.Fatalf("the plugin saw edges %v, want %v", a.Edges, edges)
				}
				own += time.Since(t0)
				n++
			}
			b.ReportMetric(mbps(n, other), "arena-MB/s")
			b.ReportMetric(own.Seconds()/other.Seconds(), "arena-x")
		})
	}
}

// BenchmarkRoundTrip measures a notification round trip with a real plugin
// process and reports its p50 and p99 (ns):
//
//	ring      the kernel publishes a 64-byte event and rings; the plugin,
//	          asleep in NextEvent, wakes and rings back (Notify); the kernel
//	          wakes from Wait
//	jsonping  a JSON ping line over the plugin's stdin and its answer
func BenchmarkRoundTrip(b *testing.B) {
	k, err := Create(Options{ArenaSize: pageSize})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { k.Close() })
	p := startPlugin(b, k)
	ev := make([]byte, 64)
	b.Run("ring", func(b *testing.B) {
		defer p.reportTo(b)()
		lat := make([]time.Duration, b.N)
		if err := p.enc.Encode(request{Op: "ring", N: b.N}); err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ResetTimer()
		for i := range b.N {
			t0 := time.Now()
			if k.Publish(ev) {
				b.Fatal("the plugin fell behind a strict ping-pong")
			}
			if _, err := k.Wait(ctx); err != nil {
				b.Fatal(err)
			}
			lat[i] = time.Since(t0)
		}
		b.StopTimer()
		var a reply
		if err := p.dec.Decode(&a); err != nil || a.Err != "" {
			b.Fatalf("plugin: %v %s", err, a.Err)
		}
		reportLatency(b, lat)
	})
	b.Run("jsonping", func(b *testing.B) {
		defer p.reportTo(b)()
		lat := make([]time.Duration, b.N)
		b.ResetTimer()
		for i := range b.N {
			t0 := time.Now()
			p.must(request{Op: "ping"})
			lat[i] = time.Since(t0)
		}
		b.StopTimer()
		reportLatency(b, lat)
	})
}

// reportLatency reports the median and 99th percentile of lat.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	q := func(f float64) float64 { return float64(lat[min(len(lat)-1, int(f*float64(len(lat))))].Nanoseconds()) }
	b.ReportMetric(q(0.50), "p50-ns")
	b.ReportMetric(q(0.99), "p99-ns")
}

// reportTo makes p report failures to a sub-benchmark until the returned
// function restores the parent.
func (p *plugin) reportTo(tb testing.TB) (restore func()) {
	parent := p.tb
	p.tb = tb
	return func() { p.tb = parent }
}
