#!/bin/sh
# graph-before.sh REV [DATA]: the "before" figures of `hologram-bench graph` (docs/memory-graph.md)
# on revision REV (e.g. main): a detached worktree of REV gets this checkout's measuring code
# (cmd/hologram-bench, memory/embed) and an extractor file that builds REV's rules as REV's
# engine does; its samples go to docs/graph-quality/SET-before.tsv here. Run from the repository root.
set -eu
rev=${1:?usage: graph-before.sh REV [DATA]}
data=${2:-../shared/data}
here=$(pwd)
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/wt" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/wt" "$rev" >/dev/null
cp -r build "$tmp/wt/" 2>/dev/null || true
git diff --name-only "$rev" HEAD -- cmd/hologram-bench memory/embed | while read -r f; do
	mkdir -p "$tmp/wt/$(dirname "$f")"
	if [ -e "$f" ]; then cp "$f" "$tmp/wt/$f"; else rm -f "$tmp/wt/$f"; fi
done
cat > "$tmp/wt/cmd/hologram-bench/graphquality_rules.go" <<'GO'
package main

import (
	"unicode/utf8"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/graph"
)

// newQualityRules (before): the revision's rules extractor as its engine builds it (jieba keywords).
func newQualityRules(owner string, _ *embed.Lexicon, tok *embed.Tokenizer) graph.Extractor {
	return graph.NewRules(graph.RulesOptions{Owner: owner, Keywords: func(text string) []string {
		toks, err := tok.Tokens(text)
		if err != nil {
			return nil
		}
		seen := map[string]bool{}
		var out []string
		for _, t := range toks {
			if utf8.RuneCountInString(t) >= 2 && !seen[t] && t[0] >= 0x80 {
				seen[t] = true
				out = append(out, t)
			}
		}
		return out
	}})
}

// endsFact: the revision's facts have no negations.
func endsFact(memory.Fact) bool { return false }
GO
(cd "$tmp/wt" && go build -trimpath -tags=sqlite_fts5 -o "$tmp/hb" ./cmd/hologram-bench)
"$tmp/hb" graph --data "$data" --labels "$here/docs/graph-quality" --out "$here/docs/graph-quality" --tag before
