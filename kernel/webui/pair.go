package webui

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Pairing: the owner (the API token, or the unix socket) asks for a pairing
// (POST /api/v1/web/pairings) and shows its link, https://HOST:PORT/#pair=CODE, as a QR code;
// a phone that opens it (or types the short form on the sign-in page) trades it for a device
// session (POST /api/v1/web/pair). A pairing is single use, lives PairingTTL, and its short
// form allows MaxPairingFailures wrong tries in all, then it is void. Pairings live in memory
// only: a restarted kernel has none.
const (
	PairingTTL         = 5 * time.Minute
	MaxPairingFailures = 5
	// MaxPairings bounds the pairings kept at once (live, used or void until they expire); a
	// new one past it pushes the oldest out.
	MaxPairings = 16
	// codeBytes is the long code's randomness: 128 bits, 22 base64url characters.
	codeBytes = 16
	// shortLen characters of shortAlphabet (Crockford's base32: no I, L, O, U) make the typed
	// form, 40 bits; at most MaxPairingFailures wrong tries leave a guess 5 chances in 2^40.
	shortLen      = 8
	shortAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
)

type pairing struct {
	code, short string
	expires     time.Time
	failures    int
	used, void  bool
}

// Pairing is what POST /api/v1/web/pairings answers.
type Pairing struct {
	// URL opens the web UI and signs the browser in: https://HOST:PORT/#pair=CODE (http when
	// the listener has no TLS).
	URL  string `json:"url"`
	Code string `json:"code"`
	// Short is the typed form, e.g. "7K2M-QX4D" (the dash and case are optional when typed).
	Short   string    `json:"short"`
	Expires time.Time `json:"expires"`
	// Fingerprint is the listener's TLS certificate's SHA-256 fingerprint, when it has TLS.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// errPairOwner refuses a pairing asked for by anyone but the owner's token or the socket.
var errPairOwner = "only the owner pairs a new device: ask with the API token or over the unix socket (waiter pair, or Settings → Pair a phone in the desktop app), not from a signed-in browser"

// owner reports whether r is the owner's: the API token, or (no Authorization header and no
// session cookie) the unix socket — kernel/api refuses a TCP request with neither before it
// reaches the web UI.
func (u *UI) owner(r *http.Request) bool {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
		if !ok || !strings.EqualFold(scheme, "bearer") {
			return false
		}
		g, want := sha256.Sum256([]byte(strings.TrimSpace(tok))), sha256.Sum256([]byte(u.token))
		return subtle.ConstantTimeCompare(g[:], want[:]) == 1
	}
	_, err := r.Cookie(cookieName(r))
	return err != nil
}

// maxPairBody bounds the body of both pairing routes.
const maxPairBody = 4 << 10

// decodeSmall decodes r's JSON body (empty allowed when optional) into v, answering the error.
func decodeSmall(w http.ResponseWriter, r *http.Request, v any, optional bool, what string) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxPairBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if optional && errors.Is(err, io.EOF) {
			return true
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a %s body is at most %d bytes", what, maxPairBody))
			return false
		}
		writeError(w, http.StatusBadRequest, what+" body: "+clip(err.Error()))
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, what+" body: data after the JSON object")
		return false
	}
	return true
}

func (u *UI) handleNewPairing(w http.ResponseWriter, r *http.Request) {
	if !u.owner(r) {
		writeError(w, http.StatusForbidden, errPairOwner)
		return
	}
	var in struct {
		// Host names the kernel in the link (default: the listener's address, or this
		// machine's first LAN address when it listens on all of them).
		Host string `json:"host"`
	}
	if !decodeSmall(w, r, &in, true, "pairing") {
		return
	}
	hostport, err := u.pairHost(r, strings.TrimSpace(in.Host))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var cb [codeBytes]byte
	var sb [shortLen]byte
	_, _ = rand.Read(cb[:])
	_, _ = rand.Read(sb[:])
	short := make([]byte, shortLen)
	for i, b := range sb {
		short[i] = shortAlphabet[int(b)%len(shortAlphabet)] // 256 is a multiple of 32: uniform
	}
	p := &pairing{code: base64.RawURLEncoding.EncodeToString(cb[:]), short: string(short), expires: u.now().Add(PairingTTL)}
	u.mu.Lock()
	u.prunePairings()
	if len(u.pairings) >= MaxPairings {
		u.pairings = u.pairings[1:]
	}
	u.pairings = append(u.pairings, p)
	u.mu.Unlock()
	scheme := "http"
	if u.tls {
		scheme = "https"
	}
	u.log.Info("webui: a pairing was made", "expires", p.expires, "host", hostport)
	writeJSON(w, http.StatusCreated, Pairing{URL: scheme + "://" + hostport + "/#pair=" + p.code, Code: p.code,
		Short: p.short[:4] + "-" + p.short[4:], Expires: p.expires.UTC(), Fingerprint: u.fingerprint})
}

// prunePairings drops the expired pairings; u.mu is held.
func (u *UI) prunePairings() {
	now := u.now()
	kept := u.pairings[:0]
	for _, p := range u.pairings {
		if now.Before(p.expires) {
			kept = append(kept, p)
		}
	}
	clear(u.pairings[len(kept):])
	u.pairings = kept
}

// pairHost is the host:port a pairing link names.
func (u *UI) pairHost(r *http.Request, given string) (string, error) {
	host, port, err := net.SplitHostPort(u.addr)
	if err != nil {
		return "", errors.New("the web UI has no TCP listener to pair with: start homed with --listen (or turn on \"Use from other devices\" in the desktop app)")
	}
	if given != "" {
		if ip := net.ParseIP(strings.Trim(given, "[]")); ip != nil {
			return net.JoinHostPort(ip.String(), port), nil
		}
		if len(given) > 253 || strings.Trim(given, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") != "" {
			return "", fmt.Errorf("host %q is not a host name or IP address", clip(given))
		}
		return net.JoinHostPort(given, port), nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
		return net.JoinHostPort(host, port), nil
	}
	// Listening on all addresses: the address the request came to, when it came over TCP to
	// this port, else this machine's first LAN address.
	if h, p, err := net.SplitHostPort(r.Host); err == nil && p == port && h != "" {
		return r.Host, nil
	}
	if ip := lanAddress(); ip != "" {
		return net.JoinHostPort(ip, port), nil
	}
	return net.JoinHostPort("localhost", port), nil
}

// lanAddress is the first IPv4 (else global IPv6) address of an up, non-loopback interface.
func lanAddress() string {
	ifs, err := net.Interfaces()
	if err != nil {
		return ""
	}
	v6 := ""
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || !n.IP.IsGlobalUnicast() {
				continue
			}
			if n.IP.To4() != nil {
				return n.IP.String()
			}
			if v6 == "" {
				v6 = n.IP.String()
			}
		}
	}
	return v6
}

// normalizeShort reads a typed short code: case, spaces and dashes do not matter, and O, I and
// L read as 0, 1 and 1. ok is false when s is not a short code's shape.
func normalizeShort(s string) (string, bool) {
	var b strings.Builder
	for _, c := range strings.ToUpper(s) {
		switch c {
		case ' ', '-', '\t':
			continue
		case 'O':
			c = '0'
		case 'I', 'L':
			c = '1'
		}
		if !strings.ContainsRune(shortAlphabet, c) {
			return "", false
		}
		b.WriteRune(c)
	}
	return b.String(), b.Len() == shortLen
}

// errPairing is the answer to a code that pairs nothing.
const errPairing = "wrong or expired pairing code: ask for a new one (waiter pair, or Settings → Pair a phone in the desktop app)"

func (u *UI) handlePair(w http.ResponseWriter, r *http.Request) {
	if !u.allow(r) {
		w.Header().Set("Retry-After", fmt.Sprint(int(u.every.Seconds()+0.5)))
		writeError(w, http.StatusTooManyRequests, "too many sign-in attempts from this address: wait a little and try again")
		return
	}
	var in struct {
		Code string `json:"code"`
		Name string `json:"name"`
	}
	if !decodeSmall(w, r, &in, false, "pairing") {
		return
	}
	code := strings.TrimSpace(in.Code)
	if code == "" {
		writeError(w, http.StatusBadRequest, `field "code" is required: the code of the pairing link, or its short form`)
		return
	}
	p, msg := u.consume(code)
	if msg != "" {
		u.log.Warn("webui: pairing with a wrong code", "remote", r.RemoteAddr, "why", msg)
		writeError(w, http.StatusUnauthorized, msg)
		return
	}
	if !u.newSession(w, r, in.Name) { // e.g. too many devices: the pairing stays usable
		u.mu.Lock()
		p.used = false
		u.mu.Unlock()
		return
	}
	u.log.Info("webui: a device paired", "remote", r.RemoteAddr)
}

// consume finds code's pairing and uses it up; it returns why not otherwise. A wrong short code
// counts against every live pairing (it cannot tell which one was meant), voiding those that
// reach MaxPairingFailures.
func (u *UI) consume(code string) (*pairing, string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.prunePairings()
	short, isShort := normalizeShort(code)
	for _, p := range u.pairings {
		var match bool
		if isShort {
			match = subtle.ConstantTimeCompare([]byte(short), []byte(p.short)) == 1
		} else {
			match = subtle.ConstantTimeCompare([]byte(code), []byte(p.code)) == 1
		}
		if !match {
			continue
		}
		switch {
		case p.used:
			return nil, "this pairing code was used already: each pairs one device; ask for a new one"
		case p.void:
			return nil, fmt.Sprintf("this pairing is void after %d wrong tries: ask for a new one", MaxPairingFailures)
		}
		p.used = true
		return p, ""
	}
	if isShort {
		voided := false
		for _, p := range u.pairings {
			if p.used || p.void {
				continue
			}
			if p.failures++; p.failures >= MaxPairingFailures {
				p.void, voided = true, true
			}
		}
		if voided {
			return nil, fmt.Sprintf("wrong pairing code; after %d wrong tries the pairing is void: ask for a new one", MaxPairingFailures)
		}
	}
	return nil, errPairing
}
