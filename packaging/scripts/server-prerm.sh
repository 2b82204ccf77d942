#!/bin/sh
# hologram-server prerm (deb: "remove", "upgrade", "deconfigure"…; rpm %preun: 0 = erase,
# 1 = upgrade): on removal, stop and disable the system unit before its files go (so no
# dangling enablement link stays in /etc). Never fails without systemd.
set -e

case "$1" in
remove | deconfigure | 0) ;;
*) exit 0 ;;
esac

if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl disable --now hologram.service || true
fi
exit 0
