// Package a2a serves the agent to other agents over A2A 1.0 (the Agent2Agent protocol), with the
// official Go SDK (github.com/a2aproject/a2a-go/v2): the agent card at
// /.well-known/agent-card.json (no token) and the JSON-RPC binding at /a2a (SendMessage,
// SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask).
//
// Every caller is a peer the owner added (`waiter a2a peer add NAME`), with its own bearer token
// (256 bits, stored as its SHA-256), its own session (channel "a2a", partner NAME: a2a/NAME), its own
// memory scope (group:a2a-NAME: never the owner's private memories), its own rate limit and
// concurrency limit. A peer sees only its own tasks. Tasks live in the kernel's settings table
// (SQLite), so they survive a restart; tasks a previous kernel left running are marked failed.
//
// The package sits behind the kernel's role services: [Backend] is the kernel's chat and
// session roles, [Settings] its store's settings. kernel/api mounts a [Service] on the TCP
// listener and serves its peer administration ([client.A2AService]) to the owner.
package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/limiter"
	"golang.org/x/time/rate"

	"github.com/hologramagent/hologram/kernel/client"
)

// Paths the service answers.
const (
	CardPath = a2asrv.WellKnownAgentCardPath // GET, no token
	RPCPath  = "/a2a"                        // POST, JSON-RPC 2.0, a peer's bearer token
)

// ProtocolVersion is the A2A version served; requests must say so in the A2A-Version header.
const ProtocolVersion = "1.0"

// Backend is what A2A needs of the kernel: its chat role and session creation.
type Backend interface {
	client.ChatService
	CreateSession(ctx context.Context, s client.Session) (client.Session, error)
}

// approvalLister is the kernel's approvals role, which a [Backend] may also be: then a task
// whose turn waits for the owner's approval is TASK_STATE_INPUT_REQUIRED meanwhile.
type approvalLister interface {
	Approvals(ctx context.Context) ([]client.Approval, error)
}

// Settings is the kernel store's key-value settings (memory.Store's part), where peers and
// tasks are kept.
type Settings interface {
	GetSetting(ctx context.Context, key string) (string, error)
	SetSetting(ctx context.Context, key, value string) error
	DeleteSetting(ctx context.Context, key string) error
	ListSettings(ctx context.Context, prefix string) (map[string]string, error)
}

// Options configure a [Service]; Backend and Settings are required.
type Options struct {
	Backend  Backend
	Settings Settings
	// Name and Description introduce the agent in its card; Version is the software version.
	Name, Description, Version string
	// RatePerMinute bounds each peer's requests (default 60; a burst of 10); MaxConcurrent its
	// tasks running at once (default 2).
	RatePerMinute, MaxConcurrent int
	// MaxBodyBytes bounds a request body (default 4 MiB).
	MaxBodyBytes int64
	Logger       *slog.Logger
	Now          func() time.Time
}

// Service is the A2A server. It is an http.Handler for [CardPath] and [RPCPath].
type Service struct {
	b        Backend
	settings Settings
	opts     Options
	log      *slog.Logger
	now      func() time.Time
	tasks    *tasks
	rpc      http.Handler
	// approvals, when the backend lists them, tells a task waiting for the owner's approval.
	approvals    approvalLister
	approvalPoll time.Duration

	mu      sync.Mutex
	peers   map[string]peer
	limits  map[string]*rate.Limiter
	running map[a2a.TaskID]context.CancelFunc
}

var _ client.A2AService = (*Service)(nil)

// New loads the peers and the tasks (marking those a previous kernel left running as failed)
// and returns the service.
func New(ctx context.Context, opts Options) (*Service, error) {
	if opts.Backend == nil || opts.Settings == nil {
		return nil, fmt.Errorf("a2a: Backend and Settings are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RatePerMinute <= 0 {
		opts.RatePerMinute = 60
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 2
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 4 << 20
	}
	if opts.Name == "" {
		opts.Name = "HologramAgent"
	}
	if opts.Description == "" {
		opts.Description = "A self-hosted personal AI agent. It answers other agents in a conversation of their own, with its own memory scope: never its owner's private memories."
	}
	s := &Service{b: opts.Backend, settings: opts.Settings, opts: opts, log: opts.Logger, now: opts.Now,
		peers: map[string]peer{}, limits: map[string]*rate.Limiter{}, running: map[a2a.TaskID]context.CancelFunc{}}
	s.tasks = &tasks{settings: opts.Settings, now: opts.Now}
	s.approvals, _ = opts.Backend.(approvalLister)
	s.approvalPoll = 200 * time.Millisecond
	if err := s.loadPeers(ctx); err != nil {
		return nil, err
	}
	if n, err := s.tasks.interrupted(ctx); err != nil {
		return nil, fmt.Errorf("a2a: %w", err)
	} else if n > 0 {
		s.log.Warn("a2a: tasks left running by the previous kernel marked failed", "tasks", n)
	}
	caps := &a2a.AgentCapabilities{Streaming: true}
	h := a2asrv.NewHandler(executor{s},
		a2asrv.WithTaskStore(s.tasks),
		a2asrv.WithCapabilityChecks(caps),
		a2asrv.WithLogger(s.log),
		a2asrv.WithCallInterceptors(interceptor{s}),
		a2asrv.WithConcurrencyConfig(limiter.ConcurrencyConfig{GetMaxExecutions: func(string) int { return opts.MaxConcurrent }}),
	)
	s.rpc = a2asrv.NewJSONRPCHandler(h, a2asrv.WithTransportKeepAlive(15*time.Second))
	return s, nil
}

// Card returns the agent card for an agent reached at base (scheme://host[:port]).
func (s *Service) Card(base string) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        s.opts.Name,
		Description: s.opts.Description,
		Version:     s.opts.Version,
		SupportedInterfaces: []*a2a.AgentInterface{{URL: strings.TrimSuffix(base, "/") + RPCPath,
			ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: ProtocolVersion}},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "chat", Name: "Conversation",
			Description: "Answers questions and carries out requests in a conversation of the calling agent's own, with the tools open to non-owners.",
			Tags:        []string{"chat", "assistant"}, Examples: []string{"What is the capital of France?"}}},
		SecuritySchemes: a2a.NamedSecuritySchemes{"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "Bearer",
			Description: "A peer token from the owner (`waiter a2a peer add NAME`); the owner's own API token is refused."}},
		SecurityRequirements: a2a.SecurityRequirementsOptions{{"bearer": {}}},
	}
}

type peerKey struct{}

// ServeHTTP serves the card (no token) and the JSON-RPC binding (a peer's token). The caller
// (kernel/api) has already refused the owner's token and checked Origin and Host.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case CardPath:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			httpError(w, http.StatusMethodNotAllowed, "the agent card is read with GET")
			return
		}
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Card(scheme + "://" + r.Host))
	case RPCPath:
		name, ok := s.authenticate(w, r)
		if !ok {
			return
		}
		if lim := s.limiter(name); !lim.Allow() {
			w.Header().Set("Retry-After", strconv.Itoa(int((time.Minute/time.Duration(s.opts.RatePerMinute)).Seconds())+1))
			httpError(w, http.StatusTooManyRequests, fmt.Sprintf("A2A peer %s sent more requests than its limit (%d a minute); retry later", name, s.opts.RatePerMinute))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
		s.rpc.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), peerKey{}, name)))
	default:
		httpError(w, http.StatusNotFound, "no A2A route "+r.URL.Path)
	}
}

// authenticate finds the peer of the request's bearer token, answering 401 when there is none.
func (s *Service) authenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	scheme, tok, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	tok = strings.TrimSpace(tok)
	if strings.EqualFold(scheme, "bearer") && tok != "" {
		if name, ok := s.peerByToken(tok); ok {
			return name, true
		}
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="a2a"`)
	msg := "missing bearer token: A2A peers authenticate with the token of `waiter a2a peer add NAME`"
	if tok != "" {
		msg = "invalid A2A peer token (the owner makes one with `waiter a2a peer add NAME`)"
	}
	httpError(w, http.StatusUnauthorized, msg)
	return "", false
}

func (s *Service) limiter(name string) *rate.Limiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.limits[name]
	if l == nil {
		l = rate.NewLimiter(rate.Every(time.Minute/time.Duration(s.opts.RatePerMinute)), 10)
		s.limits[name] = l
	}
	return l
}

// httpError answers a refusal before JSON-RPC starts, in the kernel API's error shape.
func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"status": code, "message": msg}})
}

// interceptor authenticates every call as its peer, checks the A2A-Version and refuses calls
// naming another peer's task (as not found: a peer cannot probe for others' task ids).
type interceptor struct{ s *Service }

func (ic interceptor) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	name, _ := ctx.Value(peerKey{}).(string)
	if name == "" {
		return ctx, nil, a2a.ErrUnauthenticated
	}
	cc.User = a2asrv.NewAuthenticatedUser(name, nil)
	v, _ := cc.ServiceParams().Get(a2a.SvcParamVersion)
	if len(v) == 0 || strings.TrimSpace(v[0]) == "" {
		return ctx, nil, a2a.NewError(a2a.ErrVersionNotSupported, "no A2A-Version header: that is A2A 0.3, and this agent speaks A2A "+ProtocolVersion+" only (send A2A-Version: "+ProtocolVersion+")")
	}
	if got := strings.TrimSpace(v[0]); got != ProtocolVersion && got != "1" {
		return ctx, nil, a2a.NewError(a2a.ErrVersionNotSupported, fmt.Sprintf("A2A-Version %q is not supported: this agent speaks A2A %s", got, ProtocolVersion))
	}
	var id a2a.TaskID
	switch p := req.Payload.(type) {
	case *a2a.GetTaskRequest:
		id = p.ID
	case *a2a.CancelTaskRequest:
		id = p.ID
	case *a2a.SubscribeToTaskRequest:
		id = p.ID
	case *a2a.SendMessageRequest:
		if p.Message != nil {
			id = p.Message.TaskID
		}
	}
	if id != "" {
		owner, err := ic.s.tasks.owner(ctx, id)
		if err != nil || owner != name {
			return ctx, nil, a2a.NewError(a2a.ErrTaskNotFound, fmt.Sprintf("task not found: no task %s of yours", id))
		}
	}
	return limiter.AttachScope(ctx, name), nil, nil
}

func (ic interceptor) After(ctx context.Context, cc *a2asrv.CallContext, resp *a2asrv.Response) error {
	return nil
}
