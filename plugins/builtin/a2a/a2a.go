package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/hologramagent/hologram/plugins/sdk"
)

// EnvPeers is the environment variable the kernel passes the [[a2a.peers]] of its config in:
// a JSON array of {"name", "url", "token_file"}.
const EnvPeers = "HOLOGRAM_A2A_PEERS"

// Limits.
const (
	maxReply     = 64 << 10 // bytes of a peer's reply shown to the model
	maxTokenFile = 4 << 10
	sendTimeout  = 5 * time.Minute // a blocking a2a_send gives up after this
)

// Peer is one agent the owner's sessions may call.
type Peer struct {
	Name      string `json:"name"`
	URL       string `json:"url"`
	TokenFile string `json:"token_file"`
}

var peerNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,47}$`)

// PeersFromEnv reads and checks the peers of [EnvPeers]; none is no error (the tools say so).
func PeersFromEnv(getenv func(string) string) ([]Peer, error) {
	raw := strings.TrimSpace(getenv(EnvPeers))
	if raw == "" {
		return nil, nil
	}
	var peers []Peer
	if err := json.Unmarshal([]byte(raw), &peers); err != nil {
		return nil, fmt.Errorf("%s: %w", EnvPeers, err)
	}
	seen := map[string]bool{}
	for i, p := range peers {
		u, err := url.Parse(p.URL)
		switch {
		case !peerNameRe.MatchString(p.Name):
			return nil, fmt.Errorf("%s: peer %d: bad name %q", EnvPeers, i, p.Name)
		case seen[p.Name]:
			return nil, fmt.Errorf("%s: two peers named %q", EnvPeers, p.Name)
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return nil, fmt.Errorf("%s: peer %q: url %q is not an http(s) URL", EnvPeers, p.Name, p.URL)
		case p.TokenFile == "":
			return nil, fmt.Errorf("%s: peer %q has no token_file", EnvPeers, p.Name)
		}
		seen[p.Name] = true
	}
	return peers, nil
}

// a2aPlugin holds the peers and a client per peer, made on first use.
type a2aPlugin struct {
	peers []Peer
	log   *slog.Logger
	http  *http.Client

	mu      sync.Mutex
	clients map[string]*a2aclient.Client
}

func newA2A(peers []Peer, log *slog.Logger) *a2aPlugin {
	return &a2aPlugin{peers: peers, log: log, http: &http.Client{Timeout: sendTimeout + 30*time.Second}, clients: map[string]*a2aclient.Client{}}
}

func (p *a2aPlugin) names() []string {
	out := make([]string, len(p.peers))
	for i, pe := range p.peers {
		out[i] = pe.Name
	}
	return out
}

func (p *a2aPlugin) plugin() sdk.Plugin {
	names, _ := json.Marshal(p.names())
	peer := `{"type":"string","description":"the peer agent's name","enum":` + string(names) + `}`
	if len(p.peers) == 0 {
		peer = `{"type":"string","description":"the peer agent's name (none is configured: [[a2a.peers]] in the config)"}`
	}
	return sdk.Plugin{
		Name: "a2a", Version: "1.0.0",
		Instructions: "Other agents reachable over A2A: " + strings.Join(p.names(), ", ") + ".",
		Tools: []sdk.Tool{
			{Name: "a2a_send", Title: "Ask another agent",
				Description: "Sends a message to another agent over A2A and returns its answer (the task's state and reply). " +
					"Peers: " + strings.Join(p.names(), ", ") + ". Give task_id to answer a task of that agent that waits for input.",
				InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"peer":` + peer +
					`,"text":{"type":"string","description":"the message"},"task_id":{"type":"string","description":"continue this task (one in input-required state)"},` +
					`"wait":{"type":"boolean","description":"wait for the answer (default true); false returns the task at once, read it later with a2a_get_task"}},"required":["peer","text"]}`),
				Run: p.send},
			{Name: "a2a_get_task", Title: "Read another agent's task",
				Description: "Reads a task this agent sent to another agent over A2A: its state and reply.",
				InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"peer":` + peer +
					`,"task_id":{"type":"string"}},"required":["peer","task_id"]}`),
				ReadOnly: true, Run: p.getTask},
		},
	}
}

// peer finds a configured peer by name.
func (p *a2aPlugin) peer(name string) (Peer, error) {
	i := slices.IndexFunc(p.peers, func(pe Peer) bool { return pe.Name == name })
	if i < 0 {
		if len(p.peers) == 0 {
			return Peer{}, errors.New("no A2A peers are configured: add [[a2a.peers]] (name, url, token_file) to the config")
		}
		return Peer{}, fmt.Errorf("no A2A peer %q (configured: %s)", name, strings.Join(p.names(), ", "))
	}
	return p.peers[i], nil
}

// token reads a peer's token file at each call, so a new token needs no restart.
func token(pe Peer) (string, error) {
	f, err := os.Open(pe.TokenFile)
	if err != nil {
		return "", fmt.Errorf("A2A peer %q: token file: %w", pe.Name, err)
	}
	defer f.Close()
	b := make([]byte, maxTokenFile+1)
	n, _ := f.Read(b)
	tok := strings.TrimSpace(string(b[:n]))
	if tok == "" || n > maxTokenFile || strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("A2A peer %q: token file %s must hold one token", pe.Name, pe.TokenFile)
	}
	return tok, nil
}

// bearer adds the peer's token to requests for the peer's own host only, so a card pointing
// elsewhere never receives it.
type bearer struct {
	host, token string
	next        http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.EqualFold(r.URL.Host, b.host) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

// client returns the peer's A2A client: the card is fetched once, then JSON-RPC.
func (p *a2aPlugin) client(ctx context.Context, pe Peer) (*a2aclient.Client, error) {
	p.mu.Lock()
	c := p.clients[pe.Name]
	p.mu.Unlock()
	if c != nil {
		return c, nil
	}
	tok, err := token(pe)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(pe.URL)
	hc := &http.Client{Timeout: p.http.Timeout, Transport: bearer{host: u.Host, token: tok, next: http.DefaultTransport}}
	var opts []agentcard.ResolveOption
	base := pe.URL
	if strings.HasSuffix(u.Path, ".json") { // the card's own URL
		base, opts = u.Scheme+"://"+u.Host, append(opts, agentcard.WithPath(u.Path))
	}
	card, err := agentcard.NewResolver(hc).Resolve(ctx, base, opts...)
	if err != nil {
		return nil, fmt.Errorf("A2A peer %q: agent card: %w", pe.Name, err)
	}
	c, err = a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		return nil, fmt.Errorf("A2A peer %q: %w", pe.Name, err)
	}
	p.mu.Lock()
	p.clients[pe.Name] = c
	p.mu.Unlock()
	return c, nil
}

// forget drops a peer's client after a failure, so the next call fetches the card and the
// token again.
func (p *a2aPlugin) forget(name string) {
	p.mu.Lock()
	delete(p.clients, name)
	p.mu.Unlock()
}

type sendArgs struct {
	Peer   string `json:"peer"`
	Text   string `json:"text"`
	TaskID string `json:"task_id"`
	Wait   *bool  `json:"wait"`
}

func decode(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

func (p *a2aPlugin) send(ctx context.Context, _ *sdk.Kernel, raw json.RawMessage) (sdk.Result, error) {
	var in sendArgs
	if err := decode(raw, &in); err != nil {
		return sdk.Result{}, err
	}
	if strings.TrimSpace(in.Text) == "" {
		return sdk.Result{}, errors.New("text is empty")
	}
	pe, err := p.peer(in.Peer)
	if err != nil {
		return sdk.Result{}, err
	}
	c, err := p.client(ctx, pe)
	if err != nil {
		return sdk.Result{}, err
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(in.Text))
	msg.TaskID = a2a.TaskID(in.TaskID)
	req := &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{AcceptedOutputModes: []string{"text/plain"}}}
	if in.Wait != nil && !*in.Wait {
		req.Config.ReturnImmediately = true
	}
	sctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	res, err := c.SendMessage(sctx, req)
	if err != nil {
		p.forget(pe.Name)
		return sdk.Result{}, fmt.Errorf("A2A peer %q: %w", pe.Name, err)
	}
	switch r := res.(type) {
	case *a2a.Task:
		return sdk.Text(describe(pe.Name, r)), nil
	case *a2a.Message:
		return sdk.Text(bound(pe.Name + " answered: " + partsText(r.Parts))), nil
	}
	return sdk.Result{}, fmt.Errorf("A2A peer %q answered %T", pe.Name, res)
}

type taskArgs struct {
	Peer   string `json:"peer"`
	TaskID string `json:"task_id"`
}

func (p *a2aPlugin) getTask(ctx context.Context, _ *sdk.Kernel, raw json.RawMessage) (sdk.Result, error) {
	var in taskArgs
	if err := decode(raw, &in); err != nil {
		return sdk.Result{}, err
	}
	if in.TaskID == "" {
		return sdk.Result{}, errors.New("task_id is empty")
	}
	pe, err := p.peer(in.Peer)
	if err != nil {
		return sdk.Result{}, err
	}
	c, err := p.client(ctx, pe)
	if err != nil {
		return sdk.Result{}, err
	}
	t, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(in.TaskID)})
	if err != nil {
		p.forget(pe.Name)
		return sdk.Result{}, fmt.Errorf("A2A peer %q: %w", pe.Name, err)
	}
	return sdk.Text(describe(pe.Name, t)), nil
}

func partsText(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, pt := range parts {
		if pt != nil {
			b.WriteString(pt.Text())
		}
	}
	return b.String()
}

// describe is a task as the model reads it: peer, id, state, the reply (artifacts, else the
// status message).
func describe(peer string, t *a2a.Task) string {
	var reply strings.Builder
	for _, a := range t.Artifacts {
		if a != nil {
			reply.WriteString(partsText(a.Parts))
		}
	}
	if reply.Len() == 0 && t.Status.Message != nil {
		reply.WriteString(partsText(t.Status.Message.Parts))
	}
	state := strings.TrimPrefix(string(t.Status.State), "TASK_STATE_")
	return bound(fmt.Sprintf("%s: task %s %s\n%s", peer, t.ID, strings.ToLower(state), reply.String()))
}

func bound(s string) string {
	if len(s) <= maxReply {
		return s
	}
	cut := maxReply
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n(cut: the reply has %d bytes, %d shown)", len(s), cut)
}
