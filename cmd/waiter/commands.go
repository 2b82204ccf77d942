package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/hologramagent/hologram/kernel/client"
)

// defaultSession is the kernel's default session, used where an id is needed.
const defaultSession = "main"

func (a *app) ask(ctx context.Context, args []string) error {
	fs := newFlags("ask")
	session := fs.String("session", "", "session id")
	var attach fileList
	fs.Var(&attach, "attach", "attach a text, image, audio or video `file` (repeatable)")
	text, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	files, err := readAttachments(attach)
	if err != nil {
		return err
	}
	input := strings.TrimSpace(strings.Join(text, " "))
	if input == "" && !isTerminal(a.stdin) && a.stdin != nil {
		b, err := io.ReadAll(io.LimitReader(a.stdin, 4<<20))
		if err != nil {
			return fmt.Errorf("read question from stdin: %w", err)
		}
		input = strings.TrimSpace(string(b))
	}
	if input == "" && !slices.ContainsFunc(files, func(f client.File) bool { return f.Kind == "audio" }) {
		return usagef("ask needs a question: waiter ask TEXT... (or a voice message: waiter ask --attach voice.ogg)")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	atts, err := client.UploadFiles(ctx, svc, files, uploadMeter(a.stderr, isTerminal(a.stderr)))
	if err != nil {
		return fmt.Errorf("attach %w", err)
	}
	p := newPrinter(a.stderr, a.stderr, a.getenv, false)
	res, err := svc.Chat(ctx, client.ChatRequest{Session: *session, Input: input, Channel: "waiter", Attachments: atts}, p.event)
	if err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, strings.TrimRight(res.Text, "\n"))
	return nil
}

// writeJSON prints v indented.
func (a *app) writeJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// table writes rows in columns two spaces apart; the first row is the header. Columns are aligned
// by display width, so CJK text (two terminal cells a rune) lines up too.
func (a *app) table(rows [][]string) error {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-displayWidth(c)+2))
			}
		}
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(a.stdout, b.String()); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// displayWidth is how many terminal cells s takes: two for East Asian wide runes (Han, kana,
// Hangul, fullwidth forms), none for combining marks, one otherwise.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul),
			r >= 0x3000 && r <= 0x303f,                             // CJK symbols and punctuation
			r >= 0xff01 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6: // fullwidth forms
			n += 2
		default:
			n++
		}
	}
	return n
}

// orDash shows empty cells as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine shortens s to its first line, at most n runes.
func oneLine(s string, n int) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	if cut {
		return s + " …"
	}
	return s
}

func (a *app) status(ctx context.Context, args []string) error {
	fs := newFlags("status")
	asJSON := fs.Bool("json", false, "print JSON")
	if pos, err := parse(fs, args, true); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("status takes no arguments")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	st, err := svc.Status(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return a.writeJSON(st)
	}
	providers := fmt.Sprint(st.Providers)
	if st.Providers == 0 {
		providers += " (add one with `waiter provider add`)"
	}
	return a.table([][]string{
		{"version", st.Version},
		{"pid", fmt.Sprint(st.PID)},
		{"data dir", orDash(st.DataDir)},
		{"socket", orDash(st.Socket)},
		{"started", st.Started.Local().Format(time.DateTime)},
		{"providers", providers},
		{"sessions", fmt.Sprint(st.Sessions)},
		{"tools", fmt.Sprint(st.Tools)},
		{"active turns", fmt.Sprint(st.ActiveTurns)},
		{"paused", yesNo(st.Paused)},
		{"ready", orDash(strings.Join(st.Ready, ", "))},
		{"pending", orDash(strings.Join(st.Pending, ", "))},
		{"embedding", a.embeddingRow(ctx, svc, st)},
	})
}

// embeddingRow is the status's embedding line (model.go), asked for separately from a kernel
// whose status does not carry it.
func (a *app) embeddingRow(ctx context.Context, svc client.Service, st client.Status) string {
	if st.Embedding != nil {
		return embeddingLine(*st.Embedding)
	}
	es, err := svc.Embedding(ctx)
	if err != nil {
		return "-"
	}
	return embeddingLine(es)
}

func (a *app) provider(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("provider needs a subcommand: test, detect, add, list or remove")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "add":
		return a.providerAdd(ctx, args)
	case "list":
		return a.providerList(ctx, args)
	case "test":
		return a.providerTest(ctx, args)
	case "detect":
		return a.providerDetect(ctx, args)
	case "remove", "rm":
		if err := refuseSecretFlags(args); err != nil {
			return err
		}
		if len(args) != 1 || strings.HasPrefix(args[0], "-") {
			return usagef("usage: waiter provider remove NAME")
		}
		svc, err := a.service()
		if err != nil {
			return err
		}
		if err := svc.RemoveProvider(ctx, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "provider %s removed\n", args[0])
		return nil
	}
	return usagef("unknown provider subcommand %q", sub)
}

func (a *app) providerAdd(ctx context.Context, args []string) error {
	fs := newFlags("provider add")
	baseURL := fs.String("base-url", "", "OpenAI-compatible base URL, e.g. https://api.example.com/v1")
	model := fs.String("model", "", "model id")
	proxy := fs.String("proxy", "", "proxy URL for this provider")
	priority := fs.Int("priority", 0, "fallback order, lower first")
	visionFlag := fs.String("vision", "auto", "whether the model takes images: yes, no, or auto (ask the server)")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: waiter provider add NAME --base-url URL --model M [--proxy URL] [--priority N] [--vision yes|no|auto] (the key comes from HOLOGRAM_API_KEY or stdin)")
	}
	var vision *bool
	switch strings.ToLower(*visionFlag) {
	case "yes", "true", "on":
		vision = new(true)
	case "no", "false", "off":
		vision = new(false)
	case "auto", "":
	default:
		return usagef("--vision is yes, no or auto, not %q", *visionFlag)
	}
	if *baseURL == "" || *model == "" {
		return usagef("provider add needs --base-url and --model")
	}
	key, err := a.readAPIKey(pos[0])
	if err != nil {
		return err
	}
	if key == "" {
		fmt.Fprintln(a.stderr, "note: no API key given; that is fine for a local server that needs none")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	p, err := svc.AddProvider(ctx, client.ProviderConfig{
		Name: pos[0], BaseURL: *baseURL, Model: *model, APIKey: key, Proxy: *proxy, Priority: *priority, Vision: vision,
	})
	if err != nil {
		return err
	}
	keyNote := "no key"
	if p.HasKey {
		keyNote = "key sealed"
	}
	fmt.Fprintf(a.stdout, "provider %s added: %s at %s (%s)\n", p.Name, p.Model, p.BaseURL, keyNote)
	return nil
}

// readAPIKey takes the key from HOLOGRAM_API_KEY, else one line of stdin (prompting with the
// input hidden when stdin is a terminal). It never looks at argv.
func (a *app) readAPIKey(name string) (string, error) {
	if k := strings.TrimSpace(a.getenv("HOLOGRAM_API_KEY")); k != "" {
		return k, nil
	}
	if a.stdin == nil {
		return "", nil
	}
	if isTerminal(a.stdin) {
		fmt.Fprintf(a.stderr, "API key for %s (input hidden; empty for none): ", name)
		k, err := readHidden(a.stdin)
		fmt.Fprintln(a.stderr)
		if err != nil {
			return "", fmt.Errorf("read API key: %w", err)
		}
		return strings.TrimSpace(k), nil
	}
	line, err := bufio.NewReader(a.stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("read API key from stdin: %w", err)
	}
	return strings.TrimSpace(line), nil
}

func (a *app) providerList(ctx context.Context, args []string) error {
	return runListing(ctx, a, args, listing[client.Provider]{
		name:   "provider list",
		fetch:  client.Service.Providers,
		header: []string{"NAME", "MODEL", "BASE URL", "PRIORITY", "KEY", "PROXY", "IMAGES"},
		row: func(p client.Provider) []string {
			images := "auto"
			if p.Vision != nil {
				images = yesNo(*p.Vision)
			}
			return []string{p.Name, p.Model, p.BaseURL, fmt.Sprint(p.Priority), yesNo(p.HasKey), orDash(p.Proxy), images}
		},
		empty: "no providers; add one with `waiter provider add NAME --base-url URL --model M`",
	})
}

func (a *app) tools(ctx context.Context, args []string) error {
	return runListing(ctx, a, args, listing[client.Tool]{
		name:   "tools",
		fetch:  client.Service.Tools,
		header: []string{"NAME", "SOURCE", "PARALLEL", "DESCRIPTION"},
		row: func(t client.Tool) []string {
			return []string{t.Name, t.Source, yesNo(t.ParallelSafe), oneLine(t.Description, 72)}
		},
	})
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func (a *app) session(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("session needs a subcommand: list, new, rename, delete or instructions")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "list", "ls":
		return a.sessionList(ctx, args)
	case "new":
		return a.sessionNew(ctx, args)
	case "rename":
		return a.sessionRename(ctx, args)
	case "delete", "rm":
		return a.sessionDelete(ctx, args)
	case "instructions":
		return a.sessionInstructions(ctx, args)
	}
	return usagef("unknown session subcommand %q", sub)
}

func (a *app) sessionList(ctx context.Context, args []string) error {
	return runListing(ctx, a, args, listing[client.Session]{
		name:   "session list",
		fetch:  client.Service.Sessions,
		header: []string{"ID", "TITLE", "MODEL", "UPDATED"},
		row: func(s client.Session) []string {
			model := s.Model
			if model == "" {
				model = "(default)"
			}
			return []string{s.ID, orDash(oneLine(s.Title, 40)), model, s.Updated.Local().Format(time.DateTime)}
		},
	})
}

func (a *app) sessionNew(ctx context.Context, args []string) error {
	fs := newFlags("session new")
	title := fs.String("title", "", "title")
	prompt := fs.String("system-prompt", "", "the session's system prompt")
	model := fs.String("model", "", "the session's model (empty: the default provider's)")
	channel := fs.String("channel", "", "where the session happens, e.g. qq")
	partner := fs.String("partner", "", "who the session is with")
	scope := fs.String("scope", "", "what the session may see: private (default), public or group:<id>")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("usage: waiter session new [--title T] [--system-prompt P] [--model M] [--channel C] [--partner P] [--scope S] [ID]")
	}
	if *scope != "" && client.CheckScope(*scope) != nil {
		return usagef("--scope must be private, public or group:<id>, got %q", *scope)
	}
	s := client.Session{Title: *title, SystemPrompt: *prompt, Model: *model, Channel: *channel, Partner: *partner, Scope: *scope}
	if len(pos) == 1 {
		s.ID = pos[0]
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	created, err := svc.CreateSession(ctx, s)
	if err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, created.ID)
	return nil
}

func (a *app) sessionInstructions(ctx context.Context, args []string) error {
	fs := newFlags("session instructions")
	prompt := fs.String("system-prompt", "", "new system prompt")
	model := fs.String("model", "", "new model (empty: the default provider's)")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: waiter session instructions ID [--system-prompt P] [--model M]")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	svc, err := a.service()
	if err != nil {
		return err
	}
	ss, err := svc.Sessions(ctx)
	if err != nil {
		return err
	}
	var cur *client.Session
	for i := range ss {
		if ss[i].ID == pos[0] {
			cur = &ss[i]
		}
	}
	if cur == nil {
		return fmt.Errorf("unknown session %q (see `waiter session list`): %w", pos[0], client.ErrNotFound)
	}
	if len(set) > 0 {
		in := client.Instructions{SystemPrompt: cur.SystemPrompt, Model: cur.Model}
		if set["system-prompt"] {
			in.SystemPrompt = *prompt
		}
		if set["model"] {
			in.Model = *model
		}
		updated, err := svc.SetInstructions(ctx, cur.ID, in)
		if err != nil {
			return err
		}
		cur = &updated
	}
	m := cur.Model
	if m == "" {
		m = "(default)"
	}
	sp := cur.SystemPrompt
	if sp == "" {
		sp = "(none)"
	}
	fmt.Fprintf(a.stdout, "session: %s\nmodel: %s\nsystem prompt:\n%s\n", cur.ID, m, sp)
	return nil
}

func (a *app) history(ctx context.Context, args []string) error {
	fs := newFlags("history")
	session := fs.String("session", defaultSession, "session id")
	limit := fs.Int("limit", 20, "number of messages (0: all)")
	asJSON := fs.Bool("json", false, "print JSON")
	if pos, err := parse(fs, args, true); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("history takes no arguments (use --session ID)")
	}
	if *limit < 0 {
		return usagef("--limit must be 0 or more")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	msgs, err := svc.History(ctx, *session, *limit)
	if err != nil {
		return err
	}
	if msgs == nil {
		msgs = []client.Message{}
	}
	if *asJSON {
		return a.writeJSON(msgs)
	}
	for _, m := range msgs {
		head := m.Time.Local().Format("2006-01-02 15:04") + "  " + m.Role
		if m.Role == "tool" {
			head += " " + m.ToolName
			if m.ToolStatus != "" {
				head += " (" + m.ToolStatus + ")"
			}
		}
		fmt.Fprintf(a.stdout, "%s: %s\n", head, indent(m.Content))
		for _, c := range m.ToolCalls {
			fmt.Fprintf(a.stdout, "    → %s %s\n", c.Name, oneLine(c.Arguments, 200))
		}
	}
	return nil
}

// indent continues multi-line content under its header.
func indent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// listing is the shape of every listing command: no arguments, --json prints the items (an
// empty list as []), otherwise a table with a header; empty, when set, is said on stderr
// instead of an empty table.
type listing[T any] struct {
	name   string
	fetch  func(client.Service, context.Context) ([]T, error) // a method expression: client.Service.Tools
	header []string
	row    func(T) []string
	empty  string
}

func runListing[T any](ctx context.Context, a *app, args []string, l listing[T]) error {
	fs := newFlags(l.name)
	asJSON := fs.Bool("json", false, "print JSON")
	if pos, err := parse(fs, args, true); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("%s takes no arguments", l.name)
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	items, err := l.fetch(svc, ctx)
	if err != nil {
		return err
	}
	if items == nil {
		items = []T{}
	}
	if *asJSON {
		return a.writeJSON(items)
	}
	if len(items) == 0 && l.empty != "" {
		fmt.Fprintln(a.stderr, l.empty)
		return nil
	}
	rows := [][]string{l.header}
	for _, it := range items {
		rows = append(rows, l.row(it))
	}
	return a.table(rows)
}

// fileList is a repeatable file flag.
type fileList []string

func (f *fileList) String() string     { return strings.Join(*f, ",") }
func (f *fileList) Set(v string) error { *f = append(*f, v); return nil }

// uploadMeter shows a streamed file's progress on a terminal ("uploading clip.mp4: 45 %",
// redrawn in place); elsewhere nothing.
func uploadMeter(w io.Writer, tty bool) func(client.UploadProgress) {
	if !tty {
		return nil
	}
	return func(p client.UploadProgress) {
		end := ""
		if p.Sent == p.Size {
			end = "\n"
		}
		fmt.Fprintf(w, "\ruploading %s: %d %%%s", p.Name, p.Percent(), end)
	}
}

// readAttachments reads the --attach files ([client.OpenFile]): text, images, audio and video,
// told by content; a video and a large image or audio file are streamed when the message is sent.
func readAttachments(paths []string) ([]client.File, error) {
	if len(paths) > client.MaxAttachments {
		return nil, usagef("at most %d --attach files, got %d", client.MaxAttachments, len(paths))
	}
	out := make([]client.File, 0, len(paths))
	for _, p := range paths {
		f, err := client.OpenFile(p)
		if err != nil {
			return nil, fmt.Errorf("attach %s: %w", p, err)
		}
		out = append(out, f)
	}
	return out, nil
}
