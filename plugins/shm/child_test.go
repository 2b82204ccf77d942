package shm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// helperEnv makes the test binary a plugin (helper-process pattern): TestMain
// runs runPlugin instead of the tests.
const helperEnv = "HOLOGRAM_SHM_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "plugin" {
		if err := runPlugin(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "plugin:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// request is one command to the helper plugin, one JSON object per line.
type request struct {
	Op   string `json:"op"`
	Ref  Ref    `json:"ref"`
	N    int    `json:"n,omitempty"`
	Seed uint64 `json:"seed,omitempty"`
	Data []byte `json:"data,omitempty"` // base64 in JSON
}

// reply is the helper plugin's answer.
type reply struct {
	Err    string   `json:"err,omitempty"`
	Sum    string   `json:"sum,omitempty"`    // hex sha256
	Ref    Ref      `json:"ref"`              // put
	Edges  [2]byte  `json:"edges"`            // first and last byte seen (view, json)
	Events []string `json:"events,omitempty"` // events
	Lost   uint64   `json:"lost,omitempty"`
	Errs   []string `json:"errs,omitempty"` // attack results
}

// payload returns n deterministic pseudo-random bytes.
func payload(n int, seed uint64) []byte {
	b := make([]byte, n)
	fill(b, seed)
	return b
}

// fill fills b with a deterministic pseudo-random stream.
func fill(b []byte, seed uint64) {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	c := rand.NewChaCha8(s)
	c.Read(b)
}

// runPlugin serves requests on in/out with the region passed as fds 3, 4, 5.
func runPlugin(in io.Reader, out io.Writer) error {
	r, err := Open()
	if err != nil {
		return err
	}
	defer r.Close()
	dec, enc := json.NewDecoder(in), json.NewEncoder(out)
	var scribbling sync.WaitGroup
	stop := make(chan struct{})
	for {
		var q request
		if err := dec.Decode(&q); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		var a reply
		switch q.Op {
		case "sha": // hash a kernel payload in place
			v, err := r.View(q.Ref)
			if err != nil {
				a.Err = err.Error()
				break
			}
			sum := sha256.Sum256(v)
			a.Sum = hex.EncodeToString(sum[:])
		case "put": // write a reply payload in place
			ref, buf, err := r.Alloc(q.N)
			if err != nil {
				a.Err = err.Error()
				break
			}
			fill(buf, q.Seed)
			sum := sha256.Sum256(buf)
			a.Ref, a.Sum = ref, hex.EncodeToString(sum[:])
		case "release":
			if err := r.Release(q.Ref); err != nil {
				a.Err = err.Error()
			}
		case "view": // benchmark: a checked view, touched at both ends
			v, err := r.View(q.Ref)
			if err != nil {
				a.Err = err.Error()
				break
			}
			a.Edges = [2]byte{v[0], v[len(v)-1]}
		case "json": // benchmark baseline: the bytes inline
			a.Edges = [2]byte{q.Data[0], q.Data[len(q.Data)-1]}
		case "ping":
		case "events": // read n events
			for range q.N {
				ev, lost, err := r.NextEvent(context.Background())
				if err != nil {
					a.Err = err.Error()
					break
				}
				a.Events = append(a.Events, string(ev))
				a.Lost += lost
			}
		case "ring": // benchmark: n round trips, answered with Notify
			for range q.N {
				if _, _, err := r.NextEvent(context.Background()); err != nil {
					a.Err = err.Error()
					break
				}
				if err := r.Notify(); err != nil {
					a.Err = err.Error()
					break
				}
			}
		case "attack": // try to break the kernel through the region's files
			a.Errs = attack(r)
		case "scribble": // overwrite the whole region once, headers included
			fill(r.mem, q.Seed)
		case "scribble-arena": // overwrite the plugin→kernel arena only
			fill(r.mem[r.lay.p2kOff:], q.Seed)
		case "scribble-start": // keep overwriting everything until scribble-stop
			scribbling.Add(1)
			go func() {
				defer scribbling.Done()
				seed := q.Seed
				for {
					select {
					case <-stop:
						return
					default:
					}
					seed++
					fill(r.mem, seed)
				}
			}()
		case "flip-start": // keep flipping the block header of q.Ref between valid and garbage
			scribbling.Add(1)
			started := make(chan struct{})
			go func() {
				defer scribbling.Done()
				close(started)
				h := r.mem[q.Ref.Offset-blockHeader : q.Ref.Offset]
				rng := rand.New(rand.NewPCG(q.Seed, 0))
				for {
					select {
					case <-stop:
						return
					default:
					}
					binary.LittleEndian.PutUint32(h[0:], blockMagic)
					binary.LittleEndian.PutUint32(h[4:], q.Ref.Gen)
					binary.LittleEndian.PutUint64(h[8:], q.Ref.Length)
					binary.LittleEndian.PutUint64(h[8:], rng.Uint64())
					binary.LittleEndian.PutUint32(h[4:], rng.Uint32())
					binary.LittleEndian.PutUint64(h[8:], q.Ref.Length)
					binary.LittleEndian.PutUint32(h[4:], q.Ref.Gen)
					binary.LittleEndian.PutUint32(h[0:], rng.Uint32())
				}
			}()
			<-started
		case "scribble-stop":
			close(stop)
			scribbling.Wait()
			stop = make(chan struct{})
		default:
			a.Err = "unknown op " + q.Op
		}
		if err := enc.Encode(a); err != nil {
			return err
		}
	}
}

// attack tries what a hostile plugin could do with its fds and reports each
// result: all must fail or be harmless to the kernel.
func attack(r *Region) []string {
	var res []string
	note := func(what string, err error) { res = append(res, fmt.Sprintf("%s: %v", what, err)) }
	note("truncate", unix.Ftruncate(RegionFD, 0))
	note("grow", unix.Ftruncate(RegionFD, int64(r.lay.size)*2))
	_, err := unix.FcntlInt(RegionFD, unix.F_ADD_SEALS, unix.F_SEAL_WRITE)
	note("seal", err)
	// A hole reads back as zeros: harmless, but it must not shrink the file.
	note("punch", unix.Fallocate(RegionFD, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, int64(r.lay.p2kOff), pageSize))
	// Make our doorbell ends blocking and fill the one the kernel reads.
	note("block in", unix.SetNonblock(DoorbellInFD, false))
	note("block out", unix.SetNonblock(DoorbellOutFD, false))
	unix.SetNonblock(DoorbellOutFD, true)
	n := 0
	for {
		if _, err := unix.Write(DoorbellOutFD, make([]byte, 4096)); err != nil {
			break
		}
		n++
	}
	note("fill", fmt.Errorf("%d pages", n))
	_, err = unix.Write(DoorbellInFD, []byte{1})
	note("write kernel's doorbell", err)
	// Back to what our own region code expects.
	unix.SetNonblock(DoorbellInFD, true)
	unix.SetNonblock(DoorbellOutFD, true)
	return res
}

// plugin is a helper plugin process driven by the test.
type plugin struct {
	tb     testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	enc    *json.Encoder
	dec    *json.Decoder
	stderr bytes.Buffer
}

// startPlugin runs the test binary as the plugin of k.
func startPlugin(tb testing.TB, k *Region) *plugin {
	tb.Helper()
	p := &plugin{tb: tb, cmd: exec.Command(os.Args[0], "-test.run=^$")}
	p.cmd.Env = append(os.Environ(), helperEnv+"=plugin")
	p.cmd.ExtraFiles = k.ChildFiles()
	p.cmd.Stderr = &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		tb.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p.enc, p.dec = json.NewEncoder(p.stdin), json.NewDecoder(stdout)
	tb.Cleanup(func() { p.stop() })
	return p
}

// stop ends the plugin: end of input, or a kill if the test failed (it may be
// blocked), and reports a plugin failure.
func (p *plugin) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	if p.tb.Failed() {
		p.cmd.Process.Kill()
	}
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil && !p.tb.Failed() {
		p.tb.Errorf("plugin: %v\n%s", err, p.stderr.Bytes())
	}
}

// call sends q and returns the answer; a transport error fails the test.
func (p *plugin) call(q request) reply {
	p.tb.Helper()
	if err := p.enc.Encode(q); err != nil {
		p.tb.Fatalf("send %s: %v\n%s", q.Op, err, p.stderr.Bytes())
	}
	var a reply
	if err := p.dec.Decode(&a); err != nil {
		p.tb.Fatalf("answer to %s: %v\n%s", q.Op, err, p.stderr.Bytes())
	}
	return a
}

// must is call for requests that must succeed.
func (p *plugin) must(q request) reply {
	p.tb.Helper()
	a := p.call(q)
	if a.Err != "" {
		p.tb.Fatalf("%s: %s", q.Op, a.Err)
	}
	return a
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestChildProcess moves payloads both ways and events through a real plugin
// process that received the region as fds 3, 4 and 5.
func TestChildProcess(t *testing.T) {
	k := newKernel(t, Options{ArenaSize: 8 << 20, RingSlots: 16, SlotSize: 256})
	p := startPlugin(t, k)

	// Kernel → plugin: 4 MiB by reference, hashed in place by the plugin.
	data := payload(4<<20, 1)
	ref, err := k.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	if a := p.must(request{Op: "sha", Ref: ref}); a.Sum != sum(data) {
		t.Fatalf("plugin hashed %s, want %s", a.Sum, sum(data))
	}
	if err := k.Release(ref); err != nil { // the answer acknowledged it
		t.Fatal(err)
	}

	// Plugin → kernel: 4 MiB written in place by the plugin.
	a := p.must(request{Op: "put", N: 4 << 20, Seed: 2})
	got, err := k.Copy(a.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, payload(4<<20, 2)) || a.Sum != sum(got) {
		t.Fatal("the plugin's reply payload arrived damaged")
	}
	p.must(request{Op: "release", Ref: a.Ref})
	if a := p.call(request{Op: "release", Ref: a.Ref}); a.Err == "" {
		t.Fatal("the plugin released its reply twice")
	}

	// A reference the plugin gets wrong is refused with a clear error.
	if a := p.call(request{Op: "sha", Ref: Ref{Offset: k.lay.p2kOff + blockHeader, Length: 10, Gen: 1}}); a.Err == "" {
		t.Fatal("the plugin viewed its own arena as the kernel's")
	}

	// Events: in order, then lapped.
	for i := range 3 {
		k.Publish(fmt.Appendf(nil, "event %d", i))
	}
	if a := p.must(request{Op: "events", N: 3}); fmt.Sprint(a.Events) != "[event 0 event 1 event 2]" || a.Lost != 0 {
		t.Fatalf("events %q, lost %d", a.Events, a.Lost)
	}
	drops := 0
	for i := range 40 {
		if k.Publish(fmt.Appendf(nil, "burst %d", i)) {
			drops++
		}
	}
	a = p.must(request{Op: "events", N: 16})
	if drops != 24 || a.Lost != 24 || a.Events[0] != "burst 24" || a.Events[15] != "burst 39" {
		t.Fatalf("kernel dropped %d; plugin lost %d and read %q", drops, a.Lost, a.Events)
	}

	// The plugin's attacks on the files fail or stay harmless.
	a = p.must(request{Op: "attack"})
	want := []string{"truncate: operation not permitted", "grow: operation not permitted", "seal: operation not permitted"}
	for i, w := range want {
		if a.Errs[i] != w {
			t.Fatalf("attack %d: %q, want %q (all: %q)", i, a.Errs[i], w, a.Errs)
		}
	}
	t.Logf("attacks: %q", a.Errs)
	for i := range 1000 { // the plugin made its doorbell ends blocking: Publish still never blocks
		k.Publish(fmt.Appendf(nil, "after attack %d", i))
	}
	if n, err := k.Wait(context.Background()); err != nil || n < 4096 {
		t.Fatalf("Wait after the plugin filled the doorbell: %d, %v", n, err)
	}
	if err := k.Check(); err != nil {
		t.Fatal(err)
	}
	a = p.must(request{Op: "events", N: 1})
	if a.Events[0] != "after attack 984" {
		t.Fatalf("after the attack the plugin read %q", a.Events)
	}
}

// TestChildScribble lets a real plugin process write garbage over its region.
// The kernel keeps answering with errors: it never panics, never reads outside
// the mapping, and its own allocator is untouched.
func TestChildScribble(t *testing.T) {
	k := newKernel(t, Options{ArenaSize: 1 << 20, RingSlots: 16, SlotSize: 128})
	p := startPlugin(t, k)
	kernelRef, err := k.Put(payload(100_000, 3))
	if err != nil {
		t.Fatal(err)
	}
	var refs []Ref
	for i := range 4 {
		a := p.must(request{Op: "put", N: 10_000 * (i + 1), Seed: uint64(i)})
		if _, err := k.View(a.Ref); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, a.Ref)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	arena, arenaSize := k.lay.p2kOff, k.lay.p2kSize
	randomRef := func() Ref {
		switch rng.IntN(4) {
		case 0:
			return refs[rng.IntN(len(refs))]
		case 1: // aligned, inside the arena
			off := arena + blockHeader + uint64(rng.IntN(int(arenaSize/blockAlign)))*blockAlign
			return Ref{Offset: off, Length: uint64(rng.IntN(1 << 16)), Gen: k.Generation()}
		case 2:
			return Ref{Offset: rng.Uint64(), Length: rng.Uint64(), Gen: rng.Uint32()}
		default:
			return Ref{Offset: arena + rng.Uint64N(arenaSize+4096), Length: rng.Uint64N(arenaSize), Gen: k.Generation()}
		}
	}
	// probe uses the kernel side with random references and counts successes;
	// every success must lie inside the plugin's arena.
	probe := func(n int) (ok int) {
		t.Helper()
		for range n {
			ref := randomRef()
			v, err := k.View(ref)
			if err == nil {
				ok++
				if uint64(len(v)) != ref.Length || !inside(k, v, arena, arenaSize) {
					t.Fatalf("View(%v) returned %d bytes outside the arena", ref, len(v))
				}
			} else if !errors.Is(err, ErrBadRef) && !errors.Is(err, ErrStale) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("View(%v): unexpected error %v", ref, err)
			}
			if c, err := k.Copy(ref); err == nil && uint64(len(c)) != ref.Length {
				t.Fatalf("Copy(%v) returned %d bytes", ref, len(c))
			}
			k.Publish([]byte("event"))
		}
		return ok
	}

	// 1. Garbage over the plugin's arena: every block header is gone.
	p.must(request{Op: "scribble-arena", Seed: 7})
	for _, ref := range refs {
		if _, err := k.View(ref); !errors.Is(err, ErrBadRef) {
			t.Fatalf("View(%v) after the arena was overwritten: %v", ref, err)
		}
	}
	if ok := probe(2000); ok != 0 {
		t.Fatalf("%d random references resolved in a garbage arena", ok)
	}

	// 2. Garbage over everything, headers included.
	p.must(request{Op: "scribble", Seed: 8})
	if err := k.Check(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Check after the header was overwritten: %v", err)
	}
	if ok := probe(2000); ok != 0 {
		t.Fatalf("%d references resolved with a garbage header", ok)
	}
	for range 3 * 16 { // the reader position is garbage: drops are counted, nothing blocks
		k.Publish([]byte("into garbage"))
	}

	// 3. Garbage written continuously while the kernel reads (TOCTOU).
	p.must(request{Op: "scribble-start", Seed: 9})
	probe(5000)
	for range 100 {
		if err := k.Check(); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Check during scribbling: %v", err)
		}
	}
	p.must(request{Op: "scribble-stop"})

	// The kernel's own allocator lives in private memory: still exact.
	if s := k.Stats(); s.Allocations != 1 || s.InUse != int64(blockSize(100_000)) {
		t.Fatalf("kernel stats after scribbling: %+v", s)
	}
	if err := k.Release(kernelRef); err != nil {
		t.Fatal(err)
	}
	if s := k.Stats(); s.Allocations != 0 || s.InUse != 0 || s.Refused == 0 || s.Dropped == 0 {
		t.Fatalf("kernel stats: %+v", s)
	}

	// 4. A block header flipping between valid and garbage while the kernel
	// checks it: each View sees one consistent snapshot, never a mix that
	// passes the checks with another length.
	p.stop()
	if err := k.Reset(); err != nil {
		t.Fatal(err)
	}
	p = startPlugin(t, k)
	a := p.must(request{Op: "put", N: 5000, Seed: 1})
	p.must(request{Op: "flip-start", Ref: a.Ref, Seed: 10})
	var good, bad int
	for range 20000 {
		v, err := k.View(a.Ref)
		switch {
		case err == nil:
			good++
			if len(v) != 5000 || !inside(k, v, arena, arenaSize) {
				t.Fatalf("View during flipping returned %d bytes", len(v))
			}
		case errors.Is(err, ErrBadRef):
			bad++
		default:
			t.Fatalf("View during flipping: %v", err)
		}
	}
	p.must(request{Op: "scribble-stop"})
	t.Logf("views while the block header flipped: %d valid, %d refused", good, bad)

	// 5. Reset heals the header; the plugin's old references are stale, and a
	// fresh plugin works again.
	p.must(request{Op: "scribble", Seed: 11})
	p.stop()
	if err := k.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := k.Check(); err != nil {
		t.Fatal(err)
	}
	for _, ref := range append(refs, a.Ref) {
		if _, err := k.View(ref); !errors.Is(err, ErrStale) {
			t.Fatalf("View(%v) after Reset: %v", ref, err)
		}
	}
	p2 := startPlugin(t, k)
	k.Publish([]byte("hello"))
	if a := p2.must(request{Op: "events", N: 1}); a.Events[0] != "hello" || a.Lost != 0 {
		t.Fatalf("after Reset the plugin read %q, lost %d", a.Events, a.Lost)
	}
	a = p2.must(request{Op: "put", N: 1000, Seed: 5})
	if got, err := k.Copy(a.Ref); err != nil || !bytes.Equal(got, payload(1000, 5)) {
		t.Fatalf("after Reset: %v", err)
	}
}
