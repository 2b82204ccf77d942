package gui

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// Send sends the current session's draft and pending attachments as one turn, streamed into
// the messages: the user message at once, then the reply as it grows. It returns at once;
// [ErrChatEmpty] and [ErrChatBusy] say nothing was sent. A turn that fails before the kernel
// accepts it gives back the draft and attachments and shows the error; a failure later shows it
// after the partial reply.
func (vm *ChatVM) Send() error {
	vm.mu.Lock()
	id := vm.current
	s := vm.sess(id)
	input := strings.TrimSpace(s.draft)
	switch {
	case s.turn != nil:
		vm.mu.Unlock()
		return ErrChatBusy
	case input == "" && len(s.atts) == 0:
		vm.mu.Unlock()
		return ErrChatEmpty
	}
	shown := input
	if input == "" {
		names := make([]string, len(s.atts))
		for i, a := range s.atts {
			names[i] = a.Name
		}
		shown = "[" + strings.Join(names, ", ") + "]"
		if !slices.ContainsFunc(s.atts, func(a client.File) bool { return a.Kind == "audio" }) {
			input = shown // a voice message is sent without text: the kernel makes its transcript the message
		}
	}
	req := client.ChatRequest{Session: id, Input: input, Channel: vm.opts.Channel, ClientTools: vm.clientToolsLocked(id)}
	draft, atts := s.draft, s.atts
	user := ChatMessage{Role: ChatRoleUser, Text: shown, Time: time.Now()}
	for _, a := range atts {
		user.Attachments = append(user.Attachments, chatAttachmentView(a))
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &chatTurn{cancel: cancel, msg: len(s.msgs) + 1}
	s.msgs = append(s.msgs, user, ChatMessage{Role: ChatRoleAssistant, Streaming: true, Time: time.Now()})
	s.draft, s.atts, s.turn = "", nil, t
	vm.wg.Add(1)
	vm.mu.Unlock()

	vm.trace("message", TraceMessage{Role: ChatRoleUser, Text: shown})
	vm.notify(
		ChatChange{Kind: ChatMessageAdded, Session: id, Index: t.msg - 1},
		ChatChange{Kind: ChatMessageAdded, Session: id, Index: t.msg},
		ChatChange{Kind: ChatDraftChanged, Session: id},
		ChatChange{Kind: ChatAttachmentsChanged, Session: id},
		ChatChange{Kind: ChatBusyChanged, Session: id},
	)
	go func() {
		defer vm.wg.Done()
		vm.runTurn(ctx, id, t, req, draft, atts)
	}()
	return nil
}

// runTurn streams one turn into session id's messages and ends it.
func (vm *ChatVM) runTurn(ctx context.Context, id string, t *chatTurn, req client.ChatRequest, draft string, atts []client.File) {
	defer t.cancel()
	var res client.ChatResult
	var err error
	// Videos and large files stream to the kernel first; a failure there is a turn never sent.
	if req.Attachments, err = client.UploadFiles(ctx, vm.svc, atts, func(p client.UploadProgress) { vm.uploading(id, t, p) }); err == nil {
		vm.uploading(id, t, client.UploadProgress{})
		res, err = vm.svc.Chat(ctx, req, func(ev client.ChatEvent) { vm.apply(id, t, ev) })
	}

	vm.mu.Lock()
	s := vm.sess(id)
	s.turn = nil
	var changes []ChatChange
	var traced []TraceMessage
	var errText string
	reply := &s.msgs[t.msg]
	reply.Streaming = false
	switch {
	case err == nil:
		if res.Text != "" {
			reply.Text = res.Text
		}
		reply.TurnID, reply.Usage = res.TurnID, res.Usage
		traced = append(traced, TraceMessage{Role: ChatRoleAssistant, Text: reply.Text})
		changes = append(changes, ChatChange{Kind: ChatMessageChanged, Session: id, Index: t.msg})
	case t.stopped:
		reply.Stopped = true
		changes = append(changes, ChatChange{Kind: ChatMessageChanged, Session: id, Index: t.msg})
	case !t.started:
		// Not sent: take the messages back, give the draft back (before what was typed since).
		s.msgs = s.msgs[:t.msg-1]
		if strings.TrimSpace(s.draft) == "" {
			s.draft = draft
		} else {
			s.draft = draft + "\n" + s.draft
		}
		s.atts = append(atts, s.atts...)
		if len(s.atts) > client.MaxAttachments {
			s.atts = s.atts[:client.MaxAttachments]
		}
		errText = Tf("Not sent: %s", chatErrText(err))
		s.msgs = append(s.msgs, ChatMessage{Role: ChatRoleError, Text: errText, Time: time.Now(), retry: &chatRetry{}})
		changes = append(changes,
			ChatChange{Kind: ChatMessagesChanged, Session: id},
			ChatChange{Kind: ChatDraftChanged, Session: id},
			ChatChange{Kind: ChatAttachmentsChanged, Session: id})
	default:
		if reply.Text == "" && len(reply.Tools) == 0 {
			s.msgs = s.msgs[:t.msg]
		}
		errText = chatErrText(err)
		s.msgs = append(s.msgs, ChatMessage{Role: ChatRoleError, Text: errText, TurnID: t.id, Time: time.Now(),
			retry: &chatRetry{input: req.Input, atts: atts}})
		changes = append(changes, ChatChange{Kind: ChatMessagesChanged, Session: id})
	}
	vm.mu.Unlock()

	for _, m := range traced {
		vm.trace("message", m)
	}
	if errText != "" {
		vm.trace("error", errText)
	}
	changes = append(changes, ChatChange{Kind: ChatBusyChanged, Session: id})
	vm.notify(changes...)
	if t.started {
		vm.refreshSessions()
	}
	if err == nil {
		vm.refreshIDs(id) // the stored ids, for regenerate, edit and branches
	}
}

// chatErrText is how an error of a turn reads in the chat.
func chatErrText(err error) string {
	var te *client.TurnError
	if errors.As(err, &te) {
		return te.Message
	}
	return err.Error()
}

// refreshSessions re-reads the sessions list (their order changes as they are used).
func (vm *ChatVM) refreshSessions() {
	if vm.opts.Quick {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), chatCallTimeout)
	defer cancel()
	list, err := vm.svc.Sessions(ctx)
	if err != nil {
		return // shown by the next load; the turn itself went through
	}
	vm.mu.Lock()
	vm.sessions = list
	vm.mu.Unlock()
	vm.notify(ChatChange{Kind: ChatSessionsChanged})
}

// apply folds one event of a running turn into its reply.
func (vm *ChatVM) apply(id string, t *chatTurn, ev client.ChatEvent) {
	vm.mu.Lock()
	reply := &vm.sess(id).msgs[t.msg]
	changed := true
	switch ev.Type {
	case client.EventTurn:
		t.id, t.started = ev.TurnID, true
		reply.TurnID = ev.TurnID
		changed = false
	case client.EventDelta:
		reply.Text += ev.Text
	case client.EventToolCall, client.EventToolResult, client.EventToolRequest:
		if ev.Tool == nil {
			changed = false
			break
		}
		if ev.Type == client.EventToolRequest && ev.Tool.Name == screenshotTool && vm.opts.Screenshot != nil {
			turn := ev.TurnID
			if turn == "" {
				turn = t.id
			}
			vm.wg.Add(1)
			go vm.answerScreenshot(turn, ev.Tool.ID)
		}
		chatSetTool(reply, ChatTool{ID: ev.Tool.ID, Name: ev.Tool.Name, Arguments: ev.Tool.Arguments,
			Result: ev.Tool.Result, Status: ev.Tool.Status})
	case client.EventFinal:
		reply.Text = ev.Text
	case client.EventNotice:
		reply.Notes = append(reply.Notes, ev.Text)
	case client.EventTranscript: // the voice message's words, in place of its name
		if user := &vm.sess(id).msgs[t.msg-1]; user.Role == ChatRoleUser {
			user.Text = ev.Text
		}
		vm.mu.Unlock()
		vm.notify(ChatChange{Kind: ChatMessageChanged, Session: id, Index: t.msg - 1})
		return
	default: // reasoning is not shown; errors end the turn in runTurn
		changed = false
	}
	vm.mu.Unlock()
	if changed {
		vm.notify(ChatChange{Kind: ChatMessageChanged, Session: id, Index: t.msg})
	}
}

// uploading shows a streamed attachment's progress on the turn's reply (a zero p clears it).
func (vm *ChatVM) uploading(id string, t *chatTurn, p client.UploadProgress) {
	text := ""
	if p.Name != "" {
		text = Tf("Uploading %s: %d %%", p.Name, p.Percent())
	}
	vm.mu.Lock()
	reply := &vm.sess(id).msgs[t.msg]
	changed := reply.Uploading != text
	reply.Uploading = text
	vm.mu.Unlock()
	if changed {
		vm.notify(ChatChange{Kind: ChatMessageChanged, Session: id, Index: t.msg})
	}
}

// Stop cancels the current session's running turn: the kernel is asked to cancel it (once its
// ID is known) and the stream is closed.
func (vm *ChatVM) Stop() {
	vm.mu.Lock()
	t := vm.sess(vm.current).turn
	if t == nil || t.stopped {
		vm.mu.Unlock()
		return
	}
	t.stopped = true
	turnID := t.id
	vm.wg.Add(1)
	vm.mu.Unlock()
	go func() {
		defer vm.wg.Done()
		defer t.cancel()
		if turnID == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), chatCallTimeout)
		defer cancel()
		_ = vm.svc.Cancel(ctx, turnID) // ErrNotFound: it just ended; other errors: the stream is closed anyway
	}()
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
