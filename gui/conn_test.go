package gui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// TestConnStatesOverHTTP drives Conn against the fake kernel through the real HTTP client, so
// each state comes from the error the client really returns.
func TestConnStatesOverHTTP(t *testing.T) {
	test.NewTempApp(t)
	fake := clienttest.New()
	fake.Token = "right"
	tcp := httptest.NewServer(fake)
	t.Cleanup(tcp.Close)
	tlsSrv := httptest.NewTLSServer(fake)
	t.Cleanup(tlsSrv.Close)
	sum := sha256.Sum256(tlsSrv.Certificate().Raw)
	goodPin := hex.EncodeToString(sum[:])
	open := clienttest.New()
	sock := clienttest.ServeUnix(t, open)

	refused := func() string { // a loopback port nobody listens on
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return "http://" + addr
	}()

	tests := []struct {
		name string
		opts client.Options
		want ConnState
		in   string // the banner contains this
	}{
		{"socket", client.Options{Socket: sock}, ConnConnected, ""},
		{"token", client.Options{URL: tcp.URL, Token: "right"}, ConnConnected, ""},
		{"pinned", client.Options{URL: tlsSrv.URL, Token: "right", Fingerprint: goodPin}, ConnConnected, ""},
		{"wrong token", client.Options{URL: tcp.URL, Token: "wrong"}, ConnWrongToken, "refused the token"},
		{"no token", client.Options{URL: tcp.URL}, ConnWrongToken, "refused the token"},
		{"wrong fingerprint", client.Options{URL: tlsSrv.URL, Token: "right", Fingerprint: strings.Repeat("ab", 32)}, ConnWrongFingerprint, "fingerprint"},
		{"untrusted certificate", client.Options{URL: tlsSrv.URL, Token: "right"}, ConnWrongFingerprint, "certificate"},
		{"refused", client.Options{URL: refused, Token: "right"}, ConnGone, "Cannot reach"},
		{"no socket", client.Options{Socket: filepath.Join(t.TempDir(), "none.sock")}, ConnGone, "Cannot reach"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc, err := client.Dial(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close()
			c := NewConn(svc, ConnOptions{Target: "KERNEL"})
			delay := c.Check(context.Background())
			state, detail := c.State()
			if state != tc.want {
				t.Fatalf("state %v (%s), want %v", state, detail, tc.want)
			}
			banner, _ := c.Banner.Get()
			if tc.in == "" {
				if banner != "" || delay != DefaultConnInterval {
					t.Fatalf("connected: banner %q, next check in %v", banner, delay)
				}
				if st, ok := c.LastStatus(); !ok || st.PID == 0 {
					t.Fatalf("no status after a good check: %+v", st)
				}
				return
			}
			if !strings.Contains(banner, tc.in) || !strings.Contains(banner, "KERNEL") || !strings.Contains(banner, "Retrying in 1s") {
				t.Fatalf("banner %q lacks %q, the target or the retry", banner, tc.in)
			}
			if delay != DefaultConnMinBackoff {
				t.Fatalf("first retry after %v, want %v", delay, DefaultConnMinBackoff)
			}
		})
	}
}

// kernelDouble answers Health and Status as scripted; Conn calls nothing else.
type kernelDouble struct {
	client.Service // nil: any other call panics

	mu     sync.Mutex
	err    error
	status client.Status
	calls  int
}

func (k *kernelDouble) set(err error, pid int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.err = err
	k.status = client.Status{PID: pid, Started: time.Unix(int64(pid), 0)}
}

func (k *kernelDouble) Health(context.Context) (client.Health, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls++
	return client.Health{OK: k.err == nil}, k.err
}

func (k *kernelDouble) Status(context.Context) (client.Status, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.status, k.err
}

func (k *kernelDouble) Sessions(context.Context) ([]client.Session, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return nil, k.err
}

// fakeClock is Conn's After: each wait is announced on waits and ends when the test ticks.
type fakeClock struct {
	waits chan time.Duration
	tick  chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{waits: make(chan time.Duration), tick: make(chan time.Time)}
}

func (f *fakeClock) After(d time.Duration) <-chan time.Time {
	f.waits <- d
	return f.tick
}

// next returns the delay Run asked for, failing after a generous bound (no timing asserted).
func (f *fakeClock) next(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-f.waits:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not wait")
		return 0
	}
}

func runConn(t *testing.T, c *Conn) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestConnBackoffAndRecovery: failures back off 1 s, 2 s, 4 s … capped at 30 s, and the first
// good answer goes back to the 5 s interval and clears the banner.
func TestConnBackoffAndRecovery(t *testing.T) {
	test.NewTempApp(t)
	k := &kernelDouble{}
	k.set(fmt.Errorf("get health: %w", client.ErrUnavailable), 7)
	clock := newFakeClock()
	var changes []string
	var mu sync.Mutex
	c := NewConn(k, ConnOptions{After: clock.After, OnChange: func(s ConnState, b string) {
		mu.Lock()
		changes = append(changes, s.String())
		mu.Unlock()
	}})
	runConn(t, c)
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30}
	for i, w := range want {
		if d := clock.next(t); d != w*time.Second {
			t.Fatalf("retry %d after %v, want %v", i, d, w*time.Second)
		}
		if s, _ := c.State(); s != ConnGone {
			t.Fatalf("state %v while the kernel is gone", s)
		}
		if i == len(want)-1 {
			k.set(nil, 7)
		}
		clock.tick <- time.Time{}
	}
	if d := clock.next(t); d != DefaultConnInterval {
		t.Fatalf("after recovery the next check is in %v, want %v", d, DefaultConnInterval)
	}
	if s, _ := c.State(); s != ConnConnected {
		t.Fatalf("state %v after recovery", s)
	}
	if b, _ := c.Banner.Get(); b != "" {
		t.Fatalf("banner %q after recovery", b)
	}
	// A failure after recovery starts the backoff again at 1 s.
	k.set(client.ErrUnauthorized, 7)
	clock.tick <- time.Time{}
	if d := clock.next(t); d != time.Second {
		t.Fatalf("backoff did not restart: %v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	// Every check changes the banner while gone (its countdown), so states repeat; what matters
	// is the order of distinct states.
	var distinct []string
	for _, s := range changes {
		if len(distinct) == 0 || distinct[len(distinct)-1] != s {
			distinct = append(distinct, s)
		}
	}
	if got := strings.Join(distinct, ","); got != "gone,connected,wrong_token" {
		t.Fatalf("state changes %s", got)
	}
}

// TestConnRestart: a new pid or start time is "restarted" once, then "connected".
func TestConnRestart(t *testing.T) {
	test.NewTempApp(t)
	k := &kernelDouble{}
	k.set(nil, 100)
	c := NewConn(k, ConnOptions{Target: "KERNEL"})
	ctx := context.Background()
	steps := []struct {
		pid  int
		err  error
		want ConnState
	}{
		{100, nil, ConnConnected},
		{100, nil, ConnConnected},
		{200, nil, ConnRestarted},
		{200, nil, ConnConnected},
		{200, client.ErrUnavailable, ConnGone},
		{300, nil, ConnRestarted}, // back after a gap, as another process
		{300, nil, ConnConnected},
	}
	for i, s := range steps {
		k.set(s.err, s.pid)
		c.Check(ctx)
		got, _ := c.State()
		if got != s.want {
			t.Fatalf("step %d: %v, want %v", i, got, s.want)
		}
		b, _ := c.Banner.Get()
		if (s.want == ConnRestarted) != strings.Contains(b, "restarted") {
			t.Fatalf("step %d: banner %q", i, b)
		}
	}
}

// TestConnReportChecksAtOnce: a failed call of the app's HTTP client (its OnError hook, through
// a Reporter) wakes the watcher before its 5 s interval runs out; the kernel's own answers
// (not found…) do not.
func TestConnReportChecksAtOnce(t *testing.T) {
	test.NewTempApp(t)
	k := &kernelDouble{}
	k.set(nil, 1)
	clock := newFakeClock()
	c := NewConn(k, ConnOptions{After: clock.After})
	rep := &Reporter{}
	rep.Report(errors.New("before attaching: dropped")) // the zero Reporter drops reports
	rep.attach(c)
	runConn(t, c)
	if d := clock.next(t); d != DefaultConnInterval {
		t.Fatalf("first wait %v", d)
	}
	// A kernel that answers 404: the call's own failure.
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(404)
		w.Write([]byte(`{"error":{"status":404,"message":"unknown session"}}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	answering, err := client.Dial(client.Options{URL: srv.URL, Token: "t0ken-for-the-test", OnError: rep.Report})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := answering.History(context.Background(), "nope", 1); err == nil {
		t.Fatal("no error from the 404")
	}
	select {
	case d := <-clock.waits:
		t.Fatalf("a not-found answer woke the watcher (next wait %v)", d)
	default:
	}
	// A kernel that is gone: no socket.
	k.set(fmt.Errorf("post chat: %w", client.ErrUnavailable), 1)
	gone, err := client.Dial(client.Options{Socket: filepath.Join(t.TempDir(), "none.sock"), OnError: rep.Report})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gone.Sessions(context.Background()); !errors.Is(err, client.ErrUnavailable) {
		t.Fatalf("a missing socket: %v", err)
	}
	if d := clock.next(t); d != DefaultConnMinBackoff {
		t.Fatalf("after the report the next wait is %v", d)
	}
	if s, _ := c.State(); s != ConnGone {
		t.Fatalf("state %v after the reported failure", s)
	}
}

func TestClassifyError(t *testing.T) {
	tests := []struct {
		err  error
		want ConnState
		conn bool
	}{
		{nil, ConnConnected, false},
		{context.Canceled, ConnConnected, false},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), ConnGone, true},
		{&client.Error{Status: 401, Message: "no"}, ConnWrongToken, true},
		{&client.Error{Status: 404, Message: "no"}, ConnConnected, false},
		{&client.Error{Status: 503, Message: "warming up"}, ConnConnected, false},
		{fmt.Errorf("tls: %w: server presented sha256:aa, pinned sha256:bb", client.ErrFingerprint), ConnWrongFingerprint, true},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, ConnGone, true},
	}
	for _, tc := range tests {
		s, conn := ClassifyError(tc.err)
		if s != tc.want || conn != tc.conn {
			t.Errorf("%v: %v %v, want %v %v", tc.err, s, conn, tc.want, tc.conn)
		}
	}
}
