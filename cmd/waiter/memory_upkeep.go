package main

// waiter memory pin/unpin, forget, scenes and gc: what the owner does to memory besides editing the graph.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

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
