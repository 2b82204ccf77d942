#!/usr/bin/env bash
# Measures the time from homed's start to `waiter tools` listing every tool of the built-in
# plugins (bin/plugins) with one MCP server that never answers configured (bigmcp.py --silent,
# added once and remembered), then the first and the tenth turn's latency against
# ../shared/tools/fake_openai.py.
# NO_SILENT=1 leaves the silent server out (the first turn then waits for no plugin).
# usage (from the project root): benchmarks/limits/startup.sh [BIN_DIR]   (default bin)
set -u
ROOT=$(pwd)
BIN=$(cd "${1:-bin}" && pwd)
FAKE=${FAKE_OPENAI:-$ROOT/../shared/tools/fake_openai.py}
T=$(mktemp -d /tmp/hstart.XXXXXX); PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; [ -n "${KEEP_LOG:-}" ] && cp "$T/homed.log" "$KEEP_LOG"; rm -rf "$T"; }
trap cleanup EXIT
python3 "$FAKE" "$T/llm.port" "$T/llm.log" & PIDS+=($!)
for _ in $(seq 50); do [ -s "$T/llm.port" ] && break; sleep 0.1; done
mkdir -p -m 700 "$T/run"; export XDG_RUNTIME_DIR="$T/run" HOLOGRAM_SOCKET="$T/run/homed.sock"
mkdir -p "$T/cfg" "$T/xdg"; export XDG_CONFIG_HOME="$T/cfg" XDG_DATA_HOME="$T/xdg" HOLOGRAM_PLUGINS_DIR=$BIN/plugins
W="$BIN/waiter"
now() { date +%s.%N; }
start_homed() {
  t0=$(now)
  "$BIN/homed" --data "$T/data" --socket "$HOLOGRAM_SOCKET" >>"$T/homed.log" 2>&1 & HOMED=$!; PIDS+=($HOMED)
  for _ in $(seq 200); do [ -S "$HOLOGRAM_SOCKET" ] && "$W" status >/dev/null 2>&1 && break; sleep 0.02; done
}
# The number of the built-ins' tools, from a run without the silent server.
start_homed
echo sk-x | "$W" provider add fake --base-url "http://127.0.0.1:$(cat "$T/llm.port")/v1" --model fake-1 >/dev/null
builtins="files notes calendar rss web"
count() { "$W" tools --json 2>/dev/null | python3 -c '
import json,sys
ts = json.load(sys.stdin); print(sum(1 for t in ts if t["source"] in sys.argv[1].split()))' "$builtins"; }
for _ in $(seq 300); do n=$(count); [ "$n" -gt 0 ] && [ "$n" = "$(sleep 0.5; count)" ] && break; done
full=$n
[ -n "${NO_SILENT:-}" ] || timeout 60 "$W" plugin add silent --command "python3 $ROOT/plugins/testdata/mcp/bigmcp.py --silent" >/dev/null 2>&1
kill -TERM $HOMED; wait $HOMED 2>/dev/null; rm -f "$HOLOGRAM_SOCKET"
start_homed
echo "homed answering $(echo "$(now) - $t0" | bc) s after start"
for _ in $(seq 3000); do c=$(count); [ -n "${VERBOSE:-}" ] && echo "  $(echo "$(now) - $t0" | bc) s: $c tools"; [ "$c" = "$full" ] && break; sleep 0.02; done
echo "built-ins' $full tools listed $(echo "$(now) - $t0" | bc) s after homed started (silent MCP server configured)"
"$W" plugin list | grep -E "^NAME|silent" | cut -c1-150
for i in $(seq 10); do
  a=$(now); timeout 60 "$W" ask "hello $i" >/dev/null 2>&1; b=$(now)
  [ $i = 1 ] && first=$(echo "$b - $a" | bc)
  [ $i = 10 ] && tenth=$(echo "$b - $a" | bc)
done
echo "first turn ${first} s, tenth turn ${tenth} s"
sleep 9; "$W" plugin list | grep -E "^NAME|silent" | cut -c1-150
