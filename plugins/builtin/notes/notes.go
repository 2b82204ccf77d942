package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hologramagent/hologram/plugins/builtin/internal/toolargs"
	"github.com/hologramagent/hologram/plugins/sdk"
)

// Bounds of notes.
const (
	maxTitle          = 200       // runes
	maxNoteBytes      = 256 << 10 // bytes of one note's body
	maxCommitBytes    = 60 << 10  // the kernel takes at most 64 KiB per commit
	defaultMaxResults = 10
	maxMaxResults     = 100
	commitTimeout     = 30 * time.Second
)

// idRe is what a note id (its file name without .md) may be.
var idRe = regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N}._-]{0,99}$`)

// notes is the plugin: a directory of Markdown files, opened with os.Root so no id can reach
// outside it.
type notes struct {
	dir  string
	root *os.Root
	now  func() time.Time

	mu sync.Mutex // serialises changes (ids are chosen and files written under it)
}

// newNotes opens dir. now is the clock (the notes' modification times).
func newNotes(dir string, now func() time.Time) (*notes, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("notes directory: %w", err)
	}
	return &notes{dir: dir, root: r, now: now}, nil
}

// Close closes the directory.
func (n *notes) Close() error { return n.root.Close() }

// plugin returns the sdk plugin.
func (n *notes) plugin() sdk.Plugin {
	obj := func(props string, required ...string) json.RawMessage {
		if len(required) == 0 { // "required": null is an invalid schema to OpenAI-compatible servers
			return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
		}
		req, _ := json.Marshal(required)
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `}`)
	}
	return sdk.Plugin{Name: "notes", Version: "1.0.0",
		Tools: []sdk.Tool{
			{Name: "notes_create", Title: "Create a note",
				Description: "Creates a Markdown note with a title and a body and remembers it. Returns the note's id.",
				InputSchema: obj(`"title":{"type":"string"},"body":{"type":"string"}`, "title", "body"), Run: n.create},
			{Name: "notes_read", Title: "Read a note", Description: "Returns a note's Markdown by id.",
				InputSchema: obj(`"id":{"type":"string"}`, "id"), ReadOnly: true, Run: n.read},
			{Name: "notes_edit", Title: "Edit a note",
				Description: "Changes a note: a new title, a new body, or text appended to the body (body and append exclude each other).",
				InputSchema: obj(`"id":{"type":"string"},"title":{"type":"string"},"body":{"type":"string"},"append":{"type":"string"}`, "id"),
				Run:         n.edit},
			{Name: "notes_delete", Title: "Delete a note", Description: "Deletes a note by id.",
				InputSchema: obj(`"id":{"type":"string"}`, "id"), Run: n.delete},
			{Name: "notes_list", Title: "List notes", Description: "Lists the notes, most recently changed first: id, title, time.",
				InputSchema: obj(``), ReadOnly: true, Run: n.list},
			{Name: "notes_search", Title: "Search notes",
				Description: "Finds the notes whose title or body contain every word of the query (case-insensitive), best first.",
				InputSchema: obj(`"query":{"type":"string"},"max_results":{"type":"integer","minimum":1,"maximum":100}`, "query"),
				ReadOnly:    true, Run: n.search},
		},
		Start: func(ctx context.Context, k *sdk.Kernel) error {
			k.Logger().Info("notes started", "dir", n.dir)
			return nil
		}}
}

// note is one note as stored.
type note struct {
	ID, Title, Body string
	Updated         time.Time
}

// markdown renders the note's file.
func (nt note) markdown() string {
	return "# " + nt.Title + "\n\n" + strings.TrimRight(nt.Body, "\n") + "\n"
}

// parse reads a note's file; a file without a "# " heading (written by hand) has its id as
// title and its whole text as body.
func parse(id string, raw []byte, mod time.Time) note {
	s := strings.ReplaceAll(string(raw), "\r\n", "\n")
	nt := note{ID: id, Title: id, Body: s, Updated: mod}
	if first, rest, _ := strings.Cut(s, "\n"); strings.HasPrefix(first, "# ") {
		nt.Title = strings.TrimSpace(first[2:])
		nt.Body = strings.TrimPrefix(rest, "\n")
	}
	return nt
}

// checkTitle cleans and checks a title.
func checkTitle(t string) (string, error) {
	t = strings.Join(strings.Fields(t), " ")
	switch {
	case t == "":
		return "", errors.New("the title is empty")
	case utf8.RuneCountInString(t) > maxTitle:
		return "", fmt.Errorf("the title has %d characters, at most %d", utf8.RuneCountInString(t), maxTitle)
	}
	return t, nil
}

// checkBody checks a body's size and encoding.
func checkBody(b string) error {
	switch {
	case len(b) > maxNoteBytes:
		return fmt.Errorf("the body has %d bytes, at most %d", len(b), maxNoteBytes)
	case !utf8.ValidString(b) || strings.ContainsRune(b, 0):
		return errors.New("the body is not valid UTF-8 text")
	}
	return nil
}

// checkID checks an id given by the model.
func checkID(id string) (string, error) {
	id = strings.TrimSuffix(strings.TrimSpace(id), ".md")
	if !idRe.MatchString(id) {
		return "", fmt.Errorf("note id %q is not valid (letters, digits, . _ -; notes_list shows the ids)", id)
	}
	return id, nil
}

// idArg reads the arguments of a tool that takes only a note's id, and checks the id.
func idArg(args json.RawMessage) (string, error) {
	var a struct{ ID string }
	if err := toolargs.Decode(args, &a); err != nil {
		return "", err
	}
	return checkID(a.ID)
}

// slug makes an id from a title: letters and digits lower-cased, the rest as single dashes.
func slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if utf8.RuneCountInString(b.String()) >= 60 {
			break
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if s == "" {
		return "note"
	}
	return s
}

// load reads note id; a missing one is an error naming it.
func (n *notes) load(id string) (note, error) {
	fi, err := n.root.Stat(id + ".md")
	if err == nil && !fi.Mode().IsRegular() {
		return note{}, fmt.Errorf("note %s is not a regular file", id)
	}
	var raw []byte
	if err == nil {
		raw, err = n.root.ReadFile(id + ".md")
	}
	if errors.Is(err, fs.ErrNotExist) {
		return note{}, fmt.Errorf("no note %q (notes_list shows the ids)", id)
	}
	if err != nil {
		return note{}, fmt.Errorf("reading note %s: %w", id, err)
	}
	return parse(id, raw, fi.ModTime()), nil
}

// save writes nt with the clock's time as its modification time.
func (n *notes) save(nt note, create bool) error {
	flag := os.O_WRONLY | os.O_TRUNC
	if create {
		flag = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	}
	fh, err := n.root.OpenFile(nt.ID+".md", flag, 0o600)
	if err != nil {
		return fmt.Errorf("writing note %s: %w", nt.ID, err)
	}
	if _, err := fh.WriteString(nt.markdown()); err != nil {
		fh.Close()
		return fmt.Errorf("writing note %s: %w", nt.ID, err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("writing note %s: %w", nt.ID, err)
	}
	now := n.now()
	if err := n.root.Chtimes(nt.ID+".md", now, now); err != nil {
		return fmt.Errorf("writing note %s: %w", nt.ID, err)
	}
	return nil
}

// outsideTurn returns a context that carries no turn, so a memory commit is stored
// owner-private on channel plugin:notes even when a channel's turn asked for the note; it ends
// with ctx or after commitTimeout.
func outsideTurn(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithTimeout(context.Background(), commitTimeout)
	stop := context.AfterFunc(ctx, cancel)
	return c, func() { stop(); cancel() }
}

// remember commits text about note nt to memory and says how it went, for the tool's result.
func (n *notes) remember(ctx context.Context, k *sdk.Kernel, nt note, action, text string) string {
	if len(text) > maxCommitBytes {
		text = strings.ToValidUTF8(text[:maxCommitBytes], "") + "…"
	}
	cctx, cancel := outsideTurn(ctx)
	defer cancel()
	res, err := k.Commit(cctx, text, map[string]string{"note": nt.ID, "action": action, "title": nt.Title})
	if err != nil {
		k.Logger().Warn("note not committed to memory", "note", nt.ID, "err", err)
		return "not remembered: " + err.Error()
	}
	return fmt.Sprintf("remembered (memory event %d, %s)", res.ID, res.Scope)
}

// memoryText is what memory holds of a note.
func memoryText(nt note) string {
	return fmt.Sprintf("Note “%s” (notes:%s)\n\n%s", nt.Title, nt.ID, strings.TrimSpace(nt.Body))
}

// create is notes_create.
func (n *notes) create(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct{ Title, Body string }
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	title, err := checkTitle(a.Title)
	if err != nil {
		return sdk.Result{}, err
	}
	if err := checkBody(a.Body); err != nil {
		return sdk.Result{}, err
	}
	nt := note{Title: title, Body: a.Body}
	n.mu.Lock()
	base := slug(title)
	for i := 1; ; i++ {
		nt.ID = base
		if i > 1 {
			nt.ID = fmt.Sprintf("%s-%d", base, i)
		}
		if _, err := n.root.Lstat(nt.ID + ".md"); errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	err = n.save(nt, true)
	n.mu.Unlock()
	if err != nil {
		return sdk.Result{}, err
	}
	mem := n.remember(ctx, k, nt, "create", memoryText(nt))
	return sdk.Text(fmt.Sprintf("created note %s (%s/%s.md); %s", nt.ID, n.dir, nt.ID, mem)), nil
}

// read is notes_read.
func (n *notes) read(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	id, err := idArg(args)
	if err != nil {
		return sdk.Result{}, err
	}
	nt, err := n.load(id)
	if err != nil {
		return sdk.Result{}, err
	}
	return sdk.Text(nt.markdown()), nil
}

// edit is notes_edit.
func (n *notes) edit(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct {
		ID     string  `json:"id"`
		Title  *string `json:"title"`
		Body   *string `json:"body"`
		Append *string `json:"append"`
	}
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	id, err := checkID(a.ID)
	if err != nil {
		return sdk.Result{}, err
	}
	switch {
	case a.Title == nil && a.Body == nil && a.Append == nil:
		return sdk.Result{}, errors.New("nothing to change: give title, body or append")
	case a.Body != nil && a.Append != nil:
		return sdk.Result{}, errors.New("give body (replace) or append, not both")
	}
	n.mu.Lock()
	nt, err := n.load(id)
	if err != nil {
		n.mu.Unlock()
		return sdk.Result{}, err
	}
	if a.Title != nil {
		if nt.Title, err = checkTitle(*a.Title); err != nil {
			n.mu.Unlock()
			return sdk.Result{}, err
		}
	}
	if a.Body != nil {
		nt.Body = *a.Body
	}
	if a.Append != nil {
		nt.Body = strings.TrimRight(nt.Body, "\n") + "\n" + *a.Append
	}
	if err = checkBody(nt.Body); err == nil {
		err = n.save(nt, false)
	}
	n.mu.Unlock()
	if err != nil {
		return sdk.Result{}, err
	}
	mem := n.remember(ctx, k, nt, "edit", memoryText(nt))
	return sdk.Text(fmt.Sprintf("edited note %s; %s", nt.ID, mem)), nil
}

// delete is notes_delete.
func (n *notes) delete(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	id, err := idArg(args)
	if err != nil {
		return sdk.Result{}, err
	}
	n.mu.Lock()
	nt, err := n.load(id)
	if err == nil {
		err = n.root.Remove(id + ".md")
	}
	n.mu.Unlock()
	if err != nil {
		return sdk.Result{}, err
	}
	mem := n.remember(ctx, k, nt, "delete", fmt.Sprintf("Note “%s” (notes:%s) was deleted.", nt.Title, nt.ID))
	return sdk.Text(fmt.Sprintf("deleted note %s; %s", id, mem)), nil
}

// all reads every note, most recently changed first.
func (n *notes) all() ([]note, error) {
	entries, err := fs.ReadDir(n.root.FS(), ".")
	if err != nil {
		return nil, fmt.Errorf("listing notes: %w", err)
	}
	var out []note
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || !e.Type().IsRegular() || !idRe.MatchString(id) {
			continue
		}
		nt, err := n.load(id)
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, nt)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.After(out[j].Updated)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// list is notes_list.
func (n *notes) list(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	if err := toolargs.Decode(args, &struct{}{}); err != nil {
		return sdk.Result{}, err
	}
	all, err := n.all()
	if err != nil {
		return sdk.Result{}, err
	}
	if len(all) == 0 {
		return sdk.Text("no notes yet"), nil
	}
	var b strings.Builder
	for _, nt := range all {
		fmt.Fprintf(&b, "%s  %s  %s\n", nt.ID, nt.Updated.UTC().Format("2006-01-02 15:04"), nt.Title)
	}
	return sdk.Text(strings.TrimRight(b.String(), "\n")), nil
}

// search is notes_search: every word of the query must occur in the title or the body; title
// hits weigh three times a body's.
func (n *notes) search(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct {
		Query      string `json:"query"`
		MaxResults int    `json:"max_results"`
	}
	if err := toolargs.Decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	words := strings.Fields(strings.ToLower(a.Query))
	switch {
	case len(words) == 0:
		return sdk.Result{}, errors.New("query is required")
	case a.MaxResults < 0 || a.MaxResults > maxMaxResults:
		return sdk.Result{}, fmt.Errorf("max_results must be from 1 to %d, got %d", maxMaxResults, a.MaxResults)
	case a.MaxResults == 0:
		a.MaxResults = defaultMaxResults
	}
	all, err := n.all()
	if err != nil {
		return sdk.Result{}, err
	}
	type hit struct {
		nt    note
		score int
	}
	var hits []hit
	for _, nt := range all {
		title, body := strings.ToLower(nt.Title), strings.ToLower(nt.Body)
		score := 0
		for _, w := range words {
			c := 3*strings.Count(title, w) + strings.Count(body, w)
			if c == 0 {
				score = 0
				break
			}
			score += c
		}
		if score > 0 {
			hits = append(hits, hit{nt, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	if len(hits) == 0 {
		return sdk.Text(fmt.Sprintf("no note contains %q", a.Query)), nil
	}
	var b strings.Builder
	for i, h := range hits {
		if i == a.MaxResults {
			fmt.Fprintf(&b, "[%d more]\n", len(hits)-i)
			break
		}
		fmt.Fprintf(&b, "%s  %s\n  %s\n", h.nt.ID, h.nt.Title, snippet(h.nt.Body, words[0]))
	}
	return sdk.Text(strings.TrimRight(b.String(), "\n")), nil
}

// snippet is the line of body holding word (or its first line), trimmed.
func snippet(body, word string) string {
	lines := strings.Split(body, "\n")
	pick := ""
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if pick == "" {
			pick = l
		}
		if strings.Contains(strings.ToLower(l), word) {
			pick = l
			break
		}
	}
	pick = strings.TrimSpace(pick)
	if utf8.RuneCountInString(pick) > 160 {
		pick = string([]rune(pick)[:160]) + "…"
	}
	return pick
}
