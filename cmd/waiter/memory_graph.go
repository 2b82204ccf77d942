package main

import (
	"context"
	"flag"
	"fmt"
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
