// Package acp is the agent side of the Agent Client Protocol (ACP v1, agentclientprotocol.com)
// for `waiter acp`: an editor (Zed, JetBrains, Neovim's CodeCompanion…) starts waiter as a
// subprocess and speaks JSON-RPC 2.0 over its stdin/stdout; the bridge turns each ACP call into
// calls of the running kernel's API (kernel/client), so the editor's agent is the owner's agent
// with the owner's memory.
//
// The wire layer is github.com/coder/acp-go-sdk (its generated types follow the protocol's
// schema; it reads one message per line, up to 10 MiB, and logs and skips a line that is not
// JSON). This package maps:
//   - session/new → a kernel session of channel "acp" whose partner is the project (cwd);
//     session/list lists those, session/load replays one's history as session/update;
//   - session/prompt → one turn (POST /api/v1/chat) whose stream becomes agent_message_chunk,
//     agent_thought_chunk, tool_call and tool_call_update, then usage_update (the L1 window's
//     used/size) and the stop reason;
//   - the turn's approvals → session/request_permission; "always" answers are kept per project
//     ([Permissions]);
//   - session/set_config_option "model" → the session's model;
//   - the editor's mcpServers → plugins of that session, removed when the editor goes (mcp.go);
//   - the editor's fs capabilities → client-executed tools of each turn (clienttools.go).
//
// The package imports kernel/client only, never the kernel (waiter links no SQLite).
package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/hologramagent/hologram/kernel/client"
)

// Channel is the kernel channel of editor sessions; their partner is the project directory.
const Channel = "acp"

// historyLimit bounds the messages session/load replays (the newest ones).
const historyLimit = 2000

// maxToolText bounds the text of one tool call's content sent to the editor.
const maxToolText = 64 << 10

// Kernel is what the bridge asks of the kernel: [client.HTTP] implements it.
type Kernel interface {
	Health(ctx context.Context) (client.Health, error)
	Chat(ctx context.Context, req client.ChatRequest, emit func(client.ChatEvent)) (client.ChatResult, error)
	Cancel(ctx context.Context, turnID string) error
	Sessions(ctx context.Context) ([]client.Session, error)
	CreateSession(ctx context.Context, s client.Session) (client.Session, error)
	SetInstructions(ctx context.Context, sessionID string, in client.Instructions) (client.Session, error)
	History(ctx context.Context, sessionID string, limit int) ([]client.Message, error)
	Window(ctx context.Context, sessionID string) (client.Window, error)
	Providers(ctx context.Context) ([]client.Provider, error)
	AnswerApproval(ctx context.Context, id string, approve bool) (client.Approval, error)
	AnswerToolCall(ctx context.Context, turnID, callID string, a client.ToolAnswer) error
	AddPlugin(ctx context.Context, p client.PluginConfig) (client.Plugin, error)
	PluginAction(ctx context.Context, name, action string) (client.Plugin, error)
	DeleteSession(ctx context.Context, id string, forget bool) (client.SessionDeleted, error)
}

// Options configure an [Agent].
type Options struct {
	// Remote: the kernel is reached over --remote (initialize then offers token auth by
	// HOLOGRAM_TOKEN, and the editor's MCP servers are refused).
	Remote bool
	// Version is waiter's version, sent as agentInfo.
	Version string
	// Log receives diagnostics (stderr: stdout carries only ACP messages).
	Log *slog.Logger
}

// Agent implements the ACP agent over a kernel. Safe for concurrent use: the SDK runs each
// request in its own goroutine.
type Agent struct {
	k     Kernel
	perms *Permissions
	opts  Options
	conn  *sdk.AgentSideConnection

	connID string // names this connection's session plugins (mcp.go)

	mu       sync.Mutex
	sessions map[string]*session
	caps     sdk.ClientCapabilities
	plugins  []string // the editor's MCP servers added as session plugins, removed at the end
}

// session is an ACP session this connection created or loaded.
type session struct {
	id, cwd string
	model   string // "" = the kernel's default

	mu   sync.Mutex
	turn string // the running turn's id
}

// New returns an agent over k keeping "always" answers in perms.
func New(k Kernel, perms *Permissions, opts Options) *Agent {
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Agent{k: k, perms: perms, opts: opts, sessions: map[string]*session{}, connID: newConnID()}
}

// Serve speaks ACP on r/w until the editor closes its end or ctx ends; then the editor's MCP
// servers stop.
func (a *Agent) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	a.conn = sdk.NewAgentSideConnection(a, w, r)
	a.conn.SetLogger(a.opts.Log)
	defer func() {
		a.mu.Lock()
		names := a.plugins
		a.plugins = nil
		a.mu.Unlock()
		a.removePlugins(names)
	}()
	select {
	case <-a.conn.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Initialize implements sdk.Agent.
func (a *Agent) Initialize(ctx context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	a.mu.Lock()
	a.caps = p.ClientCapabilities
	a.mu.Unlock()
	auth := []sdk.AuthMethod{}
	if a.opts.Remote {
		desc := "the bearer token of the remote kernel, read by waiter from --token-file or HOLOGRAM_TOKEN"
		auth = append(auth, sdk.AuthMethod{EnvVar: &sdk.AuthMethodEnvVarInline{Id: "hologram-token", Name: "HologramAgent token",
			Type: "env_var", Description: &desc, Vars: []sdk.AuthEnvVar{{Name: "HOLOGRAM_TOKEN", Secret: true}}}})
	}
	title := "HologramAgent"
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentInfo:       &sdk.Implementation{Name: "hologram-waiter", Title: &title, Version: a.opts.Version},
		AuthMethods:     auth,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  sdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			SessionCapabilities: sdk.SessionCapabilities{List: &sdk.SessionListCapabilities{}},
			McpCapabilities:     sdk.McpCapabilities{}, // stdio servers only (mcp.go)
		},
	}, nil
}

// Authenticate implements sdk.Agent: waiter already holds the token (or needs none on the socket).
func (a *Agent) Authenticate(ctx context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	if _, err := a.k.Health(ctx); err != nil {
		return sdk.AuthenticateResponse{}, sdk.NewAuthRequired(map[string]any{"error": err.Error()})
	}
	return sdk.AuthenticateResponse{}, nil
}

// checkCwd validates a session's project directory.
func checkCwd(cwd string) (string, error) {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return "", sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("cwd must be an absolute path, got %q", cwd)})
	}
	return filepath.Clean(cwd), nil
}

// NewSession implements sdk.Agent.
func (a *Agent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	cwd, err := checkCwd(p.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	if err := a.checkMCP(p.McpServers); err != nil { // mcp.go
		return sdk.NewSessionResponse{}, err
	}
	s, err := a.k.CreateSession(ctx, client.Session{Title: "Editor: " + filepath.Base(cwd), Channel: Channel, Partner: cwd})
	if err != nil {
		return sdk.NewSessionResponse{}, fmt.Errorf("new session: %w", err)
	}
	if err := a.startMCP(ctx, s.ID, p.McpServers); err != nil {
		if _, derr := a.k.DeleteSession(context.WithoutCancel(ctx), s.ID, true); derr != nil { // nothing happened in it
			a.opts.Log.Warn("acp: remove the session whose MCP servers failed", "session", s.ID, "err", derr)
		}
		return sdk.NewSessionResponse{}, err
	}
	sess := &session{id: s.ID, cwd: cwd, model: s.Model}
	a.mu.Lock()
	a.sessions[s.ID] = sess
	a.mu.Unlock()
	opts, err := a.configOptions(ctx, sess)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(s.ID), ConfigOptions: opts, Modes: modes(opts)}, nil
}

// findSession returns the kernel's session id, or a not-found error.
func (a *Agent) findSession(ctx context.Context, id string) (client.Session, error) {
	list, err := a.k.Sessions(ctx)
	if err != nil {
		return client.Session{}, fmt.Errorf("sessions: %w", err)
	}
	for _, s := range list {
		if s.ID == id {
			return s, nil
		}
	}
	return client.Session{}, &sdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"error": fmt.Sprintf("no session %q", id)}}
}

// LoadSession implements sdk.AgentLoader: it replays the session's history.
func (a *Agent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	cwd, err := checkCwd(p.Cwd)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	ks, err := a.findSession(ctx, string(p.SessionId))
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	if ks.Scope != "" && ks.Scope != "private" {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("session %q is a %s session, not the owner's", ks.ID, ks.Scope)})
	}
	if err := a.checkMCP(p.McpServers); err != nil { // mcp.go
		return sdk.LoadSessionResponse{}, err
	}
	if err := a.startMCP(ctx, ks.ID, p.McpServers); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	hist, err := a.k.History(ctx, ks.ID, historyLimit)
	if err != nil {
		return sdk.LoadSessionResponse{}, fmt.Errorf("history: %w", err)
	}
	for _, u := range replay(hist) {
		if err := a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: p.SessionId, Update: u}); err != nil {
			return sdk.LoadSessionResponse{}, err
		}
	}
	sess := &session{id: ks.ID, cwd: cwd, model: ks.Model}
	a.mu.Lock()
	a.sessions[ks.ID] = sess
	a.mu.Unlock()
	opts, err := a.configOptions(ctx, sess)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	return sdk.LoadSessionResponse{ConfigOptions: opts, Modes: modes(opts)}, nil
}

// replay turns a history into the updates that show it.
func replay(hist []client.Message) []sdk.SessionUpdate {
	var out []sdk.SessionUpdate
	names := map[string]string{}
	for _, m := range hist {
		switch m.Role {
		case "user":
			out = append(out, sdk.UpdateUserMessageText(m.Content))
		case "assistant":
			if m.Content != "" {
				out = append(out, sdk.UpdateAgentMessageText(m.Content))
			}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
				out = append(out, startTool(client.ToolEvent{ID: c.ID, Name: c.Name, Arguments: c.Arguments}))
			}
		case "tool":
			name := m.ToolName
			if name == "" {
				name = names[m.ToolCallID]
			}
			out = append(out, endTool(client.ToolEvent{ID: m.ToolCallID, Name: name, Result: m.Content, Status: m.ToolStatus}))
		}
	}
	return out
}

// ListSessions implements sdk.Agent: the editor sessions, of one project when cwd is given.
func (a *Agent) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	list, err := a.k.Sessions(ctx)
	if err != nil {
		return sdk.ListSessionsResponse{}, fmt.Errorf("sessions: %w", err)
	}
	var cwd string
	if p.Cwd != nil {
		if cwd, err = checkCwd(*p.Cwd); err != nil {
			return sdk.ListSessionsResponse{}, err
		}
	}
	out := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	for _, s := range list {
		if s.Channel != Channel || (cwd != "" && s.Partner != cwd) {
			continue
		}
		title, updated := s.Title, s.Updated.UTC().Format(time.RFC3339)
		out.Sessions = append(out.Sessions, sdk.SessionInfo{SessionId: sdk.SessionId(s.ID), Cwd: s.Partner, Title: &title, UpdatedAt: &updated})
	}
	return out, nil
}

// ResumeSession implements sdk.Agent (not advertised).
func (a *Agent) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

// CloseSession implements sdk.Agent (not advertised).
func (a *Agent) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	return sdk.CloseSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionClose)
}

// SetSessionMode implements sdk.Agent: the modes are the models (for clients without config
// options).
func (a *Agent) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	return sdk.SetSessionModeResponse{}, a.setModel(ctx, s, string(p.ModeId))
}

// session returns this connection's session id.
func (a *Agent) session(id sdk.SessionId) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[string(id)]
	if s == nil {
		return nil, &sdk.RequestError{Code: -32002, Message: "Resource not found",
			Data: map[string]any{"error": fmt.Sprintf("session %q is not open on this connection: session/new or session/load first", id)}}
	}
	return s, nil
}

// configID is the one config option: the model.
const configID = "model"

// defaultModel is the option value of "the kernel's default model".
const defaultModel = "default"

// configOptions is the model selector: the default and each provider's model.
func (a *Agent) configOptions(ctx context.Context, s *session) ([]sdk.SessionConfigOption, error) {
	provs, err := a.k.Providers(ctx)
	if err != nil {
		return nil, fmt.Errorf("providers: %w", err)
	}
	name := "Default"
	if len(provs) > 0 {
		name = "Default (" + provs[0].Model + ")"
	}
	opts := sdk.SessionConfigSelectOptionsUngrouped{{Name: name, Value: defaultModel}}
	seen := map[string]bool{defaultModel: true}
	for _, p := range provs {
		if p.Model == "" || seen[p.Model] {
			continue
		}
		seen[p.Model] = true
		opts = append(opts, sdk.SessionConfigSelectOption{Name: p.Model + " (" + p.Name + ")", Value: sdk.SessionConfigValueId(p.Model)})
	}
	cur := s.model
	if cur == "" {
		cur = defaultModel
	}
	if !seen[cur] { // a model set elsewhere that no provider names now
		opts = append(opts, sdk.SessionConfigSelectOption{Name: cur, Value: sdk.SessionConfigValueId(cur)})
	}
	cat := sdk.SessionConfigOptionCategoryModel
	return []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{Id: configID, Name: "Model", Category: &cat, Type: "select",
		CurrentValue: sdk.SessionConfigValueId(cur), Options: sdk.SessionConfigSelectOptions{Ungrouped: &opts}}}}, nil
}

// SetSessionConfigOption implements sdk.Agent: the model.
func (a *Agent) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	if p.ValueId == nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": "the model option takes a value id"})
	}
	v := p.ValueId
	if v.ConfigId != configID {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown config option %q (there is %q)", v.ConfigId, configID)})
	}
	s, err := a.session(v.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	if err := a.setModel(ctx, s, string(v.Value)); err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	opts, err := a.configOptions(ctx, s)
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: opts}, err
}

// setModel sets the session's model to one of the options' values.
func (a *Agent) setModel(ctx context.Context, s *session, value string) error {
	cur, err := a.configOptions(ctx, s)
	if err != nil {
		return err
	}
	ok := false
	for _, o := range *cur[0].Select.Options.Ungrouped {
		ok = ok || string(o.Value) == value
	}
	if !ok {
		return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("no model %q among the options", value)})
	}
	model := value
	if model == defaultModel {
		model = ""
	}
	ks, err := a.findSession(ctx, s.id)
	if err != nil {
		return err
	}
	if _, err := a.k.SetInstructions(ctx, s.id, client.Instructions{SystemPrompt: ks.SystemPrompt, Model: model}); err != nil {
		return fmt.Errorf("set model: %w", err)
	}
	a.mu.Lock()
	s.model = model
	a.mu.Unlock()
	return nil
}

// modes are the model options as session modes, for clients older than config options.
func modes(opts []sdk.SessionConfigOption) *sdk.SessionModeState {
	sel := opts[0].Select
	st := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(sel.CurrentValue), AvailableModes: []sdk.SessionMode{}}
	for _, o := range *sel.Options.Ungrouped {
		st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(o.Value), Name: o.Name})
	}
	return st
}

// Cancel implements sdk.Agent: the SDK has cancelled the prompt's context already; the kernel
// is told too, so the turn stops even if the stream is slow to close.
func (a *Agent) Cancel(ctx context.Context, p sdk.CancelNotification) error {
	s, err := a.session(p.SessionId)
	if err != nil {
		return nil // a notification: nothing to answer
	}
	s.mu.Lock()
	turn := s.turn
	s.mu.Unlock()
	if turn != "" {
		if err := a.k.Cancel(context.WithoutCancel(ctx), turn); err != nil && !errors.Is(err, client.ErrNotFound) {
			a.opts.Log.Warn("acp: cancel", "turn", turn, "err", err)
		}
	}
	return nil
}

// Permission option ids.
const (
	optAllowOnce    = "allow_once"
	optAllowAlways  = "allow_always"
	optRejectOnce   = "reject_once"
	optRejectAlways = "reject_always"
)

var (
	_ sdk.Agent       = (*Agent)(nil)
	_ sdk.AgentLoader = (*Agent)(nil)
)
