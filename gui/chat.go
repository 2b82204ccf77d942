package gui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"

	"github.com/hologramagent/hologram/kernel/client"
)

// ChatOptions configure a [ChatVM].
type ChatOptions struct {
	// Session is the session shown first: "" means "main" ("quick" in Quick mode).
	Session string
	// Quick binds the view-model to one fixed session, created when missing; the view shows
	// no sessions list.
	Quick bool
	// Channel is sent with every turn; "" means "gui".
	Channel string
	// Trace, when set, is called with ("message", [TraceMessage]) when a message is complete in
	// the view-model, ("history", [TraceHistory]) when a history is loaded and with ("error",
	// text) when an error is shown. It may be called from any goroutine.
	Trace func(kind string, v any)
	// Play plays a reply spoken aloud (a WAV file) until it ends or ctx is cancelled; nil is
	// [PlayWAV] (chat_speak.go).
	Play func(ctx context.Context, wav string) error
	// Record records the microphone into a new WAV file at path until ctx is done; nil is
	// [RecordWAV] (chat_mic.go).
	Record func(ctx context.Context, path string) error
	// Screenshot, when set, captures the screen as PNG: the turns of the owner's sessions then
	// offer the model the client-executed screenshot tool (chat_screenshot.go).
	Screenshot func(ctx context.Context) ([]byte, error)
}

// TraceMessage is what [ChatOptions].Trace receives for a completed message.
type TraceMessage struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// TraceHistory is what [ChatOptions].Trace receives ("history") when a session's history is
// in the view-model.
type TraceHistory struct {
	Session  string `json:"session"`
	Messages int    `json:"messages"`
}

// Roles of a [ChatMessage].
const (
	ChatRoleUser      = "user"
	ChatRoleAssistant = "assistant"
	// ChatRoleError is an error shown in the chat: a turn that failed or was not sent.
	ChatRoleError = "error"
)

// ChatMessage is one message as the chat shows it: a user message, an assistant reply with the
// tool calls of its turn, or an error.
type ChatMessage struct {
	Role string
	// Text is Markdown (plain text for errors).
	Text        string
	Tools       []ChatTool
	Attachments []ChatAttachment
	TurnID      string
	Time        time.Time
	// Streaming is true while the reply still grows.
	Streaming bool
	// Stopped says the user stopped the turn before it finished.
	Stopped bool
	// ID is the stored message (the first of an assistant turn); 0 until the history has it.
	ID int64
	// Branch is set where the session's branches part (‹Index/Count›): regenerated replies
	// and edited messages (chat_branches.go).
	Branch *client.Branch
	// Usage is a finished reply's token counts and time; Model the model that answered.
	Usage *client.Usage
	Model string
	// Notes are the kernel's notes on the turn (a voice message left untranscribed…).
	Notes []string
	// Uploading says how far the turn's streamed attachments are, while they go ("" after).
	Uploading string

	retry *chatRetry // an error's way to try again ([ChatVM.Retry]); nil: none
}

// ChatTool is a tool call shown inline in a reply. Status is "running", "ok", "error",
// "denied", "cancelled", "timeout" or "skipped".
type ChatTool struct {
	ID        string
	Name      string
	Arguments string
	Result    string
	Status    string
}

// ChatAttachment is a file a message carries. Data holds an image's bytes when this app sent
// it; attachments loaded from history carry none (only their name and size).
type ChatAttachment struct {
	Kind string // "text", "image" or "audio"
	Name string
	MIME string
	Size int64
	Data []byte
}

// ChatChangeKind says what changed in a [ChatVM].
type ChatChangeKind int

// What a [ChatChange] reports.
const (
	// ChatSessionsChanged: the sessions list.
	ChatSessionsChanged ChatChangeKind = iota
	// ChatSessionChanged: the current session switched; everything it shows is new.
	ChatSessionChanged
	// ChatMessagesChanged: the session's messages were replaced (history loaded, a failed
	// send taken back).
	ChatMessagesChanged
	// ChatMessageAdded: message Index was appended.
	ChatMessageAdded
	// ChatMessageChanged: message Index changed (a delta, a tool event, the end of a turn).
	ChatMessageChanged
	// ChatBusyChanged: a turn started or ended.
	ChatBusyChanged
	// ChatDraftChanged: the draft was set by the view-model (cleared by a send, restored
	// after a failed one).
	ChatDraftChanged
	// ChatAttachmentsChanged: the pending attachments.
	ChatAttachmentsChanged
	// ChatInstructionsChanged: the session's system prompt or model.
	ChatInstructionsChanged
	// ChatErrorChanged: [ChatVM.Err].
	ChatErrorChanged
	// ChatOlderLoaded: Index older messages were put in front ([ChatVM.LoadOlder]).
	ChatOlderLoaded
)

// ChatChange is one change of a [ChatVM], reported to its listeners.
type ChatChange struct {
	Kind ChatChangeKind
	// Session is the session the change is about (listeners ignore other sessions').
	Session string
	// Index is the message of ChatMessageAdded and ChatMessageChanged.
	Index int
}

// chatHistoryLimit is how many stored messages (events: a tool call and its result count) a
// history page holds: a session opens with its newest page and scrolling to the top reads the
// page before it (chat_pages.go), so a long chat never loads whole.
const chatHistoryLimit = 60

// chatCallTimeout bounds the calls the view-model makes on its own (cancel, sessions refresh).
const chatCallTimeout = 10 * time.Second

// Errors of [ChatVM.Send] a view need not show: nothing to send, or a turn already runs.
var (
	ErrChatEmpty = errors.New("nothing to send")
	ErrChatBusy  = errors.New("a turn is running in this session")
)

// ChatVM is the chat's view-model: the sessions, the current session's messages, the drafts
// and pending attachments of each session, and the running turns. It talks to the kernel only
// through a [client.Service]. Methods are safe for concurrent use; the ones that take a
// context do network I/O and belong on a goroutine. Listeners run through fyne.Do.
type ChatVM struct {
	svc  client.Service
	opts ChatOptions
	do   func(func()) // fyne.Do

	wg sync.WaitGroup // running turns, cancels and loads (Go)

	lmu       sync.Mutex
	listeners []func(ChatChange)
	view      func(ChatChange) // the one view showing the view-model (the latest NewChatView)

	mu       sync.Mutex
	sessions []client.Session // most recent first
	current  string
	state    map[string]*chatSession
	err      error
	models   []string // the configured providers' models, for the model picker
}

// chatSession is what the view-model keeps of one session.
type chatSession struct {
	msgs   []ChatMessage
	loaded bool
	// hist is the stored history msgs came from (its oldest pages may be loaded later), more
	// says older pages exist (chat_pages.go).
	hist  []client.Message
	more  bool
	draft string
	atts  []client.File // pending: a video or large file is kept as a path and streamed at send
	turn  *chatTurn
}

// chatTurn is a running turn.
type chatTurn struct {
	cancel  context.CancelFunc
	id      string // from the "turn" event
	msg     int    // the assistant message
	started bool   // the kernel accepted the turn
	stopped bool   // the user pressed Stop
}

// NewChatVM returns a chat view-model over svc. It does no I/O: call [ChatVM.Reload] (the view
// does) to load the sessions and the history.
func NewChatVM(svc client.Service, o ChatOptions) *ChatVM {
	if o.Session == "" {
		o.Session = "main"
		if o.Quick {
			o.Session = "quick"
		}
	}
	if o.Channel == "" {
		o.Channel = "gui"
	}
	return &ChatVM{svc: svc, opts: o, do: fyne.Do, current: o.Session, state: map[string]*chatSession{}}
}

// Quick reports whether the view-model is bound to one fixed session.
func (vm *ChatVM) Quick() bool { return vm.opts.Quick }

// OnChange adds a listener for changes. Listeners run on the UI goroutine (through fyne.Do)
// and read the state they need from the view-model.
func (vm *ChatVM) OnChange(fn func(ChatChange)) {
	vm.lmu.Lock()
	vm.listeners = append(vm.listeners, fn)
	vm.lmu.Unlock()
}

// setView makes fn the view's listener, replacing the previous view's: a view-model shows in
// one view at a time (App builds a new one when the language changes).
func (vm *ChatVM) setView(fn func(ChatChange)) {
	vm.lmu.Lock()
	vm.view = fn
	vm.lmu.Unlock()
}

func (vm *ChatVM) notify(cs ...ChatChange) {
	vm.lmu.Lock()
	ls := append([]func(ChatChange){}, vm.listeners...)
	if vm.view != nil {
		ls = append([]func(ChatChange){vm.view}, ls...)
	}
	vm.lmu.Unlock()
	if len(ls) == 0 || len(cs) == 0 {
		return
	}
	vm.do(func() {
		for _, c := range cs {
			for _, l := range ls {
				l(c)
			}
		}
	})
}

func (vm *ChatVM) trace(kind string, v any) {
	if vm.opts.Trace != nil {
		vm.opts.Trace(kind, v)
	}
}

// sess returns a session's state, creating it. vm.mu is held.
func (vm *ChatVM) sess(id string) *chatSession {
	s := vm.state[id]
	if s == nil {
		s = &chatSession{}
		vm.state[id] = s
	}
	return s
}

// Reload loads the sessions (creating the current one when it is missing) and the current
// session's history, as after a reconnect: drafts, pending attachments and running turns are
// kept, other sessions reload their history when next shown. The error is also kept in Err.
func (vm *ChatVM) Reload(ctx context.Context) error {
	err := vm.reload(ctx)
	vm.setErr(err)
	return err
}

func (vm *ChatVM) reload(ctx context.Context) error {
	list, err := vm.svc.Sessions(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", T("Could not load the sessions"), err)
	}
	vm.mu.Lock()
	cur := vm.current
	vm.mu.Unlock()
	found := false
	for _, s := range list {
		found = found || s.ID == cur
	}
	if !found {
		title := cur
		if vm.opts.Quick {
			title = T("Quick chat")
		}
		s, err := vm.svc.CreateSession(ctx, client.Session{ID: cur, Title: title})
		if err != nil && !errors.Is(err, client.ErrInvalid) { // ErrInvalid: 409, created meanwhile
			return fmt.Errorf("%s: %w", Tf("Could not create the session %s", cur), err)
		}
		if err == nil {
			list = append([]client.Session{s}, list...)
		}
	}
	models := vm.loadModelChoices(ctx) // the model picker's choices (chat_export.go)
	vm.mu.Lock()
	vm.sessions, vm.models = list, models
	for id, s := range vm.state {
		if id != cur {
			s.loaded = false
		}
	}
	vm.mu.Unlock()
	vm.notify(ChatChange{Kind: ChatSessionsChanged}, ChatChange{Kind: ChatInstructionsChanged, Session: cur})
	return vm.loadHistory(ctx, cur)
}

func (vm *ChatVM) setErr(err error) {
	vm.mu.Lock()
	changed := (err == nil) != (vm.err == nil) || (err != nil && err.Error() != vm.err.Error())
	vm.err = err
	vm.mu.Unlock()
	if !changed {
		return
	}
	if err != nil {
		vm.trace("error", err.Error())
	}
	vm.notify(ChatChange{Kind: ChatErrorChanged})
}

// Err is the error of the last load (sessions, history, instructions), nil once one succeeds.
func (vm *ChatVM) Err() error {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return vm.err
}

// Sessions returns the sessions, most recently updated first (none in Quick mode).
func (vm *ChatVM) Sessions() []client.Session {
	if vm.opts.Quick {
		return nil
	}
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return append([]client.Session(nil), vm.sessions...)
}

// Current returns the current session's ID.
func (vm *ChatVM) Current() string {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return vm.current
}

// SelectSession makes id the current session and loads its history unless it is loaded.
func (vm *ChatVM) SelectSession(ctx context.Context, id string) error {
	if vm.opts.Quick && id != vm.opts.Session {
		return fmt.Errorf("select session %s: the quick chat has one session", id)
	}
	vm.mu.Lock()
	if id == vm.current && vm.sess(id).loaded {
		vm.mu.Unlock()
		return nil
	}
	vm.current = id
	s := vm.sess(id)
	load := !s.loaded && s.turn == nil
	vm.mu.Unlock()
	vm.notify(ChatChange{Kind: ChatSessionChanged, Session: id})
	if !load {
		return nil
	}
	err := vm.loadHistory(ctx, id)
	vm.setErr(err)
	return err
}

// NewSession creates a session titled title and makes it current.
func (vm *ChatVM) NewSession(ctx context.Context, title string) (client.Session, error) {
	if vm.opts.Quick {
		return client.Session{}, errors.New("new session: the quick chat has one session")
	}
	s, err := vm.svc.CreateSession(ctx, client.Session{Title: strings.TrimSpace(title)})
	if err != nil {
		return client.Session{}, fmt.Errorf("%s: %w", T("Could not create the session"), err)
	}
	vm.mu.Lock()
	vm.sessions = append([]client.Session{s}, vm.sessions...)
	vm.current = s.ID
	vm.sess(s.ID).loaded = true
	vm.mu.Unlock()
	vm.notify(ChatChange{Kind: ChatSessionsChanged}, ChatChange{Kind: ChatSessionChanged, Session: s.ID})
	return s, nil
}

// Instructions returns the current session's system prompt and model.
func (vm *ChatVM) Instructions() client.Instructions {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	for _, s := range vm.sessions {
		if s.ID == vm.current {
			return client.Instructions{SystemPrompt: s.SystemPrompt, Model: s.Model}
		}
	}
	return client.Instructions{}
}

// SetInstructions replaces the current session's system prompt and model.
func (vm *ChatVM) SetInstructions(ctx context.Context, in client.Instructions) error {
	id := vm.Current()
	s, err := vm.svc.SetInstructions(ctx, id, in)
	if err != nil {
		return fmt.Errorf("%s: %w", Tf("Could not save the instructions of %s", id), err)
	}
	vm.mu.Lock()
	for i := range vm.sessions {
		if vm.sessions[i].ID == s.ID {
			vm.sessions[i] = s
		}
	}
	vm.mu.Unlock()
	vm.notify(ChatChange{Kind: ChatSessionsChanged}, ChatChange{Kind: ChatInstructionsChanged, Session: id})
	return nil
}

// Messages returns a copy of the current session's messages.
func (vm *ChatVM) Messages() []ChatMessage {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	msgs := vm.sess(vm.current).msgs
	out := make([]ChatMessage, len(msgs))
	for i, m := range msgs {
		out[i] = chatCopy(m)
	}
	return out
}

// Message returns a copy of the current session's message i.
func (vm *ChatVM) Message(i int) (ChatMessage, bool) {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	msgs := vm.sess(vm.current).msgs
	if i < 0 || i >= len(msgs) {
		return ChatMessage{}, false
	}
	return chatCopy(msgs[i]), true
}

func chatCopy(m ChatMessage) ChatMessage {
	m.Tools = append([]ChatTool(nil), m.Tools...)
	m.Attachments = append([]ChatAttachment(nil), m.Attachments...)
	return m
}

// CopyText returns message i's text for the clipboard ("" when there is none).
func (vm *ChatVM) CopyText(i int) string {
	m, _ := vm.Message(i)
	return m.Text
}

// Busy reports whether a turn runs in the current session.
func (vm *ChatVM) Busy() bool {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return vm.sess(vm.current).turn != nil
}

// Draft returns the current session's draft.
func (vm *ChatVM) Draft() string {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return vm.sess(vm.current).draft
}

// SetDraft sets the current session's draft (the view calls it as the user types; it reports
// no change).
func (vm *ChatVM) SetDraft(text string) {
	vm.mu.Lock()
	vm.sess(vm.current).draft = text
	vm.mu.Unlock()
}

// Go runs fn on a goroutine that [ChatVM.Wait] waits for: views start loads this way.
func (vm *ChatVM) Go(fn func()) {
	vm.wg.Add(1)
	go func() {
		defer vm.wg.Done()
		fn()
	}()
}

// Wait blocks until the turns, cancels and loads started so far (by Send, Stop and Go) have
// ended.
func (vm *ChatVM) Wait() { vm.wg.Wait() }
