//go:build integration

package graph

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/memory"
)

func TestZZDebugTopics(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	n, _ := strconv.Atoi(os.Getenv("ZZ"))
	obs := loadObservations(t)
	r := NewRules(RulesOptions{MaxTopics: n})
	fp := map[string]int{}
	tp := map[string]int{}
	missed := map[string]int{}
	f, _ := os.Create("/tmp/zz_debug.txt")
	defer f.Close()
	for _, o := range obs {
		evs := make([]memory.Event, len(o.turns))
		for i, tu := range o.turns {
			text := tu.Text
			if tu.BlipCaption != "" {
				text += " [image: " + tu.BlipCaption + "]"
			}
			evs[i] = memory.Event{ID: int64(i + 1), Role: memory.RoleUser, Partner: tu.Speaker, Content: text}
		}
		fs, _, _ := r.Extract(context.Background(), evs)
		var gold []map[string]bool
		var goldS []string
		for _, g := range goldEntities(o.text) {
			if l := lemmas(g); len(l) > 0 {
				gold = append(gold, l)
				goldS = append(goldS, strings.Join(g, " "))
			}
		}
		fmt.Fprintf(f, "OBS %s\n", o.text)
		for _, e := range evs {
			fmt.Fprintf(f, "  TURN %s\n", e.Content)
		}
		fmt.Fprintf(f, "  GOLD %q\n", goldS)
		hit := make([]bool, len(gold))
		for _, x := range fs {
			if x.Predicate != PredicateTalksAbout {
				continue
			}
			l := lemmas(strings.Fields(x.Object))
			ok := false
			for i, g := range gold {
				if overlap(l, g) {
					ok = true
					hit[i] = true
				}
			}
			mark := "-"
			if ok {
				mark = "+"
				tp[x.Object]++
			} else {
				fp[x.Object]++
			}
			fmt.Fprintf(f, "  %s %s\n", mark, x.Object)
		}
		for i, h := range hit {
			if !h {
				missed[goldS[i]]++
			}
		}
	}
	dump := func(name string, m map[string]int) {
		type kv struct {
			k string
			v int
		}
		var l []kv
		for k, v := range m {
			l = append(l, kv{k, v})
		}
		sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v })
		fmt.Fprintf(f, "== %s\n", name)
		for i, x := range l {
			if i > 80 {
				break
			}
			fmt.Fprintf(f, "%d %s\n", x.v, x.k)
		}
	}
	dump("FP", fp)
	dump("TP", tp)
	dump("MISSED", missed)
}
