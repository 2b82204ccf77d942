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
# The desktop app (Fyne: OpenGL + X11 headers; toolchain-notes-gui §1) and its tests: a virtual
# display, input and screenshots, a private D-Bus session bus, CJK fonts for Chinese text.
# The dense-embedding tests generate tiny ONNX models with Debian's python3-onnx; the web plugin
# drives Debian's chromium. The packages are built and checked with lintian, rpm, help2man (man
# pages), librsvg (icons), desktop-file-utils, appstream and systemd-analyze. zbar-tools reads
# back the QR codes of `waiter pair` (cmd/homed TestWebUIPairing). espeak-ng speaks replies
# (kernel/speech, `waiter say`), sox checks what it spoke; ffmpeg decodes voice messages
# (memory/stt); pulseaudio with pulseaudio-utils gives the chat's Talk button a microphone to
# record (a private server whose microphone is a pipe: gui TestChatMicRecordsMicrophone). The code plugin's sandbox runs code under bubblewrap, and its tests plot with
# python3-matplotlib. The music plugin's tests run a real mpd (null audio output) over a library
# of FLAC files sox writes.
for p in libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev \
  xvfb xauth x11-utils xdotool imagemagick dbus fonts-noto-cjk fonts-dejavu-core \
  python3-onnx python3-numpy chromium zbar-tools bubblewrap python3-matplotlib \
  lintian rpm help2man librsvg2-bin desktop-file-utils appstream systemd dpkg-dev sqlite3 curl binutils \
  espeak-ng sox mpd ffmpeg pulseaudio pulseaudio-utils; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then echo "missing packages: ${need[*]} (run as root or install them)" >&2; exit 1; fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
if ! command -v go >/dev/null; then
  if [ -x /usr/local/go/bin/go ]; then echo "Go is at /usr/local/go/bin: add it to PATH" >&2; else echo "Go 1.26 is required (https://go.dev/dl)" >&2; fi
  exit 1
fi
