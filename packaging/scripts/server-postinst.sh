#!/bin/sh
# hologram-server postinst (deb: "configure"; rpm %post: 1 = install, 2 = upgrade): the system
# user hologram and its directories, then systemd's view of the unit. Never fails without
# systemd (containers): every systemctl call is guarded.
set -e

case "$1" in
configure | 1 | 2) ;;
*) exit 0 ;;
esac

if ! getent passwd hologram >/dev/null; then
	nologin=/usr/sbin/nologin
	[ -x "$nologin" ] || nologin=/sbin/nologin
	useradd --system --user-group --home-dir /var/lib/hologram --no-create-home \
		--shell "$nologin" --comment "HologramAgent kernel" hologram
fi
# The data dir and the key's dir belong to the user, 0700. systemd would create both at start,
# but it leaves a ConfigurationDirectory owned by root, and homed writes its key there.
install -d -o hologram -g hologram -m 0700 /var/lib/hologram /etc/hologram

if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload || true
	# An upgrade restarts a running kernel on the new binary; an install starts nothing.
	systemctl try-restart hologram.service || true
fi
exit 0
