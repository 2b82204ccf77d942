package main

import (
	"archive/tar"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// memoryUsage lists the memory subcommands; `waiter memory help` prints it.
const memoryUsage = `usage: waiter memory SUBCOMMAND

  search [--session ID] [--k N] [--scope S] [--layer 1|2] [--json] [--thumbnails DIR] TEXT...
                                  recall events; image hits listed after them (--thumbnails:
                                  their thumbnails saved as DIR/BLOCK.png)
  graph [--scope S] [--history] [--limit N] [--json]
                                  entities, then triples (every page unless --limit)
  entity ID [--json]              one entity with its triples (history included) and blocks
  entity add NAME [--kind K] [--text T] [--scope S]
  entity edit ID [--name N] [--kind K] [--text T] [--scope S]
  entity delete ID                the entity, its triples and blocks
  merge INTO FROM                 FROM's triples and blocks move to INTO; FROM is deleted
  triple add SUBJ PRED OBJ [--replaces] [--scope S] [--subject-kind K] [--object-kind K]
  triple edit ID SUBJ PRED OBJ    supersedes triple ID by a corrected one
  pin|unpin entity|triple ID
  pin block BLOCKID [--entity ID] moves a block to L3 (held by ID, else by a new note)
  forget EVENTID...               events, their blocks and the triples only they back
  scenes [--json]
  gc [--cool-all] [--json]        run cooling, distillation and decay now; --cool-all cools
                                  every session (idle or not, recent events too) and distils
                                  every cold event at once, with progress on stderr
  export [--format json|jsonl|markdown] [--include-secrets] [--out FILE|DIR|-] [--force]
                                  default: JSON to stdout; markdown with --out DIR
                                  extracts the files there, --out FILE.tar keeps the tar
  import [--format json|jsonl|chatgpt|openwebui] FILE|-
                                  json restores a backup into an empty memory; jsonl merges
                                  an MCP memory file; chatgpt reads a ChatGPT export's
                                  conversations.json or the export's .zip, openwebui Open
                                  WebUI's chat export (each conversation a private session;
                                  a re-import adds only new messages; progress on stderr)
`

// parseID parses a positive id argument.
func parseID(what, v string) (int64, error) {
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%s must be a positive integer, got %q", what, v)
	}
	return id, nil
}

// checkScopeFlag refuses a --scope that is set but not private, public or group:<id>.
func checkScopeFlag(scope string) error {
	if scope != "" && client.CheckScope(scope) != nil {
		return usagef("--scope must be private, public or group:<id>, got %q", scope)
	}
	return nil
}

// memoryGraph prints the graph: every page of entities, then the triples among them.
func (a *app) memoryGraph(ctx context.Context, args []string) error {
	fs := newFlags("memory graph")
	scope := fs.String("scope", "", "only things of this scope: private, public or group:<id>")
	history := fs.Bool("history", false, "include superseded and ended triples")
	limit := fs.Int("limit", 0, fmt.Sprintf("only the first N entities (1 to %d; default: all, page by page)", client.MaxGraphLimit))
	asJSON := fs.Bool("json", false, "print JSON")
	if pos, err := parse(fs, args, true); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("memory graph takes no arguments")
	}
	limited := flagSet(fs, "limit")
	if limited && (*limit < 1 || *limit > client.MaxGraphLimit) {
		return usagef("--limit must be from 1 to %d, got %d", client.MaxGraphLimit, *limit)
	}
	if err := checkScopeFlag(*scope); err != nil {
		return err
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	q := client.GraphQuery{Scope: *scope, History: *history}
	if limited {
		q.Limit = *limit
	}
	all := client.GraphPage{Entities: []client.Entity{}, Triples: []client.Triple{}}
	seen := map[string]bool{}
	for {
		page, err := svc.Graph(ctx, q)
		if err != nil {
			return err
		}
		all.Entities = append(all.Entities, page.Entities...)
		all.Triples = append(all.Triples, page.Triples...)
		all.Total = page.Total
		if limited || page.Next == "" {
			all.Next = page.Next
			break
		}
		if seen[page.Next] {
			return fmt.Errorf("memory graph: the kernel sent paging cursor %q twice", page.Next)
		}
		seen[page.Next] = true
		q.After = page.Next
	}
	if *asJSON {
		return a.writeJSON(all)
	}
	if len(all.Entities) == 0 {
		fmt.Fprintln(a.stderr, "the graph is empty")
		return nil
	}
	fmt.Fprintf(a.stdout, "entities %d of %d  triples %d\n\n", len(all.Entities), all.Total, len(all.Triples))
	if err := a.entityTable(all.Entities); err != nil {
		return err
	}
	if len(all.Triples) > 0 {
		fmt.Fprintln(a.stdout)
		if err := a.tripleTable(all.Triples); err != nil {
			return err
		}
	}
	if all.Next != "" {
		fmt.Fprintf(a.stderr, "%d more entities: drop --limit to list them all\n", all.Total-len(all.Entities))
	}
	return nil
}

// flagSet reports whether the flag name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func (a *app) entityTable(es []client.Entity) error {
	rows := [][]string{{"ID", "NAME", "KIND", "SCOPE", "PINNED", "MENTIONS", "TEXT"}}
	for _, e := range es {
		rows = append(rows, []string{strconv.FormatInt(e.ID, 10), excerpt(e.Name), orDash(e.Kind), orDash(e.Scope),
			yesNo(e.Pinned), strconv.Itoa(e.Mentions), orDash(excerpt(e.Text))})
	}
	return a.table(rows)
}

// tripleState says whether a triple is current, superseded or ended.
func tripleState(t client.Triple) string {
	switch {
	case t.SupersededBy != 0:
		return "superseded by " + strconv.FormatInt(t.SupersededBy, 10)
	case !t.ValidTo.IsZero():
		return "ended " + shortTime(t.ValidTo)
	}
	return "current"
}

func (a *app) tripleTable(ts []client.Triple) error {
	rows := [][]string{{"ID", "SUBJECT", "PREDICATE", "OBJECT", "SINCE", "STATE", "SCOPE", "PINNED", "SOURCES"}}
	for _, t := range ts {
		since := "-"
		if !t.ValidFrom.IsZero() {
			since = shortTime(t.ValidFrom)
		}
		rows = append(rows, []string{strconv.FormatInt(t.ID, 10), excerpt(t.SubjectName), excerpt(t.Predicate), excerpt(t.ObjectName),
			since, tripleState(t), orDash(t.Scope), yesNo(t.Pinned), strconv.Itoa(len(t.Sources))})
	}
	return a.table(rows)
}

// tripleLine is a triple on one line: subject —predicate→ object.
func tripleLine(t client.Triple) string {
	return t.SubjectName + " —" + t.Predicate + "→ " + t.ObjectName
}

// memoryEntity runs `memory entity ID|add|edit|delete`.
func (a *app) memoryEntity(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("memory entity needs an entity id or a subcommand: add, edit or delete")
	}
	switch args[0] {
	case "add":
		return a.entityAdd(ctx, args[1:])
	case "edit":
		return a.entityEdit(ctx, args[1:])
	case "delete", "rm":
		return a.entityDelete(ctx, args[1:])
	}
	return a.entityShow(ctx, args)
}

func (a *app) entityShow(ctx context.Context, args []string) error {
	fs := newFlags("memory entity")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: waiter memory entity ID [--json]")
	}
	id, err := parseID("entity id", pos[0])
	if err != nil {
		return err
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	d, err := svc.Entity(ctx, id)
	if err != nil {
		return err
	}
	if d.Triples == nil {
		d.Triples = []client.Triple{}
	}
	if d.Blocks == nil {
		d.Blocks = []client.Block{}
	}
	if *asJSON {
		return a.writeJSON(d)
	}
	e := d.Entity
	recalled := "never"
	if !e.LastRecalled.IsZero() {
		recalled = shortTime(e.LastRecalled)
	}
	fmt.Fprintf(a.stdout, "entity %d: %s\n", e.ID, e.Name)
	if err := a.table([][]string{
		{"kind", orDash(e.Kind)},
		{"scope", orDash(e.Scope)},
		{"pinned", yesNo(e.Pinned)},
		{"mentions", strconv.Itoa(e.Mentions)},
		{"origin", orDash(e.Origin)},
		{"created", shortTime(e.Created)},
		{"updated", shortTime(e.Updated)},
		{"recalled", recalled},
	}); err != nil {
		return err
	}
	if e.Text != "" {
		fmt.Fprintf(a.stdout, "text:\n    %s\n", indent(e.Text))
	}
	if len(d.Triples) > 0 {
		fmt.Fprintln(a.stdout)
		if err := a.tripleTable(d.Triples); err != nil {
			return err
		}
	}
	if len(d.Blocks) > 0 {
		fmt.Fprintln(a.stdout)
		rows := [][]string{{"BLOCK", "KIND", "NAME", "MIME", "SIZE", "TEXT"}}
		for _, b := range d.Blocks {
			rows = append(rows, []string{b.ID, b.Kind, orDash(excerpt(b.Name)), orDash(b.MIME), strconv.FormatInt(b.Size, 10), orDash(excerpt(b.Text))})
		}
		return a.table(rows)
	}
	return nil
}

func (a *app) entityAdd(ctx context.Context, args []string) error {
	fs := newFlags("memory entity add")
	kind := fs.String("kind", "", "person, place, org, thing, event, concept, note… (default: the kernel's)")
	text := fs.String("text", "", "what the entity is (its text block)")
	scope := fs.String("scope", "", "who may see it: private (default), public or group:<id>")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 || strings.TrimSpace(pos[0]) == "" {
		return usagef("usage: waiter memory entity add NAME [--kind K] [--text T] [--scope S] (quote a name with spaces)")
	}
	if err := checkScopeFlag(*scope); err != nil {
		return err
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	e, err := svc.PutEntity(ctx, client.Entity{Name: pos[0], Kind: *kind, Text: *text, Scope: *scope})
	if err != nil {
		return err
	}
	if *asJSON {
		return a.writeJSON(e)
	}
	fmt.Fprintf(a.stdout, "entity %d added: %s (%s, %s)\n", e.ID, e.Name, orDash(e.Kind), orDash(e.Scope))
	return nil
}

func (a *app) entityEdit(ctx context.Context, args []string) error {
	fs := newFlags("memory entity edit")
	name := fs.String("name", "", "new name")
	kind := fs.String("kind", "", "new kind")
	text := fs.String("text", "", "new text (empty: none)")
	scope := fs.String("scope", "", "new scope: private, public or group:<id>")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: waiter memory entity edit ID [--name N] [--kind K] [--text T] [--scope S]")
	}
	id, err := parseID("entity id", pos[0])
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	delete(set, "json")
	if len(set) == 0 {
		return usagef("memory entity edit needs at least one of --name, --kind, --text and --scope")
	}
	if set["name"] && strings.TrimSpace(*name) == "" {
		return usagef("--name must not be empty")
	}
	if set["scope"] && client.CheckScope(*scope) != nil {
		return usagef("--scope must be private, public or group:<id>, got %q", *scope)
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	d, err := svc.Entity(ctx, id)
	if err != nil {
		return err
	}
	e := d.Entity
	if set["name"] {
		e.Name = *name
	}
	if set["kind"] {
		e.Kind = *kind
	}
	if set["text"] {
		e.Text = *text
	}
	if set["scope"] {
		e.Scope = *scope
	}
	out, err := svc.PutEntity(ctx, e)
	if err != nil {
		return err
	}
	if *asJSON {
		return a.writeJSON(out)
	}
	fmt.Fprintf(a.stdout, "entity %d updated: %s (%s, %s)\n", out.ID, out.Name, orDash(out.Kind), orDash(out.Scope))
	return nil
}

func (a *app) entityDelete(ctx context.Context, args []string) error {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		return usagef("usage: waiter memory entity delete ID")
	}
	id, err := parseID("entity id", args[0])
	if err != nil {
		return err
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	if err := svc.DeleteEntity(ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "entity %d deleted\n", id)
	return nil
}

func (a *app) memoryMerge(ctx context.Context, args []string) error {
	fs := newFlags("memory merge")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("usage: waiter memory merge INTO FROM")
	}
	into, err := parseID("INTO", pos[0])
	if err != nil {
		return err
	}
	from, err := parseID("FROM", pos[1])
	if err != nil {
		return err
	}
	if into == from {
		return usagef("cannot merge entity %d into itself", into)
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	e, err := svc.MergeEntities(ctx, into, from)
	if err != nil {
		return err
	}
	if *asJSON {
		return a.writeJSON(e)
	}
	fmt.Fprintf(a.stdout, "entity %d merged into %d: %s\n", from, e.ID, e.Name)
	return nil
}

// memoryTriple runs `memory triple add|edit`.
func (a *app) memoryTriple(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("memory triple needs a subcommand: add or edit")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "add":
		fs := newFlags("memory triple add")
		replaces := fs.Bool("replaces", false, "a correction: supersede the subject's current triples with this predicate")
		scope := fs.String("scope", "", "who may see it: private (default), public or group:<id>")
		subjKind := fs.String("subject-kind", "", "the subject's kind, when it is created")
		objKind := fs.String("object-kind", "", "the object's kind, when it is created")
		asJSON := fs.Bool("json", false, "print JSON")
		pos, err := parse(fs, args, true)
		if err != nil {
			return err
		}
		if err := checkTripleArgs(pos, "usage: waiter memory triple add SUBJ PRED OBJ [--replaces] [--scope S]"); err != nil {
			return err
		}
		if err := checkScopeFlag(*scope); err != nil {
			return err
		}
		svc, err := a.service()
		if err != nil {
			return err
		}
		t, err := svc.AddTriple(ctx, client.TripleInput{Subject: pos[0], SubjectKind: *subjKind, Predicate: pos[1], Object: pos[2],
			ObjectKind: *objKind, Replaces: *replaces, Scope: *scope})
		if err != nil {
			return err
		}
		if *asJSON {
			return a.writeJSON(t)
		}
		fmt.Fprintf(a.stdout, "triple %d added: %s\n", t.ID, tripleLine(t))
		return nil
	case "edit":
		fs := newFlags("memory triple edit")
		asJSON := fs.Bool("json", false, "print JSON")
		pos, err := parse(fs, args, true)
		if err != nil {
			return err
		}
		const usage = "usage: waiter memory triple edit ID SUBJ PRED OBJ"
		if len(pos) != 4 {
			return usagef(usage)
		}
		id, err := parseID("triple id", pos[0])
		if err != nil {
			return err
		}
		if err := checkTripleArgs(pos[1:], usage); err != nil {
			return err
		}
		svc, err := a.service()
		if err != nil {
			return err
		}
		t, err := svc.EditTriple(ctx, id, client.TripleInput{Subject: pos[1], Predicate: pos[2], Object: pos[3]})
		if err != nil {
			return err
		}
		if *asJSON {
			return a.writeJSON(t)
		}
		fmt.Fprintf(a.stdout, "triple %d superseded by %d: %s\n", id, t.ID, tripleLine(t))
		return nil
	}
	return usagef("unknown memory triple subcommand %q", sub)
}

// checkTripleArgs wants exactly subject, predicate and object, none blank.
func checkTripleArgs(pos []string, usage string) error {
	if len(pos) != 3 {
		return usagef("%s (quote words with spaces)", usage)
	}
	for i, what := range []string{"subject", "predicate", "object"} {
		if strings.TrimSpace(pos[i]) == "" {
			return usagef("the triple's %s is empty", what)
		}
	}
	return nil
}

// memoryPin runs `memory pin|unpin entity|triple ID` and `memory pin block BLOCKID [--entity ID]`.
func (a *app) memoryPin(ctx context.Context, args []string, pinned bool) error {
	verb := "pin"
	if !pinned {
		verb = "unpin"
	}
	if len(args) == 0 {
		if pinned {
			return usagef("usage: waiter memory pin entity|triple ID, or waiter memory pin block BLOCKID [--entity ID]")
		}
		return usagef("usage: waiter memory unpin entity|triple ID")
	}
	kind, args := args[0], args[1:]
	fs := newFlags("memory " + verb + " " + kind)
	var entity *int64
	if kind == "block" && pinned {
		entity = fs.Int64("entity", 0, "the entity that holds the block (default: a new note entity)")
	}
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	req := client.PinRequest{Kind: kind, Pinned: pinned}
	switch {
	case kind == "entity" || kind == "triple":
		if len(pos) != 1 {
			return usagef("usage: waiter memory %s %s ID", verb, kind)
		}
		if req.ID, err = parseID(kind+" id", pos[0]); err != nil {
			return err
		}
	case kind == "block" && pinned:
		if len(pos) != 1 || strings.TrimSpace(pos[0]) == "" {
			return usagef("usage: waiter memory pin block BLOCKID [--entity ID]")
		}
		if flagSet(fs, "entity") && *entity <= 0 {
			return usagef("--entity must be a positive integer, got %d", *entity)
		}
		req.Block, req.Entity = pos[0], *entity
	case kind == "block":
		return usagef("a block cannot be unpinned: delete the entity that holds it")
	default:
		return usagef("memory %s: kind must be entity, triple or block, got %q", verb, kind)
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	if err := svc.Pin(ctx, req); err != nil {
		return err
	}
	switch {
	case kind != "block":
		fmt.Fprintf(a.stdout, "%s %d %sned\n", kind, req.ID, verb)
	case req.Entity != 0:
		fmt.Fprintf(a.stdout, "block %s pinned to entity %d\n", req.Block, req.Entity)
	default:
		fmt.Fprintf(a.stdout, "block %s pinned as a new note\n", req.Block)
	}
	return nil
}

func (a *app) memoryForget(ctx context.Context, args []string) error {
	fs := newFlags("memory forget")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("usage: waiter memory forget EVENTID... (ids as `waiter memory search --json` or `waiter history --json` show them)")
	}
	if len(pos) > client.MaxForgetEvents {
		return usagef("memory forget takes at most %d event ids at once, got %d", client.MaxForgetEvents, len(pos))
	}
	ids := make([]int64, 0, len(pos))
	for _, p := range pos {
		id, err := parseID("event id", p)
		if err != nil {
			return err
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	res, err := svc.Forget(ctx, ids)
	if err != nil {
		return err
	}
	if *asJSON {
		return a.writeJSON(res)
	}
	fmt.Fprintf(a.stdout, "forgot %s and %s; deleted %s (%d more lost a source) and %s left with nothing\n",
		plural(res.Events, "event"), plural(res.Blocks, "block"), plural(res.Triples, "triple"), res.Trimmed,
		plural(res.Entities, "entity"))
	return nil
}

// plural is "1 event", "2 events", "0 entities".
func plural(n int, what string) string {
	switch {
	case n == 1:
		return "1 " + what
	case strings.HasSuffix(what, "y"):
		return strconv.Itoa(n) + " " + strings.TrimSuffix(what, "y") + "ies"
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func (a *app) memoryScenes(ctx context.Context, args []string) error {
	return runListing(ctx, a, args, listing[client.Scene]{
		name:   "memory scenes",
		fetch:  client.Service.Scenes,
		header: []string{"ID", "KEY", "KIND", "STRENGTH", "SEEN", "TIMES", "FEATURES"},
		row: func(s client.Scene) []string {
			kind := "emergent"
			if s.Declared {
				kind = "declared"
			}
			return []string{strconv.FormatInt(s.ID, 10), excerpt(s.Key), kind, fmt.Sprintf("%.2f", s.Strength), shortTime(s.Seen),
				strconv.Itoa(s.Occurrences), orDash(features(s.Features))}
		},
		empty: "no scenes yet: a scene appears when a situation recurs",
	})
}

// features lists scene features heaviest first, then by name.
func features(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int {
		if m[x] != m[y] {
			if m[x] > m[y] {
				return -1
			}
			return 1
		}
		return strings.Compare(x, y)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.1f", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func (a *app) memoryGC(ctx context.Context, args []string) error {
	fs := newFlags("memory gc")
	asJSON := fs.Bool("json", false, "print JSON")
	coolAll := fs.Bool("cool-all", false, "cool every session now, idle or not, and distil every cold event (progress on stderr)")
	if pos, err := parse(fs, args, true); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("memory gc takes no arguments")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	var r client.GCReport
	if *coolAll {
		r, err = a.coolAll(ctx, svc) // memory_import.go
	} else {
		r, err = svc.MemoryGC(ctx)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return a.writeJSON(r)
	}
	return a.table([][]string{
		{"cooled", strconv.Itoa(r.Cooled)},
		{"distilled", strconv.Itoa(r.Distilled)},
		{"entities", strconv.Itoa(r.Entities)},
		{"triples", strconv.Itoa(r.Triples)},
		{"confirmed", strconv.Itoa(r.Confirmed)},
		{"superseded", strconv.Itoa(r.Superseded)},
		{"extractor", orDash(r.Extractor)},
		{"decayed scenes", strconv.Itoa(r.Decayed)},
		{"took", r.Took.String()},
	})
}

// memoryExport writes an export to stdout, a file (atomically, never over an existing file
// without --force) or, for markdown, into a directory.
func (a *app) memoryExport(ctx context.Context, args []string) error {
	fs := newFlags("memory export")
	format := fs.String("format", client.FormatJSON, "json (full backup), jsonl (MCP memory server) or markdown (a tar)")
	secrets := fs.Bool("include-secrets", false, "put provider keys into a json backup, in clear text")
	out := fs.String("out", "-", "a file, - for stdout, or for markdown a directory to extract into (FILE.tar keeps the tar)")
	force := fs.Bool("force", false, "overwrite existing files")
	if pos, err := parse(fs, args, true); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("memory export takes no arguments (use --out FILE)")
	}
	switch *format {
	case client.FormatJSON, client.FormatJSONL, client.FormatMarkdown:
	default:
		return usagef("--format must be json, jsonl or markdown, got %q", *format)
	}
	if *secrets && *format != client.FormatJSON {
		return usagef("--include-secrets is only for --format json")
	}
	if *out == "" {
		return usagef("--out must not be empty (- is stdout)")
	}
	req := client.ExportRequest{Format: *format, IncludeSecrets: *secrets}
	toDir := *format == client.FormatMarkdown && *out != "-" && !strings.HasSuffix(*out, ".tar")
	if *out != "-" && !toDir && !*force {
		if _, err := os.Lstat(*out); err == nil {
			return fmt.Errorf("refusing to overwrite %s (use --force)", *out)
		}
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	switch {
	case *out == "-":
		return svc.ExportMemory(ctx, req, a.stdout)
	case toDir:
		n, err := exportToDir(ctx, svc, req, *out, *force)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "exported %s into %s\n", plural(n, "file"), *out)
		return nil
	}
	if err := exportToFile(ctx, svc, req, *out, *force); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "exported to %s\n", *out)
	return nil
}

// exportToFile writes the export to a temporary file beside dst and renames it into place, so a
// failed export never leaves a partial file nor replaces a good one. Without force an existing
// dst is refused (the name is reserved before the export starts).
func exportToFile(ctx context.Context, svc client.Service, req client.ExportRequest, dst string, force bool) (err error) {
	if !force {
		f, oerr := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if oerr != nil {
			if errors.Is(oerr, fs.ErrExist) {
				return fmt.Errorf("refusing to overwrite %s (use --force)", dst)
			}
			return fmt.Errorf("export: %w", oerr)
		}
		f.Close()
		defer func() {
			if err != nil {
				os.Remove(dst)
			}
		}()
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.part")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := svc.ExportMemory(ctx, req, tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// exportToDir streams a markdown export (a tar) into dir and returns how many files it wrote.
// Entries must be relative paths without ".." (checked here, and enforced by os.Root); only
// regular files and directories are extracted; an existing file is refused unless force.
func exportToDir(ctx context.Context, svc client.Service, req client.ExportRequest, dir string, force bool) (int, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	defer root.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		pw.CloseWithError(svc.ExportMemory(ctx, req, pw))
	}()
	n, err := extractTar(root, pr, force)
	if err == nil {
		// Tar padding after the end-of-archive marker; a late export error shows here.
		_, err = io.Copy(io.Discard, pr)
	}
	if err != nil {
		cancel()
		pr.CloseWithError(err)
	}
	<-done
	if err != nil {
		return n, fmt.Errorf("export into %s: %w", dir, err)
	}
	return n, nil
}

// extractTar writes the regular files and directories of a tar stream under root.
func extractTar(root *os.Root, r io.Reader, force bool) (int, error) {
	tr := tar.NewReader(r)
	files := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return files, err
		}
		name, err := safeEntryName(h.Name)
		if err != nil {
			return files, err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o700); err != nil {
				return files, err
			}
		case tar.TypeReg:
			if d := path.Dir(name); d != "." {
				if err := root.MkdirAll(d, 0o700); err != nil {
					return files, err
				}
			}
			flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if force {
				flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			f, err := root.OpenFile(name, flags, 0o600)
			if err != nil {
				if errors.Is(err, fs.ErrExist) {
					return files, fmt.Errorf("refusing to overwrite %s (use --force)", name)
				}
				return files, err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return files, fmt.Errorf("write %s: %w", name, err)
			}
			files++
		default:
			return files, fmt.Errorf("refusing tar entry %q of type %q: only files and directories are extracted", h.Name, h.Typeflag)
		}
	}
}

// safeEntryName cleans a tar entry name, refusing absolute paths and "..".
func safeEntryName(name string) (string, error) {
	switch {
	case name == "":
		return "", errors.New("refusing a tar entry without a name")
	case strings.HasPrefix(name, "/") || filepath.IsAbs(name):
		return "", fmt.Errorf("refusing tar entry %q: an absolute path", name)
	case slices.Contains(strings.Split(strings.ReplaceAll(name, `\`, "/"), "/"), ".."):
		return "", fmt.Errorf("refusing tar entry %q: it climbs out with \"..\"", name)
	}
	clean := path.Clean(name)
	if clean == "." {
		return "", fmt.Errorf("refusing tar entry %q: it names the directory itself", name)
	}
	return clean, nil
}

func (a *app) memoryImport(ctx context.Context, args []string) error {
	fs := newFlags("memory import")
	format := fs.String("format", "", "json (a full backup, into an empty memory), jsonl (MCP memory server, merged), chatgpt or openwebui (chat histories, merged); default: jsonl for .jsonl, chatgpt for .zip and conversations.json, else json")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: waiter memory import [--format json|jsonl|chatgpt|openwebui] FILE|-")
	}
	f := *format
	if f == "" {
		f = client.FormatJSON
		switch ext := strings.ToLower(filepath.Ext(pos[0])); {
		case ext == ".jsonl" || ext == ".ndjson":
			f = client.FormatJSONL
		case ext == ".zip" || filepath.Base(pos[0]) == "conversations.json":
			f = client.FormatChatGPT // a ChatGPT export
		}
	}
	switch f {
	case client.FormatJSON, client.FormatJSONL:
	case client.FormatChatGPT, client.FormatOpenWebUI:
		return a.importChats(ctx, f, pos[0], *asJSON) // memory_import.go
	case client.FormatMarkdown:
		return usagef("markdown is an export format only: import json, jsonl, chatgpt or openwebui")
	default:
		return usagef("--format must be json, jsonl, chatgpt or openwebui, got %q", f)
	}
	var r io.Reader = a.stdin
	if pos[0] != "-" {
		file, err := os.Open(pos[0])
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer file.Close()
		r = file
	} else if r == nil {
		return usagef("import: no stdin")
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	rep, err := svc.ImportMemory(ctx, f, r)
	if err != nil {
		return err
	}
	if *asJSON {
		return a.writeJSON(rep)
	}
	fmt.Fprintf(a.stdout, "imported %s, %s, %s, %s, %s, %s and %s; %d already present\n",
		plural(rep.Sessions, "session"), plural(rep.Events, "event"), plural(rep.Blocks, "block"), plural(rep.Entities, "entity"),
		plural(rep.Triples, "triple"), plural(rep.Scenes, "scene"), plural(rep.Settings, "setting"), rep.Skipped)
	return nil
}
