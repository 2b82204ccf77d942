// Package assistants keeps the owner's assistants (client.AssistantService): saved presets of a
// name, instructions, a model and the tools allowed, that a chat starts from. Presets are stored
// as settings ("assistant.<id>", JSON); a chat started from one records its tool filter in
// "session.tools.<session>", read by [Service.MayCall], the agent's Options.MayCall: the tools a
// turn of that session offers and may run. Settings go with the store's backups.
package assistants

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory"
)

// Setting keys.
const (
	prefixAssistant = "assistant."     // + id: an Assistant, JSON
	prefixSession   = "session.tools." // + session id: a sessionFilter, JSON
)

// Settings is the part of memory.Store the service needs.
type Settings interface {
	GetSetting(ctx context.Context, key string) (string, error)
	SetSetting(ctx context.Context, key, value string) error
	DeleteSetting(ctx context.Context, key string) error
	ListSettings(ctx context.Context, prefix string) (map[string]string, error)
}

// Service implements client.AssistantService. Create is the kernel's CreateSession (its checks
// and ids). The zero value is not usable; the methods are safe for concurrent use.
type Service struct {
	DB     Settings
	Create func(ctx context.Context, s client.Session) (client.Session, error)
	Log    *slog.Logger

	mu      sync.Mutex
	filters map[string]*filter // session → its tools (nil: every tool); read through
}

// filter is the tools a session started from an assistant may call.
type filter struct {
	Assistant string   `json:"assistant"`
	Tools     []string `json:"tools"`
}

var (
	idRe   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
	toolRe = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)
)

// Assistants implements client.AssistantService: the presets by name.
func (s *Service) Assistants(ctx context.Context) ([]client.Assistant, error) {
	m, err := s.DB.ListSettings(ctx, prefixAssistant)
	if err != nil {
		return nil, err
	}
	out := make([]client.Assistant, 0, len(m))
	for key, v := range m {
		var a client.Assistant
		if err := json.Unmarshal([]byte(v), &a); err != nil {
			s.logger().Warn("assistant setting unreadable; skipped", "key", key, "err", err)
			continue
		}
		if a.Tools == nil {
			a.Tools = []string{}
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// SaveAssistant implements client.AssistantService.
func (s *Service) SaveAssistant(ctx context.Context, a client.Assistant) (client.Assistant, error) {
	a, err := check(a)
	if err != nil {
		return client.Assistant{}, err
	}
	if _, err := s.DB.GetSetting(ctx, prefixAssistant+a.ID); errors.Is(err, memory.ErrNotFound) {
		all, err := s.DB.ListSettings(ctx, prefixAssistant)
		if err != nil {
			return client.Assistant{}, err
		}
		if len(all) >= client.MaxAssistants {
			return client.Assistant{}, invalid("at most %d assistants; remove one first", client.MaxAssistants)
		}
	} else if err != nil {
		return client.Assistant{}, err
	}
	b, err := json.Marshal(a)
	if err != nil {
		return client.Assistant{}, err
	}
	if err := s.DB.SetSetting(ctx, prefixAssistant+a.ID, string(b)); err != nil {
		return client.Assistant{}, err
	}
	return a, nil
}

// RemoveAssistant implements client.AssistantService.
func (s *Service) RemoveAssistant(ctx context.Context, id string) error {
	if !idRe.MatchString(id) {
		return notFound(id)
	}
	if err := s.DB.DeleteSetting(ctx, prefixAssistant+id); err != nil {
		if errors.Is(err, memory.ErrNotFound) {
			return notFound(id)
		}
		return err
	}
	return nil
}

// StartAssistant implements client.AssistantService. The tool filter is stored before the
// session exists, so no turn of it ever runs unfiltered.
func (s *Service) StartAssistant(ctx context.Context, id, title string) (client.Session, error) {
	a, err := s.get(ctx, id)
	if err != nil {
		return client.Session{}, err
	}
	title = strings.TrimSpace(title)
	if title == "" {
		title = a.Name
	}
	if utf8.RuneCountInString(title) > client.MaxSessionTitle || strings.IndexFunc(title, unicode.IsControl) >= 0 {
		return client.Session{}, invalid("a chat title is one line of at most %d characters", client.MaxSessionTitle)
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	sid := a.ID + "-" + hex.EncodeToString(r[:])
	f := &filter{Assistant: a.ID, Tools: a.Tools}
	b, err := json.Marshal(f)
	if err != nil {
		return client.Session{}, err
	}
	if err := s.DB.SetSetting(ctx, prefixSession+sid, string(b)); err != nil {
		return client.Session{}, err
	}
	s.mu.Lock()
	if s.filters == nil {
		s.filters = map[string]*filter{}
	}
	s.filters[sid] = f
	s.mu.Unlock()
	sess, err := s.Create(ctx, client.Session{ID: sid, Title: title, SystemPrompt: a.Instructions, Model: a.Model})
	if err != nil {
		_ = s.ForgetSession(context.WithoutCancel(ctx), sid)
		return client.Session{}, err
	}
	return sess, nil
}

// Filter returns the tools a session may call, as its assistant set them: nil when every tool
// (a chat not started from an assistant, or one whose assistant allows every tool).
func (s *Service) Filter(ctx context.Context, session string) ([]string, error) {
	f, err := s.filter(ctx, session)
	if err != nil || f == nil || len(f.Tools) == 0 {
		return nil, err
	}
	return f.Tools, nil
}

// SessionTools implements client.AssistantService.
func (s *Service) SessionTools(ctx context.Context, session string) (client.SessionTools, error) {
	out := client.SessionTools{Session: session, Tools: []string{}}
	f, err := s.filter(ctx, session)
	if err != nil || f == nil {
		return out, err
	}
	out.Assistant = f.Assistant
	out.Tools = append(out.Tools, f.Tools...)
	return out, nil
}

// MayCall is the agent's Options.MayCall: a session started from an assistant offers only the
// assistant's tools (by name or by plugin) and the kernel's own. A store error refuses the
// tool (logged): a filter that cannot be read is not lifted.
func (s *Service) MayCall(ctx context.Context, turn agent.TurnRequest, tool agent.ToolInfo) bool {
	if tool.Source == "builtin" || tool.Source == "agent" || tool.Spec.Name == agent.ToolSearchTool || tool.Spec.Name == agent.ResultReadTool {
		return true
	}
	tools, err := s.Filter(ctx, turn.Session)
	if err != nil {
		s.logger().Warn("assistant tool filter unreadable; tool refused", "session", turn.Session, "tool", tool.Spec.Name, "err", err)
		return false
	}
	return tools == nil || slices.Contains(tools, tool.Spec.Name) || slices.Contains(tools, tool.Source)
}

// ForgetSession drops a deleted session's tool filter (none is fine).
func (s *Service) ForgetSession(ctx context.Context, session string) error {
	s.mu.Lock()
	delete(s.filters, session)
	s.mu.Unlock()
	if err := s.DB.DeleteSetting(ctx, prefixSession+session); err != nil && !errors.Is(err, memory.ErrNotFound) {
		return err
	}
	return nil
}

// filter reads a session's filter through the cache (nil: none).
func (s *Service) filter(ctx context.Context, session string) (*filter, error) {
	s.mu.Lock()
	f, ok := s.filters[session]
	s.mu.Unlock()
	if ok {
		return f, nil
	}
	v, err := s.DB.GetSetting(ctx, prefixSession+session)
	switch {
	case errors.Is(err, memory.ErrNotFound):
		f = nil
	case err != nil:
		return nil, err
	default:
		f = &filter{}
		if err := json.Unmarshal([]byte(v), f); err != nil {
			return nil, fmt.Errorf("session %s: tool filter: %w", session, err)
		}
	}
	s.mu.Lock()
	if s.filters == nil || len(s.filters) >= maxCached {
		s.filters = map[string]*filter{} // read again from the store as needed
	}
	s.filters[session] = f
	s.mu.Unlock()
	return f, nil
}

// maxCached bounds the sessions whose filter is kept in memory (a /v1 client may make many).
const maxCached = 4096

func (s *Service) get(ctx context.Context, id string) (client.Assistant, error) {
	if !idRe.MatchString(id) {
		return client.Assistant{}, notFound(id)
	}
	v, err := s.DB.GetSetting(ctx, prefixAssistant+id)
	if errors.Is(err, memory.ErrNotFound) {
		return client.Assistant{}, notFound(id)
	} else if err != nil {
		return client.Assistant{}, err
	}
	var a client.Assistant
	if err := json.Unmarshal([]byte(v), &a); err != nil {
		return client.Assistant{}, fmt.Errorf("assistant %s: %w", id, err)
	}
	return a, nil
}

// check trims and validates a preset, making its id from the name when empty.
func check(a client.Assistant) (client.Assistant, error) {
	a.Name = strings.TrimSpace(a.Name)
	a.Model = strings.TrimSpace(a.Model)
	switch {
	case a.Name == "":
		return a, invalid("an assistant needs a name")
	case utf8.RuneCountInString(a.Name) > client.MaxAssistantName || strings.IndexFunc(a.Name, unicode.IsControl) >= 0:
		return a, invalid("an assistant's name is one line of at most %d characters", client.MaxAssistantName)
	case len(a.Instructions) > client.MaxAssistantInstructs || !utf8.ValidString(a.Instructions) || strings.ContainsRune(a.Instructions, 0):
		return a, invalid("an assistant's instructions are UTF-8 text of at most %d bytes", client.MaxAssistantInstructs)
	case len(a.Model) > 200 || strings.IndexFunc(a.Model, unicode.IsControl) >= 0:
		return a, invalid("an assistant's model is one line of at most 200 bytes")
	case len(a.Tools) > client.MaxAssistantTools:
		return a, invalid("an assistant allows at most %d tools, got %d", client.MaxAssistantTools, len(a.Tools))
	}
	if a.ID == "" {
		a.ID = slug(a.Name)
	}
	if !idRe.MatchString(a.ID) {
		return a, invalid("assistant id %q: lowercase letters, digits and -, at most 64, starting with a letter or digit", a.ID)
	}
	tools := make([]string, 0, len(a.Tools))
	for _, t := range a.Tools {
		t = strings.TrimSpace(t)
		if !toolRe.MatchString(t) {
			return a, invalid("tool %q: a tool or plugin name (letters, digits and _ . : -, at most 128)", t)
		}
		if !slices.Contains(tools, t) {
			tools = append(tools, t)
		}
	}
	a.Tools = tools
	return a, nil
}

// slug makes an id from a name: lowercase ASCII letters and digits, other runs as "-"; a name
// without any (e.g. all CJK) gets a random id.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
		if b.Len() >= 48 {
			break
		}
	}
	if b.Len() == 0 {
		var r [4]byte
		_, _ = rand.Read(r[:])
		return "a-" + hex.EncodeToString(r[:])
	}
	return b.String()
}

func (s *Service) logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", client.ErrInvalid, fmt.Sprintf(format, args...))
}

func notFound(id string) error {
	return fmt.Errorf("%w: no assistant %q (waiter assistant list)", client.ErrNotFound, id)
}

var _ client.AssistantService = (*Service)(nil)
