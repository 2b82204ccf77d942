#!/bin/sh
# hologram-server postrm (deb: "remove", "purge", "upgrade"…; rpm %postun: 0 = erase,
# 1 = upgrade). Removal keeps the kernel's data (/var/lib/hologram) and key (/etc/hologram);
# purge (deb only) deletes them and the system user. Deleting the user is safe: under the unit's
# ProtectSystem=strict it could write nowhere else, so no file keeps its uid.
set -e

if [ "$1" = purge ]; then
	rm -rf /var/lib/hologram /etc/hologram /run/hologram
	if getent passwd hologram >/dev/null; then
		userdel hologram || true
	fi
	if getent group hologram >/dev/null; then
		groupdel hologram || true
	fi
fi

if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload || true
fi
exit 0
