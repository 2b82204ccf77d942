package main

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct{ addr, want string }{
		{"93.184.216.34", ""},
		{"2606:2800:220:1:248:1893:25c8:1946", ""},
		{"127.0.0.1", "loopback"},
		{"127.255.0.9", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"10.1.2.3", "private-range"},
		{"172.16.0.1", "private-range"},
		{"172.31.255.255", "private-range"},
		{"172.32.0.1", ""},
		{"192.168.1.1", "private-range"},
		{"fc00::1", "private-range"},
		{"fd12:3456::1", "private-range"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"100.64.0.1", "shared address space (RFC 6598, carrier-grade NAT)"},
		{"100.127.255.255", "shared address space (RFC 6598, carrier-grade NAT)"},
		{"100.128.0.1", ""},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "this-network (unspecified)"},
		{"::", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"240.0.0.1", "reserved"},
		{"198.18.0.1", "benchmarking"},
		{"64:ff9b::7f00:1", "loopback (through NAT64)"},
		{"64:ff9b::808:808", ""},
		{"2002:c0a8:0101::1", "private-range (through 6to4)"},
		{"2002:0808:0808::1", ""},
	}
	for _, tt := range tests {
		if got := classify(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("classify(%s) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

func TestGuardCheck(t *testing.T) {
	t.Parallel()
	allow, err := ParseAllow([]string{"127.0.0.1:8080", "10.0.0.0/8", "nas.lan", ".home.arpa:443", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	deny, err := ParseDeny([]string{"127.0.0.1:8765", "[::]:9000", "localhost:9100"}, "the kernel's own API")
	if err != nil {
		t.Fatal(err)
	}
	local := func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("192.168.7.7")} }
	g := NewGuard(allow, deny, local)
	tests := []struct {
		host, addr string
		want       string // "" allowed, else a part of the refusal
	}{
		{"example.com", "93.184.216.34:443", ""},
		{"127.0.0.1", "127.0.0.1:8080", ""},
		{"127.0.0.1", "127.0.0.1:8081", "a loopback address, not allow-listed"},
		{"localhost", "[::ffff:127.0.0.1]:8080", ""}, // mapped: the same address
		{"10.9.8.7", "10.9.8.7:22", ""},
		{"11.0.0.1", "11.0.0.1:22", ""},
		{"192.168.1.1", "192.168.1.1:80", "a private-range address"},
		{"nas.lan", "192.168.1.20:5000", ""},
		{"NAS.lan.", "192.168.1.20:5000", ""},
		{"evil.example", "192.168.1.20:5000", "a private-range address"}, // a name resolving to a private address
		{"tv.home.arpa", "192.168.1.30:443", ""},
		{"tv.home.arpa", "192.168.1.30:80", "not allow-listed"},
		{"home.arpa", "192.168.1.30:443", "not allow-listed"},
		{"metadata", "169.254.169.254:80", "a link-local address"},
		{"[::1]", "[::1]:3000", ""},
		{"0.0.0.0", "0.0.0.0:80", "unspecified"},
		// The kernel's API: refused although 127.0.0.1:8765 is a loopback address and ::1 is allowed.
		{"127.0.0.1", "127.0.0.1:8765", "the kernel's own API"},
		{"::1", "[::1]:9000", "the kernel's own API"},
		{"127.0.0.1", "127.0.0.1:9000", "the kernel's own API"},
		{"192.168.7.7", "192.168.7.7:9100", "the kernel's own API"}, // this machine's address
		{"example.com", "93.184.216.34:9000", ""},                   // not this machine
	}
	for _, tt := range tests {
		err := g.Check(tt.host, netip.MustParseAddrPort(tt.addr))
		if tt.want == "" {
			if err != nil {
				t.Errorf("Check(%s, %s) = %v, want allowed", tt.host, tt.addr, err)
			}
			continue
		}
		var refused *RefusedError
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Check(%s, %s) = %v, want a refusal mentioning %q", tt.host, tt.addr, err, tt.want)
		}
	}
}

func TestParseAllowAndDenyErrors(t *testing.T) {
	t.Parallel()
	for _, e := range []string{"10.0.0.0/8:80", "host:0", "host:99999", "bad host!", "a..b", "-:x"} {
		if _, err := ParseAllow([]string{e}); err == nil {
			t.Errorf("ParseAllow(%q) accepted", e)
		}
	}
	for _, e := range []string{"127.0.0.1", "127.0.0.1:0", "host:http"} {
		if _, err := ParseDeny([]string{e}, "x"); err == nil {
			t.Errorf("ParseDeny(%q) accepted", e)
		}
	}
}

func BenchmarkGuardCheck(b *testing.B) {
	allow, _ := ParseAllow([]string{"10.0.0.0/8", "nas.lan", "127.0.0.1:8080"})
	deny, _ := ParseDeny([]string{"127.0.0.1:8765"}, "the kernel's own API")
	g := NewGuard(allow, deny, func() []netip.Addr { return nil })
	addrs := []netip.AddrPort{netip.MustParseAddrPort("93.184.216.34:443"), netip.MustParseAddrPort("192.168.1.1:80"),
		netip.MustParseAddrPort("[64:ff9b::7f00:1]:80"), netip.MustParseAddrPort("10.1.2.3:22")}
	for i := 0; b.Loop(); i++ {
		_ = g.Check("example.com", addrs[i%len(addrs)])
	}
}
