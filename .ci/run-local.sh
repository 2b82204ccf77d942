#!/usr/bin/env bash
# `make run`: starts homed on the default data dir (unless one already runs there) and opens
# `waiter chat` against it; a homed started here stops when the chat ends.
set -euo pipefail
bin=${1:-bin}
: "${XDG_RUNTIME_DIR:=/tmp/hologram-$(id -u)-run}"
export XDG_RUNTIME_DIR
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
sock=${HOLOGRAM_SOCKET:-$XDG_RUNTIME_DIR/hologram/homed.sock}
export HOLOGRAM_SOCKET=$sock
started=
if ! "$bin/waiter" status >/dev/null 2>&1; then
  log=${XDG_STATE_HOME:-$HOME/.local/state}/hologram/homed.log
  mkdir -p "$(dirname "$log")"
  "$bin/homed" --socket "$sock" >>"$log" 2>&1 &
  started=$!
  trap 'kill -TERM $started 2>/dev/null; wait $started 2>/dev/null' EXIT
  for _ in $(seq 100); do [ -S "$sock" ] && "$bin/waiter" status >/dev/null 2>&1 && break; kill -0 $started 2>/dev/null || { tail -5 "$log"; exit 1; }; sleep 0.1; done
  echo "homed started (pid $started, log $log)"
fi
if [ "$("$bin/waiter" provider list --json 2>/dev/null | tr -d ' \n')" = "[]" ]; then
  echo "No LLM provider yet. Add one in another terminal, e.g.:"
  echo "  HOLOGRAM_SOCKET=$sock HOLOGRAM_API_KEY=sk-... $bin/waiter provider add openai --base-url https://api.openai.com/v1 --model gpt-4o-mini"
  echo "  HOLOGRAM_SOCKET=$sock $bin/waiter provider add local --base-url http://127.0.0.1:11434/v1 --model qwen2.5 </dev/null"
fi
"$bin/waiter" chat
