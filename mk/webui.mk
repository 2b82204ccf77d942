# webui-peers installs playwright-core and axe-core (pinned in cmd/homed/testdata/webui), with which
# cmd/homed's web UI end-to-end tests drive Debian's chromium and check accessibility, only when
# node_modules is missing or older than the lock file (no browser download: --ignore-scripts).
WEBUI_PEERS := cmd/homed/testdata/webui
.PHONY: webui-peers webui-icons
webui-peers: $(WEBUI_PEERS)/node_modules/.package-lock.json

$(WEBUI_PEERS)/node_modules/.package-lock.json: $(WEBUI_PEERS)/package.json $(WEBUI_PEERS)/package-lock.json
	cd $(WEBUI_PEERS) && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

# webui-icons copies the desktop app's icon into the web UI's embedded assets (committed, so a
# fresh clone builds without make); `make test` refreshes them, and kernel/webui TestIconsAreTheApps
# fails when a copy differs from gui/assets.
WEBUI_ICONS := kernel/webui/assets/icon.png kernel/webui/assets/icon.svg
webui-icons: $(WEBUI_ICONS)
kernel/webui/assets/icon.%: gui/assets/icon.%
	cp $< $@

test: webui-peers webui-icons
