#!/usr/bin/env bash
# Measures the time from homed's start to `waiter tools` listing every tool of the built-in
# plugins (bin/plugins), with one MCP server that never answers configured (bigmcp.py --silent,
# added in a first run and remembered). No provider is configured. Prints the time the listing
# came back complete (the start of the call plus its duration).
# usage (from the project root): benchmarks/limits/toolsready.sh [BIN_DIR] [WANT]
#   WANT: the tools listed when complete (default 26: the built-ins' 23 and the kernel's 3;
#   main before issue 21 has 25, without result_read)
set -u
ROOT=$(pwd)
B=$(cd "${1:-bin}" && pwd)
WANT=${2:-26}
T=$(mktemp -d /tmp/hready.XXXX); mkdir -p -m 700 "$T/run"
trap 'rm -rf "$T"' EXIT
export XDG_RUNTIME_DIR=$T/run HOLOGRAM_SOCKET=$T/run/homed.sock XDG_CONFIG_HOME=$T/cfg XDG_DATA_HOME=$T/xdg HOLOGRAM_PLUGINS_DIR=$B/plugins
"$B/homed" --data "$T/data" --socket "$HOLOGRAM_SOCKET" >"$T/log" 2>&1 & HP=$!
for _ in $(seq 100); do [ -S "$HOLOGRAM_SOCKET" ] && break; sleep 0.05; done; sleep 1
timeout 30 "$B/waiter" plugin add silent --command "python3 $ROOT/plugins/testdata/mcp/bigmcp.py --silent" >/dev/null
kill -TERM $HP; wait $HP; rm -f "$HOLOGRAM_SOCKET"
t0=$(date +%s.%N)
"$B/homed" --data "$T/data" --socket "$HOLOGRAM_SOCKET" >"$T/log2" 2>&1 & HP=$!
for _ in $(seq 500); do [ -S "$HOLOGRAM_SOCKET" ] && break; sleep 0.01; done
for _ in $(seq 600); do
  n=$("$B/waiter" tools --json | grep -o '"name"' | wc -l); e=$(date +%s.%N)
  if [ "$n" -ge "$WANT" ]; then echo "$n tools listed $(echo "$e - $t0" | bc) s after homed started (silent MCP server configured)"; break; fi
  sleep 0.05
done
"$B/waiter" plugin list | grep -E "^NAME|silent" | cut -c1-120
kill -TERM $HP; wait $HP
