package backup

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hologramagent/hologram/memory"
)

// ExportMarkdown writes the memory of src as a tar stream of Markdown files, for people to read:
//
//   - entities/<slug>.md per entity: its name as the title, kind, scope, pin, origin, its text,
//     and every triple it is part of (superseded and ended ones too) as a bullet with its
//     validity and the ids of its source events;
//   - log/<yyyy-mm-dd>.md per day with events (in opts.Location): each event's time, session,
//     speaker and content, tool calls and results summarised in one line each.
//
// Slugs are the entity's name in lower case with every run of characters other than letters and
// digits turned into one '-' (so never a path separator or ".."), at most 64 characters; an
// empty slug is "entity", and a slug already used gets "-2", "-3"… Entries carry the export time
// (opts.Clock) as their modification time. There is no Markdown import.
func ExportMarkdown(ctx context.Context, src Source, w io.Writer, opts Options) (err error) {
	snap, err := src.Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("export markdown: %w", err)
	}
	defer func() {
		if cerr := snap.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("export markdown: %w", cerr)
		}
	}()
	mw := &mdWriter{tw: tar.NewWriter(w), mod: opts.now().UTC(), loc: opts.loc()}

	// Triples by entity (subject or object), in id order.
	byEntity := map[int64][]memory.Triple{}
	if err := snap.Triples(ctx, func(t memory.Triple) error {
		byEntity[t.Subject] = append(byEntity[t.Subject], t)
		if t.Object != t.Subject {
			byEntity[t.Object] = append(byEntity[t.Object], t)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("export markdown: triples: %w", err)
	}
	slugs := map[string]bool{}
	if err := snap.Entities(ctx, func(e memory.Entity) error {
		name := "entities/" + uniqueSlug(slugs, e.Name) + ".md"
		return mw.file(name, entityMarkdown(e, byEntity[e.ID], mw.loc))
	}); err != nil {
		return fmt.Errorf("export markdown: entities: %w", err)
	}

	titles := map[string]string{}
	if err := snap.Sessions(ctx, func(s memory.Session) error {
		titles[s.ID] = s.Title
		return nil
	}); err != nil {
		return fmt.Errorf("export markdown: sessions: %w", err)
	}
	var day string
	var buf bytes.Buffer
	flush := func() error {
		if day == "" {
			return nil
		}
		return mw.file("log/"+day+".md", buf.Bytes())
	}
	if err := snap.Events(ctx, true, func(e memory.Event) error {
		t := e.Time.In(mw.loc)
		if d := t.Format(time.DateOnly); d != day {
			if err := flush(); err != nil {
				return err
			}
			day = d
			buf.Reset()
			fmt.Fprintf(&buf, "# %s\n", d)
		}
		eventMarkdown(&buf, e, t, titles[e.Session])
		return nil
	}); err != nil {
		return fmt.Errorf("export markdown: events: %w", err)
	}
	if err := flush(); err != nil {
		return fmt.Errorf("export markdown: events: %w", err)
	}
	if err := mw.tw.Close(); err != nil {
		return fmt.Errorf("export markdown: %w", err)
	}
	return nil
}

// mdWriter writes regular files into a tar stream.
type mdWriter struct {
	tw  *tar.Writer
	mod time.Time
	loc *time.Location
}

func (mw *mdWriter) file(name string, body []byte) error {
	if err := mw.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644,
		Size: int64(len(body)), ModTime: mw.mod}); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if _, err := mw.tw.Write(body); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// maxSlug bounds a slug, in runes.
const maxSlug = 64

// slug is a file name for an entity name: see [ExportMarkdown].
func slug(name string) string {
	var b strings.Builder
	n := 0
	dash := false
	for _, r := range strings.ToLower(name) {
		if n >= maxSlug {
			break
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
				n++
			}
			dash = false
			b.WriteRune(r)
			n++
			continue
		}
		dash = true
	}
	s := strings.TrimRight(b.String(), "-")
	if s == "" || !utf8.ValidString(s) {
		return "entity"
	}
	return s
}

// uniqueSlug is slug(name), numbered when used already, and marks it used.
func uniqueSlug(used map[string]bool, name string) string {
	base := slug(name)
	s := base
	for i := 2; used[s]; i++ {
		s = base + "-" + strconv.Itoa(i)
	}
	used[s] = true
	return s
}

// entityMarkdown renders one entity with its triples.
func entityMarkdown(e memory.Entity, ts []memory.Triple, loc *time.Location) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", oneLine(e.Name))
	fmt.Fprintf(&b, "- Kind: %s\n", e.Kind)
	fmt.Fprintf(&b, "- Scope: %s\n", e.Scope)
	fmt.Fprintf(&b, "- Pinned: %s\n", yesNo(e.Pinned))
	if e.Origin != "" {
		fmt.Fprintf(&b, "- Origin: %s\n", e.Origin)
	}
	fmt.Fprintf(&b, "- Created: %s\n", e.Created.In(loc).Format(time.RFC3339))
	fmt.Fprintf(&b, "- Updated: %s\n", e.Updated.In(loc).Format(time.RFC3339))
	if text := strings.TrimSpace(e.Text); text != "" {
		fmt.Fprintf(&b, "\n%s\n", text)
	}
	if len(ts) > 0 {
		b.WriteString("\n## Facts\n\n")
		for _, t := range ts {
			fmt.Fprintf(&b, "- %s — %s → %s", oneLine(t.SubjectName), oneLine(t.Predicate), oneLine(t.ObjectName))
			var notes []string
			if !t.ValidFrom.IsZero() {
				notes = append(notes, "valid from "+t.ValidFrom.In(loc).Format(time.RFC3339))
			}
			if !t.ValidTo.IsZero() {
				notes = append(notes, "until "+t.ValidTo.In(loc).Format(time.RFC3339))
			}
			if t.SupersededBy != 0 {
				notes = append(notes, fmt.Sprintf("superseded by #%d", t.SupersededBy))
			}
			if t.Current() {
				notes = append(notes, "current")
			}
			if t.Pinned {
				notes = append(notes, "pinned")
			}
			if len(t.Sources) > 0 {
				ids := make([]string, len(t.Sources))
				for i, id := range slices.Sorted(slices.Values(t.Sources)) {
					ids[i] = strconv.FormatInt(id, 10)
				}
				notes = append(notes, "source events "+strings.Join(ids, ", "))
			} else if t.Origin != "" {
				notes = append(notes, "origin "+t.Origin)
			}
			fmt.Fprintf(&b, " (#%d; %s)\n", t.ID, strings.Join(notes, "; "))
		}
	}
	return b.Bytes()
}

// eventMarkdown renders one event of a day log.
func eventMarkdown(b *bytes.Buffer, e memory.Event, t time.Time, title string) {
	session := e.Session
	if title != "" {
		session = fmt.Sprintf("%s (%s)", oneLine(title), e.Session)
	}
	fmt.Fprintf(b, "\n## %s · %s · %s\n\n", t.Format(time.TimeOnly), session, speaker(e))
	switch {
	case e.Role == memory.RoleTool:
		status := e.ToolStatus
		if status == "" {
			status = "ok"
		}
		fmt.Fprintf(b, "Tool result of `%s` (%s, %d characters).\n", oneLine(e.ToolName), status, utf8.RuneCountInString(e.Content))
	default:
		if c := strings.TrimSpace(e.Content); c != "" {
			fmt.Fprintf(b, "%s\n", c)
		}
		for _, c := range e.ToolCalls {
			fmt.Fprintf(b, "\nCalled tool `%s` (%d characters of arguments).\n", oneLine(c.Name), utf8.RuneCountInString(c.Arguments))
		}
	}
	for _, bl := range e.Blocks {
		name := bl.Name
		if name == "" {
			name = bl.ID
		}
		fmt.Fprintf(b, "\nAttachment: %s %s (%d bytes).\n", bl.Kind, oneLine(name), bl.Size)
	}
}

// speaker names who an event is from.
func speaker(e memory.Event) string {
	switch e.Role {
	case memory.RoleUser:
		if e.Partner != "" {
			return "user " + oneLine(e.Partner)
		}
		return "user"
	case memory.RoleTool:
		return "tool " + oneLine(e.ToolName)
	}
	return string(e.Role)
}

// oneLine collapses white space, line breaks included.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
