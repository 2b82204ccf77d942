#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need, only when something is missing.
set -euo pipefail
need=()
command -v gcc >/dev/null || need+=(gcc libc6-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v python3 >/dev/null || need+=(python3)
command -v git >/dev/null || need+=(git)
# Node.js and npm: the plugin tests run pinned npm MCP servers (make npm-peers)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
# WordNet 3.0 (the memory's lexicon: noun hypernyms for recall)
[ -f /usr/share/wordnet/data.noun ] || need+=(wordnet-base)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then echo "missing packages: ${need[*]} (run as root or install them)" >&2; exit 1; fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
if ! command -v go >/dev/null; then
  if [ -x /usr/local/go/bin/go ]; then echo "Go is at /usr/local/go/bin: add it to PATH" >&2; else echo "Go 1.26 is required (https://go.dev/dl)" >&2; fi
  exit 1
fi
