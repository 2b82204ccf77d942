package a2a

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory"
)

// peerPrefix is the settings key prefix of the peers: a2a.peer.<name> holds a [storedPeer].
const peerPrefix = "a2a.peer."

// TokenPrefix starts every peer token, so a token pasted in the wrong place is recognisable.
const TokenPrefix = "a2a_"

// tokenBytes is the entropy of a peer token: 256 bits.
const tokenBytes = 32

var peerNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,47}$`)

// storedPeer is what the kernel keeps of a peer: never the token, only its SHA-256.
type storedPeer struct {
	Name    string    `json:"name"`
	SHA256  string    `json:"sha256"`
	Created time.Time `json:"created"`
}

// peer is a loaded peer with its decoded hash.
type peer struct {
	storedPeer
	hash [sha256.Size]byte
}

// SessionID is the id of a peer's own session.
func SessionID(name string) string { return "a2a-" + name }

// Channel is the channel of every peer's session and events.
const Channel = "a2a"

// Partner is a peer's partner in its session and events: with the channel, a2a/<name> (a
// slash inside a partner would break the scene key chan:<channel>/peer:<partner>).
func Partner(name string) string { return name }

// Scope is a peer's memory scope: its own group, never the owner's private memories.
func Scope(name string) string { return "group:a2a-" + name }

func (p peer) client() client.A2APeer {
	return client.A2APeer{Name: p.Name, Channel: Channel, Partner: Partner(p.Name), Session: SessionID(p.Name), Scope: Scope(p.Name), Created: p.Created}
}

// checkName validates a peer name: lower-case letters, digits and . _ -, at most 48.
func checkName(name string) error {
	if !peerNameRe.MatchString(name) {
		return fmt.Errorf("%w: peer name %q: want lower-case letters, digits and . _ - (at most 48, starting with a letter or digit)", client.ErrInvalid, name)
	}
	return nil
}

// loadPeers reads every peer from the settings; a damaged entry is skipped and reported.
func (s *Service) loadPeers(ctx context.Context) error {
	raw, err := s.settings.ListSettings(ctx, peerPrefix)
	if err != nil {
		return fmt.Errorf("loading the A2A peers: %w", err)
	}
	peers := make(map[string]peer, len(raw))
	for k, v := range raw {
		var sp storedPeer
		h, herr := []byte(nil), error(nil)
		if err := json.Unmarshal([]byte(v), &sp); err == nil {
			h, herr = hex.DecodeString(sp.SHA256)
		}
		if err != nil || herr != nil || len(h) != sha256.Size || sp.Name != strings.TrimPrefix(k, peerPrefix) {
			s.log.Warn("a2a: skipping a damaged peer entry (remove it with `waiter a2a peer remove`)", "key", k)
			continue
		}
		p := peer{storedPeer: sp}
		copy(p.hash[:], h)
		peers[sp.Name] = p
	}
	s.mu.Lock()
	s.peers = peers
	s.mu.Unlock()
	return nil
}

// A2APeers implements [client.A2AService].
func (s *Service) A2APeers(ctx context.Context) ([]client.A2APeer, error) {
	s.mu.Lock()
	out := make([]client.A2APeer, 0, len(s.peers))
	for _, p := range s.peers {
		out = append(out, p.client())
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b client.A2APeer) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// AddA2APeer implements [client.A2AService]: a new 256-bit token, stored as its SHA-256, and the
// peer's session (channel "a2a", partner <name>, scope group:a2a-<name>).
func (s *Service) AddA2APeer(ctx context.Context, name string) (client.A2APeer, error) {
	name = strings.TrimSpace(name)
	if err := checkName(name); err != nil {
		return client.A2APeer{}, err
	}
	s.mu.Lock()
	_, exists := s.peers[name]
	s.mu.Unlock()
	if exists {
		return client.A2APeer{}, fmt.Errorf("%w: A2A peer %q exists (remove it with `waiter a2a peer remove %s` to give it a new token)", client.ErrInvalid, name, name)
	}
	var b [tokenBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return client.A2APeer{}, fmt.Errorf("a2a peer token: %w", err)
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	p := peer{storedPeer: storedPeer{Name: name, Created: s.now().UTC().Truncate(time.Second)}, hash: sha256.Sum256([]byte(token))}
	p.SHA256 = hex.EncodeToString(p.hash[:])
	if err := s.ensureSession(ctx, name); err != nil {
		return client.A2APeer{}, err
	}
	raw, _ := json.Marshal(p.storedPeer)
	if err := s.settings.SetSetting(ctx, peerPrefix+name, string(raw)); err != nil {
		return client.A2APeer{}, fmt.Errorf("storing A2A peer %q: %w", name, err)
	}
	s.mu.Lock()
	s.peers[name] = p
	s.mu.Unlock()
	s.log.Info("a2a: peer added", "peer", name)
	out := p.client()
	out.Token = token
	return out, nil
}

// RemoveA2APeer implements [client.A2AService]. The peer's session and tasks stay (the owner
// may read them); its token stops working at once.
func (s *Service) RemoveA2APeer(ctx context.Context, name string) error {
	s.mu.Lock()
	_, ok := s.peers[name]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: no A2A peer %q (see `waiter a2a peer list`)", client.ErrNotFound, name)
	}
	if err := s.settings.DeleteSetting(ctx, peerPrefix+name); err != nil && !errors.Is(err, memory.ErrNotFound) {
		return fmt.Errorf("removing A2A peer %q: %w", name, err)
	}
	s.mu.Lock()
	delete(s.peers, name)
	delete(s.limits, name)
	s.mu.Unlock()
	s.log.Info("a2a: peer removed", "peer", name)
	return nil
}

// ensureSession creates a peer's session unless it exists.
func (s *Service) ensureSession(ctx context.Context, name string) error {
	_, err := s.b.CreateSession(ctx, client.Session{ID: SessionID(name), Title: "A2A peer " + name, Channel: Channel, Partner: Partner(name), Scope: Scope(name)})
	if err != nil && !errors.Is(err, client.ErrInvalid) { // ErrInvalid: it exists
		return fmt.Errorf("the session of A2A peer %q: %w", name, err)
	}
	return nil
}

// peerByToken finds the peer whose token this is, comparing every hash in constant time.
func (s *Service) peerByToken(token string) (string, bool) {
	h := sha256.Sum256([]byte(token))
	s.mu.Lock()
	defer s.mu.Unlock()
	found := ""
	for name, p := range s.peers {
		if subtle.ConstantTimeCompare(h[:], p.hash[:]) == 1 {
			found = name
		}
	}
	return found, found != ""
}
