package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RefusedError is the error of a connection the [Guard] refuses: the target is a loopback,
// link-local, private-range, unspecified or otherwise non-public address that is not
// allow-listed, or it is the kernel's own API.
type RefusedError struct {
	Host   string         // the host as the URL named it
	Addr   netip.AddrPort // the address it resolved to
	Reason string
}

// Error implements error.
func (e *RefusedError) Error() string {
	host := e.Host
	if host == "" || host == e.Addr.Addr().String() {
		return fmt.Sprintf("refused to connect to %s: %s", e.Addr, e.Reason)
	}
	return fmt.Sprintf("refused to connect to %s (%s): %s", host, e.Addr, e.Reason)
}

// special are the ranges that are not the public internet, checked after the address is
// unmapped (an IPv4-mapped IPv6 address is checked as IPv4); netip's own predicates cover
// loopback, private (RFC 1918, fc00::/7), link-local, multicast and unspecified.
var special = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this-network (unspecified)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (RFC 6598, carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
}

// Embedded IPv4 forms: NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48) and 6to4
// (2002::/16) carry an IPv4 address that decides where the packet really goes.
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
)

// classify names the kind of a non-public address, or returns "" for a public one.
func classify(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip), nat64Local.Contains(ip):
			if k := classify(netip.AddrFrom4([4]byte(b[12:16]))); k != "" {
				return k + " (through NAT64)"
			}
		case sixToFour.Contains(ip):
			if k := classify(netip.AddrFrom4([4]byte(b[2:6]))); k != "" {
				return k + " (through 6to4)"
			}
		}
	}
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsPrivate():
		return "private-range"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast"
	}
	for _, s := range special {
		if s.prefix.Contains(ip) {
			return s.kind
		}
	}
	return ""
}

// allowRule is one HOLOGRAM_WEB_ALLOW entry: an address range, or a host name (exact, or a
// ".suffix" for its subdomains), with an optional port (0: any).
type allowRule struct {
	prefix netip.Prefix // valid for address entries
	name   string       // lower case; a leading dot matches subdomains
	port   uint16
}

// matches reports whether the rule admits a connection to ip:port named host.
func (r allowRule) matches(host string, ip netip.Addr, port uint16) bool {
	if r.port != 0 && r.port != port {
		return false
	}
	if r.prefix.IsValid() {
		return r.prefix.Contains(ip.Unmap().WithZone(""))
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if strings.HasPrefix(r.name, ".") {
		return strings.HasSuffix(host, r.name)
	}
	return host == r.name
}

// denyRule is an endpoint no tool may reach, allow-listed or not: the kernel's own API. An
// endpoint given by name or by an unspecified address stands for every address of this
// machine on that port.
type denyRule struct {
	addr  netip.Addr // invalid: every local address
	port  uint16
	label string
}

// Guard decides which addresses the web tools may connect to. Public addresses are allowed;
// loopback, link-local, private-range (RFC 1918, fc00::/7, 100.64.0.0/10 …), unspecified,
// multicast and reserved ones are refused unless an allow rule admits them; the deny rules (the
// kernel's API) are refused always. The check runs at connect time on the resolved address
// ([Guard.Control]), so a name that resolves differently later (DNS rebinding) gains nothing.
// A Guard is immutable and safe for concurrent use.
type Guard struct {
	allow []allowRule
	deny  []denyRule
	// local returns the addresses of this machine's interfaces (for deny rules without an
	// address); net.InterfaceAddrs by default.
	local func() []netip.Addr
}

// ParseAllow parses allow entries: an address ("127.0.0.1", "::1"), a CIDR range
// ("10.0.0.0/8"), a host name ("nas.lan") or a suffix (".lan"), each optionally with a port
// ("127.0.0.1:8080", "[::1]:8080", "nas.lan:443"; not with a range).
func ParseAllow(entries []string) ([]allowRule, error) {
	var out []allowRule
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		r, err := parseAllowRule(e)
		if err != nil {
			return nil, fmt.Errorf("allow entry %q: %w", e, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func parseAllowRule(e string) (allowRule, error) {
	if p, err := netip.ParsePrefix(e); err == nil {
		return allowRule{prefix: p.Masked()}, nil
	}
	if ip, err := netip.ParseAddr(e); err == nil {
		return allowRule{prefix: hostPrefix(ip)}, nil
	}
	host, port := e, uint16(0)
	if h, p, err := net.SplitHostPort(e); err == nil {
		n, perr := strconv.ParseUint(p, 10, 16)
		if perr != nil || n == 0 {
			return allowRule{}, fmt.Errorf("port %q is not a number from 1 to 65535", p)
		}
		host, port = h, uint16(n)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return allowRule{prefix: hostPrefix(ip), port: port}, nil
	}
	if strings.Contains(host, "/") {
		return allowRule{}, errors.New("a range takes no port")
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if !validName(strings.TrimPrefix(name, ".")) {
		return allowRule{}, errors.New("not an address, a range, a host name or a .suffix")
	}
	return allowRule{name: name, port: port}, nil
}

// hostPrefix is the single-address range of ip (unmapped, without a zone).
func hostPrefix(ip netip.Addr) netip.Prefix {
	ip = ip.Unmap().WithZone("")
	return netip.PrefixFrom(ip, ip.BitLen())
}

// validName reports whether s is a plausible DNS name.
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// ParseDeny parses deny entries, each host:port ("127.0.0.1:8765", "[::]:8765",
// "localhost:8765"); label names them in refusals.
func ParseDeny(entries []string, label string) ([]denyRule, error) {
	var out []denyRule
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		h, p, err := net.SplitHostPort(e)
		if err != nil {
			return nil, fmt.Errorf("deny entry %q: want host:port: %w", e, err)
		}
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("deny entry %q: port %q is not a number from 1 to 65535", e, p)
		}
		r := denyRule{port: uint16(n), label: label}
		if ip, err := netip.ParseAddr(h); err == nil && !ip.IsUnspecified() {
			r.addr = ip.Unmap().WithZone("")
		}
		out = append(out, r)
	}
	return out, nil
}

// NewGuard returns a guard with the given rules; local lists this machine's addresses (nil:
// its interfaces' addresses, read at each check).
func NewGuard(allow []allowRule, deny []denyRule, local func() []netip.Addr) *Guard {
	if local == nil {
		local = interfaceAddrs
	}
	return &Guard{allow: allow, deny: deny, local: local}
}

// interfaceAddrs returns the addresses of this machine's network interfaces.
func interfaceAddrs() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}

// Check decides a connection to ap for the URL host host: nil, or a *[RefusedError].
func (g *Guard) Check(host string, ap netip.AddrPort) error {
	ip := ap.Addr().Unmap().WithZone("")
	for _, d := range g.deny {
		if d.port != ap.Port() {
			continue
		}
		hit := d.addr.IsValid() && d.addr == ip
		if !d.addr.IsValid() {
			hit = ip.IsLoopback() || ip.IsUnspecified()
			for _, l := range g.local() {
				hit = hit || l.WithZone("") == ip
			}
		}
		if hit {
			return &RefusedError{Host: host, Addr: ap, Reason: d.label + " (never reachable from the web tools)"}
		}
	}
	kind := classify(ip)
	if kind == "" {
		return nil
	}
	for _, r := range g.allow {
		if r.matches(host, ip, ap.Port()) {
			return nil
		}
	}
	return &RefusedError{Host: host, Addr: ap,
		Reason: "a " + kind + " address, not allow-listed (HOLOGRAM_WEB_ALLOW)"}
}

// Control returns a net.Dialer Control function that checks every address the dialer is about
// to connect to, for the URL host host.
func (g *Guard) Control(host string) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("refused to connect to %q: not an IP address and port: %w", address, err)
		}
		return g.Check(host, ap)
	}
}

// DialContext dials addr (host:port) like a net.Dialer with timeout, checking each resolved
// address at connect time.
func (g *Guard) DialContext(timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("dial %q: %w", addr, err)
		}
		d := net.Dialer{Timeout: timeout, Control: g.Control(host)}
		return d.DialContext(ctx, network, addr)
	}
}

// PreCheck refuses an address literal before any connection, for a clearer early error; names
// are checked when they are resolved, at connect time.
func (g *Guard) PreCheck(host string, port uint16) error {
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return nil
	}
	return g.Check(host, netip.AddrPortFrom(ip, port))
}
