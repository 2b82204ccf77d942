package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// A recall set is what the recall benchmark runs: corpora (a LoCoMo conversation, a RealMem
// persona, a MADial user), each a fresh store, in steps of "ask these questions, then store
// these events" so that a question sees only what came before it.
type recallSet struct {
	Name string
	// Unit names what a hit is credited with: "turn" (LoCoMo's dia_id), "session" (RealMem) or
	// "memory" (MADial's event id).
	Unit string
	// Agg is the aggregate category the required figures use ("1-4" for LoCoMo, "all" otherwise);
	// Order lists the categories as printed.
	Agg     string
	Order   []string
	Names   map[string]string
	Corpora []benchCorpus
}

type benchCorpus struct {
	ID    string
	Steps []benchStep
}

// benchStep: first the queries (against everything stored by earlier steps), then the ingest.
type benchStep struct {
	Queries []benchQuery
	Events  []benchEvent
	// Docs are the baseline's documents this step adds (unit, text).
	Docs [][2]string
}

type benchEvent struct {
	Unit    string
	Role    memory.Role
	Partner string
	Text    string
	Time    time.Time
}

type benchQuery struct {
	Text     string
	Cats     []string // the categories it counts in (its own and the aggregate)
	Relevant []string // units; only those already stored count
}

// loadLocomo reads a LoCoMo-format file: one corpus per conversation, one event per turn, the
// questions after the whole conversation.
func loadLocomo(file string) (recallSet, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return recallSet{}, err
	}
	var samples []locomoSample
	if err := json.Unmarshal(raw, &samples); err != nil {
		return recallSet{}, fmt.Errorf("%s: %w", file, err)
	}
	set := recallSet{Name: "locomo", Unit: "turn", Agg: "1-4", Order: []string{"1", "2", "3", "4", "1-4", "5"},
		Names: map[string]string{"1": "1 multi-hop", "2": "2 temporal", "3": "3 open-domain", "4": "4 single-hop", "1-4": "1-4 all", "5": "5 adversarial"}}
	for _, s := range samples {
		var keys []int
		for key := range s.Conversation {
			if n, ok := strings.CutPrefix(key, "session_"); ok && !strings.Contains(n, "_") {
				if i, err := strconv.Atoi(n); err == nil {
					keys = append(keys, i)
				}
			}
		}
		sort.Ints(keys)
		var st benchStep
		for _, i := range keys {
			var turns []locomoTurn
			if err := json.Unmarshal(s.Conversation[fmt.Sprintf("session_%d", i)], &turns); err != nil {
				return recallSet{}, fmt.Errorf("%s session_%d: %w", s.SampleID, i, err)
			}
			var dt string
			if raw, ok := s.Conversation[fmt.Sprintf("session_%d_date_time", i)]; ok {
				_ = json.Unmarshal(raw, &dt)
			}
			start, err := sessionTime(dt)
			if err != nil {
				return recallSet{}, fmt.Errorf("%s session_%d date %q: %w", s.SampleID, i, dt, err)
			}
			for j, t := range turns {
				text := t.Text
				if t.BlipCaption != "" {
					text += " [shares " + t.BlipCaption + "]"
				}
				st.Events = append(st.Events, benchEvent{Unit: t.DiaID, Role: memory.RoleUser, Partner: t.Speaker, Text: text,
					Time: start.Add(time.Duration(j) * 30 * time.Second)})
				st.Docs = append(st.Docs, [2]string{t.DiaID, t.Speaker + ": " + text + " " + dt})
			}
		}
		var qs []benchQuery
		for _, q := range s.QA {
			cats := []string{strconv.Itoa(q.Category)}
			if q.Category >= 1 && q.Category <= 4 {
				cats = append(cats, "1-4")
			}
			qs = append(qs, benchQuery{Text: q.Question, Cats: cats, Relevant: normEvidence(q.Evidence)})
		}
		set.Corpora = append(set.Corpora, benchCorpus{ID: s.SampleID, Steps: []benchStep{st, {Queries: qs}}})
	}
	return set, nil
}

// loadRealMem reads RealMem persona files (DIR/*_dialogues_*.json): one corpus per persona; its
// sessions in time order, each step asks the session's queries (the user turns flagged is_query;
// relevant: the next assistant turn's memory_session_uuids) and then stores the session.
func loadRealMem(dir string) (recallSet, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_dialogues_*.json"))
	if err != nil || len(files) == 0 {
		return recallSet{}, fmt.Errorf("%s: no RealMem persona files (*_dialogues_*.json)", dir)
	}
	sort.Strings(files)
	set := recallSet{Name: "realmem", Unit: "session", Agg: "all", Names: map[string]string{"all": "all"}}
	cats := map[string]bool{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return recallSet{}, err
		}
		var d struct {
			Meta struct {
				Person string `json:"person_name"`
			} `json:"_metadata"`
			Dialogues []struct {
				UUID  string `json:"session_uuid"`
				Time  string `json:"current_time"`
				Turns []struct {
					Speaker  string   `json:"speaker"`
					Content  string   `json:"content"`
					IsQuery  bool     `json:"is_query"`
					Category string   `json:"category_name"`
					Memory   []string `json:"memory_session_uuids"`
				} `json:"dialogue_turns"`
			} `json:"dialogues"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return recallSet{}, fmt.Errorf("%s: %w", f, err)
		}
		c := benchCorpus{ID: d.Meta.Person}
		if c.ID == "" {
			c.ID = strings.TrimSuffix(filepath.Base(f), ".json")
		}
		sameDay := map[time.Time]int{}
		for _, s := range d.Dialogues {
			day, err := time.Parse("2006-01-02", strings.Fields(s.Time + " x")[0])
			if err != nil {
				return recallSet{}, fmt.Errorf("%s session %s: time %q: %w", f, s.UUID, s.Time, err)
			}
			// The files give only the day. A second session of the same day is a separate
			// conversation later that day (3 hours on, beyond recall's burst gap), never
			// interleaved with the first at the same minutes.
			nth := sameDay[day]
			sameDay[day]++
			day = day.Add(10*time.Hour + time.Duration(3*nth)*time.Hour)
			var st benchStep
			var doc strings.Builder
			for j, t := range s.Turns {
				if t.IsQuery {
					var rel []string
					if j+1 < len(s.Turns) {
						rel = s.Turns[j+1].Memory
					}
					cat := t.Category
					if cat == "" {
						cat = "other"
					}
					cats[cat] = true
					st.Queries = append(st.Queries, benchQuery{Text: t.Content, Cats: []string{cat, "all"}, Relevant: rel})
				}
				if strings.TrimSpace(t.Content) == "" {
					continue
				}
				role := memory.RoleUser
				if strings.EqualFold(t.Speaker, "assistant") {
					role = memory.RoleAssistant
				}
				st.Events = append(st.Events, benchEvent{Unit: s.UUID, Role: role, Text: t.Content, Time: day.Add(time.Duration(j) * time.Minute)})
				doc.WriteString(t.Content)
				doc.WriteString("\n")
			}
			doc.WriteString(s.Time)
			st.Docs = [][2]string{{s.UUID, doc.String()}}
			c.Steps = append(c.Steps, st)
		}
		set.Corpora = append(set.Corpora, c)
	}
	for c := range cats {
		set.Order = append(set.Order, c)
		set.Names[c] = c
	}
	sort.Strings(set.Order)
	set.Order = append(set.Order, "all")
	return set, nil
}

// loadMADial reads one language of MADial-Bench (DIR/MADial-Bench-LANG-memory.json and
// -dialogue.json, one JSON object per line): one corpus per user (the English memory file has no
// user ids: one corpus of every event), the user's memories stored first; each dialogue asks
// with its turns before the test turn.
func loadMADial(dir, lang string) (recallSet, error) {
	set := recallSet{Name: "madial-" + lang, Unit: "memory", Agg: "all", Order: []string{"all"}, Names: map[string]string{"all": "all"}}
	mem, err := jsonLines(filepath.Join(dir, "MADial-Bench-"+lang+"-memory.json"))
	if err != nil {
		return recallSet{}, err
	}
	type mevent struct {
		Time  string `json:"time"`
		Event string `json:"event"`
		User  *int   `json:"user-id"`
	}
	byUser := map[int]*benchCorpus{}
	var users []int
	for _, line := range mem {
		var m map[string]mevent
		if err := json.Unmarshal(line, &m); err != nil {
			return recallSet{}, fmt.Errorf("madial %s memory: %w", lang, err)
		}
		for id, e := range m {
			u := 0
			if e.User != nil {
				u = *e.User
			}
			c := byUser[u]
			if c == nil {
				c = &benchCorpus{ID: fmt.Sprintf("user-%d", u), Steps: []benchStep{{}, {}}}
				byUser[u] = c
				users = append(users, u)
			}
			t, err := time.Parse("2006-01-02", strings.TrimSpace(e.Time))
			if err != nil {
				return recallSet{}, fmt.Errorf("madial %s memory %s: time %q: %w", lang, id, e.Time, err)
			}
			st := &c.Steps[0]
			st.Events = append(st.Events, benchEvent{Unit: id, Role: memory.RoleUser, Text: e.Event, Time: t.Add(12 * time.Hour)})
			st.Docs = append(st.Docs, [2]string{id, e.Event + " " + e.Time})
		}
	}
	dia, err := jsonLines(filepath.Join(dir, "MADial-Bench-"+lang+"-dialogue.json"))
	if err != nil {
		return recallSet{}, err
	}
	for i, line := range dia {
		var d struct {
			Dialogue []string `json:"dialogue"`
			TestTurn []int    `json:"test-turn"`
			Relevant []int    `json:"relevant-id"`
			User     *int     `json:"user-id"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			return recallSet{}, fmt.Errorf("madial %s dialogue %d: %w", lang, i+1, err)
		}
		u := 0
		if d.User != nil && byUser[0] == nil { // a memory file without user ids: every event is a candidate
			u = *d.User
		}
		c := byUser[u]
		if c == nil || len(d.TestTurn) == 0 {
			continue
		}
		var q []string
		for _, t := range d.Dialogue[:min(len(d.Dialogue), d.TestTurn[0])] {
			if t = strings.TrimSpace(t); t != "" && t != "<BOD>" {
				q = append(q, t)
			}
		}
		var rel []string
		for _, r := range d.Relevant {
			rel = append(rel, strconv.Itoa(r))
		}
		c.Steps[1].Queries = append(c.Steps[1].Queries, benchQuery{Text: strings.Join(q, "\n"), Cats: []string{"all"}, Relevant: rel})
	}
	sort.Ints(users)
	for _, u := range users {
		c := byUser[u]
		// Memories in time order, as they would have been stored.
		evs := c.Steps[0].Events
		sort.SliceStable(evs, func(a, b int) bool { return evs[a].Time.Before(evs[b].Time) })
		set.Corpora = append(set.Corpora, *c)
	}
	return set, nil
}

func jsonLines(file string) ([][]byte, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			out = append(out, append([]byte(nil), line...))
		}
	}
	return out, sc.Err()
}
