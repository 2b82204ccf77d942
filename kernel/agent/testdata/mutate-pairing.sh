#!/usr/bin/env bash
# mutate-pairing.sh deletes, one at a time, every line of kernel/agent/*.go (non-test) that records a
# tool call result (marked "// pairing:record"), runs the agent's tests against the mutant through
# `go test -overlay`, and requires every mutant to be killed: the tests must fail, and the mutant
# must still compile (a compile error does not count as a kill). The source tree is never modified.
# Run from the repository root: make mutate-pairing.
set -euo pipefail

pkg=./kernel/agent/
dir=kernel/agent
min=5
flags=(-trimpath "-tags=sqlite_fts5,integration" -count=1)
export CGO_CFLAGS="${CGO_CFLAGS:--O1 -g0}"

if [[ ! -d $dir ]]; then
	echo "mutate-pairing: run from the repository root" >&2
	exit 2
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

mapfile -t sites < <(grep -n -- '// pairing:record' "$dir"/*.go | grep -v '_test\.go:' | cut -d: -f1,2)
if ((${#sites[@]} < min)); then
	echo "mutate-pairing: only ${#sites[@]} pairing:record lines (want at least $min)" >&2
	exit 1
fi

# The unmutated package must pass first, or every mutant would look killed.
if ! go test "${flags[@]}" "$pkg" >"$scratch/baseline.log" 2>&1; then
	cat "$scratch/baseline.log" >&2
	echo "mutate-pairing: tests fail without any mutation" >&2
	exit 1
fi

survived=0
n=0
for site in "${sites[@]}"; do
	file=${site%%:*}
	line=${site##*:}
	n=$((n + 1))
	mutant="$scratch/mutant$n.go"
	sed "${line}d" "$file" >"$mutant"
	printf '{"Replace":{"%s":"%s"}}\n' "$PWD/$file" "$mutant" >"$scratch/overlay$n.json"
	if ! go build -overlay "$scratch/overlay$n.json" -trimpath "-tags=sqlite_fts5,integration" "$pkg" >"$scratch/build$n.log" 2>&1; then
		printf '%-28s -> INVALID (does not compile)\n' "$file:$line"
		sed 's/^/    /' "$scratch/build$n.log" | head -5
		survived=$((survived + 1))
		continue
	fi
	if go test -overlay "$scratch/overlay$n.json" "${flags[@]}" "$pkg" >"$scratch/test$n.log" 2>&1; then
		printf '%-28s -> SURVIVED\n' "$file:$line"
		survived=$((survived + 1))
	elif grep -q '\[build failed\]\|\[setup failed\]' "$scratch/test$n.log"; then
		printf '%-28s -> INVALID (build failed)\n' "$file:$line"
		survived=$((survived + 1))
	else
		printf '%-28s -> killed\n' "$file:$line"
	fi
done

echo "mutate-pairing: $n mutants, $((n - survived)) killed, $survived survived or invalid"
((survived == 0))
