#!/usr/bin/env bash
# Measures homed under the limits of issue 21 against ../shared/tools/fake_openai.py (an
# OpenAI-compatible server that refuses what real servers refuse): the built-in plugins
# (bin/plugins, from `make build`) plus the test MCP server of 300 tools and a 10 MiB result
# (plugins/testdata/mcp/bigmcp.py), a turn calling it, the model paging it with result_read, a
# Chinese turn (jieba loads) and a 200 MB streamed reply. It prints homed's VmHWM (peak RSS)
# after start and after the whole run, the tools per request, the largest request, and checks
# that waiter printed the cut reply and exited 0.
# usage (from the project root): benchmarks/limits/run.sh [BIN_DIR]   (default bin)
set -u
ROOT=$(pwd)
BIN=$(cd "${1:-bin}" && pwd)
FAKE=${FAKE_OPENAI:-$ROOT/../shared/tools/fake_openai.py}
T=$(mktemp -d /tmp/hlim.XXXXXX); PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
# KEEP_GOING=1 reports a failed step and goes on (to measure a baseline that fails some steps).
# NO_BIG=1 leaves the test MCP server out (a baseline whose requests would all be refused).
fail() { echo "FAIL: $*" | cut -c1-300; [ -n "${KEEP_GOING:-}" ] || exit 1; }
hwm() { awk '/VmHWM/ {print $2}' /proc/$1/status; }

python3 "$FAKE" "$T/llm.port" "$T/llm.log" & PIDS+=($!)
for _ in $(seq 50); do [ -s "$T/llm.port" ] && break; sleep 0.1; done
PORT=$(cat "$T/llm.port")
mkdir -p -m 700 "$T/run"; export XDG_RUNTIME_DIR="$T/run" HOLOGRAM_SOCKET="$T/run/homed.sock"
mkdir -p "$T/cfg" "$T/xdg"; export XDG_CONFIG_HOME="$T/cfg" XDG_DATA_HOME="$T/xdg"
export HOLOGRAM_PLUGINS_DIR=$BIN/plugins
W="$BIN/waiter"
start=$(date +%s.%N)
"$BIN/homed" --data "$T/data" --socket "$HOLOGRAM_SOCKET" >"$T/homed.log" 2>&1 & HOMED=$!; PIDS+=($HOMED)
for _ in $(seq 100); do [ -S "$HOLOGRAM_SOCKET" ] && break; sleep 0.1; done
[ -S "$HOLOGRAM_SOCKET" ] || fail "no socket"
echo sk-x | "$W" provider add fake --base-url "http://127.0.0.1:$PORT/v1" --model fake-1 >/dev/null || fail "provider add"
want=20
if [ -z "${NO_BIG:-}" ]; then
  "$W" plugin add big --command "python3 $ROOT/plugins/testdata/mcp/bigmcp.py" >/dev/null || fail "plugin add"; want=320
fi
for _ in $(seq 300); do n=$("$W" tools --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'); [ "$n" -gt $want ] && break; sleep 0.1; done
echo "tools available: $n ($(echo "$(date +%s.%N) - $start" | bc) s after start)"
echo "VmHWM after start: $(hwm $HOMED) kB"

ask() { timeout 300 "$W" ask "$1" >"$T/ask.out" 2>"$T/ask.err"; echo $?; echo "  VmHWM after '${1:0:30}': $(hwm $HOMED) kB, VmRSS $(awk '/VmRSS/ {print $2}' /proc/$HOMED/status) kB" >&2; }
if [ -z "${NO_BIG:-}" ]; then
rc=$(ask 'CALL big_result {}'); [ "$rc" = 0 ] || fail "big_result turn: $(tail -2 "$T/ask.err")"
hint=$("$W" history --json | python3 -c '
import json,re,sys
for m in json.load(sys.stdin):
    h = re.search(r"call result_read with (\{[^}]*\})", m.get("content") or "")
    if h: print(h.group(1))' | tail -1)
[ -n "$hint" ] || fail "no result_read hint in the history"
rc=$(ask "CALL result_read $hint"); [ "$rc" = 0 ] || fail "result_read turn: $(tail -2 "$T/ask.err")"
grep -q "DONE \[bytes" "$T/ask.out" || fail "result_read page not seen by the model: $(head -c 200 "$T/ask.out")"
fi
rc=$(ask '北京今天的天气怎么样？我们周末去颐和园划船吧'); [ "$rc" = 0 ] || fail "Chinese turn: $(tail -2 "$T/ask.err")"
rc=$(ask 'HUGE 200'); [ "$rc" = 0 ] || fail "HUGE 200: waiter exited $rc: $(tail -2 "$T/ask.err")"
grep -q "reply cut" "$T/ask.out" || fail "the cut reply lacks its note"
echo "HUGE 200: waiter exit $rc, printed $(wc -c <"$T/ask.out") bytes ending: $(tail -c 110 "$T/ask.out" | tr '\n' ' ')"
echo "VmHWM after the run: $(hwm $HOMED) kB"
python3 - "$T/llm.log" <<'PY'
import json, sys
n = big = most = 0
for line in open(sys.argv[1]):
    r = json.loads(line); b = r["body"]
    if "messages" not in b: continue
    n += 1; most = max(most, len(b.get("tools") or [])); big = max(big, len(json.dumps(b)))
print(f"chat requests: {n}; most tools in one: {most}; largest request: {big} bytes")
PY
grep -c '"level":"ERROR"\|level=ERROR' "$T/homed.log" | sed 's/^/homed error lines: /'
