package api

import (
	"net"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClipEchoes(t *testing.T) {
	long := strings.Repeat("x", 5000)
	zh := strings.Repeat("记", 300) // 900 bytes, 3 per rune
	for _, tc := range []struct {
		name, in string
		max      int // longest allowed output
		keep     []string
	}{
		{"short untouched", `session "abc" not found`, 100, []string{`session "abc" not found`}},
		{"quoted echo cut", `unknown session "` + long + `" (create it)`, 300, []string{`unknown session "xxx`, "…(5000 bytes)\"", "(create it)"}},
		{"escaped quotes inside", `field "a\"` + long + `" bad`, 300, []string{"…(", `" bad`}},
		{"backquoted command", "create it with `waiter session new " + long + "`", 300, []string{"…(5019 bytes)`"}},
		{"unterminated", `bad "` + long, 300, []string{"…("}},
		{"runes kept whole", `name "` + zh + `"`, 300, []string{"…(900 bytes)"}},
		{"many echoes bounded overall", strings.Repeat(`"`+long+`" `, 40), maxErrorBytes + 30, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := clipEchoes(tc.in)
			if len(got) > tc.max {
				t.Fatalf("%d bytes > %d: %.300s", len(got), tc.max, got)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("invalid UTF-8: %q", got)
			}
			for _, k := range tc.keep {
				if !strings.Contains(got, k) {
					t.Errorf("%q lacks %q", got, k)
				}
			}
		})
	}
}

// The limiter keeps at most maxUnauth unauthenticated connections per IP, closing the oldest;
// promoted ones leave that pool and are capped apart; closing uncounts.
func TestConnLimiter(t *testing.T) {
	lim := newConnLimiter(3, 2)
	var conns []*limitedConn
	var peers []net.Conn
	open := func(ip string) *limitedConn {
		a, b := net.Pipe()
		peers = append(peers, b)
		c := &limitedConn{Conn: a, lim: lim, ip: ip}
		lim.admit(c)
		conns = append(conns, c)
		return c
	}
	t.Cleanup(func() {
		for _, p := range peers {
			p.Close()
		}
	})
	a1, a2 := open("a"), open("a")
	if !lim.promote(a1) || !lim.promote(a2) {
		t.Fatal("promotion under the cap refused")
	}
	for range 5 {
		open("a")
	}
	open("b")
	unauth := func(ip string) int { lim.mu.Lock(); defer lim.mu.Unlock(); return lim.ips[ip].unauth.Len() }
	if got := unauth("a"); got != 3 {
		t.Fatalf("%d unauthenticated connections of a, want 3", got)
	}
	if got := unauth("b"); got != 1 {
		t.Fatalf("%d unauthenticated connections of b, want 1", got)
	}
	closed := 0
	for _, c := range conns[2:7] {
		if c.closed {
			closed++
		}
	}
	if closed != 2 || !conns[2].closed || !conns[3].closed {
		t.Fatalf("the two oldest unauthenticated connections should be closed (%d closed)", closed)
	}
	if a1.closed || a2.closed {
		t.Fatal("an authenticated connection was evicted")
	}
	if lim.promote(conns[6]) {
		t.Fatal("a third authenticated connection passed a cap of 2")
	}
	a1.Close()
	if !lim.promote(conns[6]) {
		t.Fatal("promotion refused after an authenticated connection closed")
	}
	for _, c := range conns {
		c.Close()
	}
	if len(lim.ips) != 0 {
		t.Fatalf("counts left after every connection closed: %v", lim.ips)
	}
}
