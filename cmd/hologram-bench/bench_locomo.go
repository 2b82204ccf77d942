package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The LoCoMo format (snap-research/locomo's locomo10.json): a list of samples, each a
// conversation of sessions of turns and its questions with evidence turn ids. Only evidence ids
// reach the scorer: the answers, observations and summaries are never read.

type locomoSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []struct {
		Question string   `json:"question"`
		Evidence []string `json:"evidence"`
		Category int      `json:"category"`
	} `json:"qa"`
}

type locomoTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

var evidenceRe = regexp.MustCompile(`^D:?(\d+):0*(\d+)$`)

// normEvidence normalises evidence ids: "D:11:26" → "D11:26", "D30:05" → "D30:5",
// "D8:6; D9:17" → two ids.
func normEvidence(ev []string) []string {
	var out []string
	for _, e := range ev {
		for _, p := range strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
			p = strings.Trim(p, "()")
			if m := evidenceRe.FindStringSubmatch(p); m != nil {
				a, _ := strconv.Atoi(m[1])
				b, _ := strconv.Atoi(m[2])
				out = append(out, fmt.Sprintf("D%d:%d", a, b))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sessionTime parses LoCoMo's "1:56 pm on 8 May, 2023".
func sessionTime(s string) (time.Time, error) {
	return time.Parse("3:04 pm on 2 January, 2006", strings.TrimSpace(s))
}
