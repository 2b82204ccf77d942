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
if [ "$("$bin/waiter" provider list --json 2>/dev/null | tr -d ' \n')" = "[]" ] && [ -t 0 ]; then
  echo "No LLM provider yet. Any OpenAI-compatible server works (OpenAI, DeepSeek, Qwen, OpenRouter,"
  echo "or a local Ollama/llama.cpp/vLLM server)."
  read -r -p "Base URL [https://api.openai.com/v1]: " url; url=${url:-https://api.openai.com/v1}
  read -r -p "Model [gpt-4o-mini]: " model; model=${model:-gpt-4o-mini}
  read -r -s -p "API key (hidden; empty for a local server): " key; echo
  HOLOGRAM_API_KEY=$key "$bin/waiter" provider add default --base-url "$url" --model "$model" </dev/null \
    || echo "(add one later with: waiter provider add NAME --base-url URL --model M)"
fi
"$bin/waiter" chat
