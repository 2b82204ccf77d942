package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sync"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

// Client-executed tools: a turn's client (an editor bridged by `waiter acp`) may bring tools
// that it runs itself, e.g. reading and writing the files open in the editor. The model sees
// them as any other tool; a call is streamed to the client as a "tool_request" event (Tool set,
// Status "waiting") and the tool waits for the client's answer ([Agent.AnswerClientCall]), the
// tool timeout or the end of the turn. The answer is recorded as the call's result as usual.

// MaxClientTools bounds the tools one turn's client may bring.
const MaxClientTools = 32

// MaxClientResult bounds one answer of a client-executed tool (the result window then pages it
// as it does every long result); with its JSON it stays under the API's 4 MiB body limit.
const MaxClientResult = 2 << 20

// ErrNoClientCall is returned by [Agent.AnswerClientCall] when no call of that turn and id
// waits for its client (a memory.ErrNotFound).
var ErrNoClientCall = fmt.Errorf("no client tool call waits for this answer: %w", memory.ErrNotFound)

// ClientTool is a tool the turn's client runs: its name, description and JSON-schema parameters.
type ClientTool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// ClientAnswer is a client's result for one call; Images go with the result as a tool's
// images do ([AddResultImages]).
type ClientAnswer struct {
	Content string
	IsError bool
	Images  []llm.Image
}

// Bounds of a client's answer's images (kernel/client.ToolAnswer says them to clients).
const (
	MaxClientImages      = 4
	MaxClientImageBytes  = maxImageBytes
	MaxClientImagesBytes = maxMessageBytes
)

// checkClientImages reports the first image of an answer a vision model would not take: too
// many, empty, too large, not a vision type, or bytes that are not of the type it claims.
func checkClientImages(imgs []llm.Image) error {
	if len(imgs) > MaxClientImages {
		return fmt.Errorf("%d images, at most %d", len(imgs), MaxClientImages)
	}
	total := 0
	for i, im := range imgs {
		switch sniffed := http.DetectContentType(im.Data); {
		case !llm.VisionMIME(im.MIME):
			return fmt.Errorf("image %d is %q: images are image/png, image/jpeg, image/gif or image/webp", i+1, im.MIME)
		case len(im.Data) == 0:
			return fmt.Errorf("image %d is empty", i+1)
		case len(im.Data) > MaxClientImageBytes:
			return fmt.Errorf("image %d has %d bytes, at most %d", i+1, len(im.Data), MaxClientImageBytes)
		case sniffed != im.MIME:
			return fmt.Errorf("image %d says %s but its bytes are %s", i+1, im.MIME, sniffed)
		}
		total += len(im.Data)
	}
	if total > MaxClientImagesBytes {
		return fmt.Errorf("the images have %d bytes together, at most %d", total, MaxClientImagesBytes)
	}
	return nil
}

var clientToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// clientCalls are the calls waiting for their client, by turn and call id.
type clientCalls struct {
	mu      sync.Mutex
	waiting map[string]chan ClientAnswer
}

func callKey(turn, call string) string { return turn + "\x00" + call }

// AnswerClientCall delivers the client's answer to a waiting call of a turn; [ErrNoClientCall]
// when none waits (answered already, timed out, cancelled, or never asked).
func (a *Agent) AnswerClientCall(turnID, callID string, ans ClientAnswer) error {
	if len(ans.Content) > MaxClientResult {
		return fmt.Errorf("the answer is %d bytes, at most %d: %w", len(ans.Content), MaxClientResult, memory.ErrInvalid)
	}
	if err := checkClientImages(ans.Images); err != nil {
		return fmt.Errorf("the answer's images: %v: %w", err, memory.ErrInvalid)
	}
	a.clients.mu.Lock()
	ch, ok := a.clients.waiting[callKey(turnID, callID)]
	if ok {
		delete(a.clients.waiting, callKey(turnID, callID))
	}
	a.clients.mu.Unlock()
	if !ok {
		return fmt.Errorf("turn %s, call %s: %w", turnID, callID, ErrNoClientCall)
	}
	ch <- ans // buffered: never blocks
	return nil
}

// clientTool is one ClientTool of a running turn.
type clientTool struct {
	a    *Agent
	turn string
	spec llm.Tool
	emit func(Event)
}

func (c clientTool) Spec() llm.Tool     { return c.spec }
func (c clientTool) ParallelSafe() bool { return false }

// Visibility: the owner's client brought it for the owner's turn.
func (c clientTool) Visibility() Visibility { return VisibilityOwner }

func (c clientTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	id, _ := ctx.Value(callIDKey{}).(string)
	if id == "" {
		return "", errors.New("client tool run outside a call")
	}
	ch := make(chan ClientAnswer, 1)
	key := callKey(c.turn, id)
	c.a.clients.mu.Lock()
	if c.a.clients.waiting == nil {
		c.a.clients.waiting = map[string]chan ClientAnswer{}
	}
	c.a.clients.waiting[key] = ch
	c.a.clients.mu.Unlock()
	defer func() {
		c.a.clients.mu.Lock()
		delete(c.a.clients.waiting, key)
		c.a.clients.mu.Unlock()
	}()
	c.emit(Event{Type: "tool_request", Tool: &ToolEvent{ID: id, Name: c.spec.Name, Arguments: string(args), Status: "waiting"}})
	select {
	case ans := <-ch:
		if ans.IsError {
			return "", errors.New(ans.Content)
		}
		AddResultImages(ctx, ans.Images...) // checked by AnswerClientCall
		return ans.Content, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// callIDKey carries the running call's id to its tool (client tools need it).
type callIDKey struct{}

// maxHiddenTools bounds a turn's HideTools.
const maxHiddenTools = 256

// CheckClientTools reports what is wrong with a turn's client tools and hidden tools (a
// memory.ErrInvalid): too many, a bad or repeated name, parameters that are not a JSON Schema
// object, or hidden tools in a turn that is not the owner's. Client tools run in the client
// that sent the turn (an editor, an OpenAI client of /v1, an end user's included): whoever asks
// may have its own client's tools called.
func CheckClientTools(req TurnRequest) error {
	if len(req.HideTools) > 0 && !OwnerScope(req.Scope) {
		return fmt.Errorf("hidden tools are for the owner's sessions only (this one's scope is %s): %w", req.Scope, memory.ErrInvalid)
	}
	if _, err := clientSpecs(req.ClientTools, req.HideTools, nil); err != nil {
		return fmt.Errorf("%w: %w", err, memory.ErrInvalid)
	}
	return nil
}

// clientSpecs checks tools and returns their specs, normalized by norm when it is not nil.
func clientSpecs(tools []ClientTool, hide []string, norm func(llm.Tool, string) (llm.Tool, error)) ([]llm.Tool, error) {
	if len(tools) > MaxClientTools {
		return nil, fmt.Errorf("%d client tools, at most %d", len(tools), MaxClientTools)
	}
	if len(hide) > maxHiddenTools {
		return nil, fmt.Errorf("%d hidden tools, at most %d", len(hide), maxHiddenTools)
	}
	if norm == nil {
		norm = func(t llm.Tool, _ string) (llm.Tool, error) { t, _, err := llm.NormalizeTool(t); return t, err }
	}
	seen := map[string]bool{}
	specs := make([]llm.Tool, 0, len(tools))
	for i, ct := range tools {
		if !clientToolName.MatchString(ct.Name) {
			return nil, fmt.Errorf("client tool %d: name %q must match ^[a-zA-Z0-9_-]{1,64}$", i+1, ct.Name)
		}
		if seen[ct.Name] {
			return nil, fmt.Errorf("client tool %q is given twice", ct.Name)
		}
		seen[ct.Name] = true
		params := ct.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		spec, err := norm(llm.Tool{Name: ct.Name, Description: ct.Description, Parameters: params}, "client")
		if err != nil {
			return nil, fmt.Errorf("client tool %q: %w", ct.Name, err)
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// clientEntries checks a turn's client tools and returns them as tool entries.
func (t *turn) clientEntries() (map[string]toolEntry, error) {
	if len(t.req.ClientTools) == 0 && len(t.req.HideTools) == 0 {
		return nil, nil
	}
	if err := CheckClientTools(t.req); err != nil {
		return nil, err
	}
	specs, err := clientSpecs(t.req.ClientTools, t.req.HideTools, t.a.normalize)
	if err != nil {
		return nil, err
	}
	out := make(map[string]toolEntry, len(specs))
	for _, spec := range specs {
		out[spec.Name] = toolEntry{tool: clientTool{a: t.a, turn: t.req.TurnID, spec: spec, emit: t.emit}, spec: spec, source: "client", vis: VisibilityAny}
	}
	return out, nil
}

// ScopeSource makes the tools of source (a plugin) offered in session only; "" unscopes it.
// The kernel scopes the plugins a client adds for one session (an editor's MCP servers).
func (a *Agent) ScopeSource(source, session string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.scoped == nil {
		a.scoped = map[string]string{}
	}
	if session == "" {
		delete(a.scoped, source)
		return
	}
	a.scoped[source] = session
}
