# acp-peers installs the official ACP TypeScript client (@agentclientprotocol/sdk and its peer
# zod, pinned in cmd/waiter/internal/acp/testdata/npm) that cmd/homed's `waiter acp` end-to-end
# test drives waiter with, only when node_modules is missing or older than the lock file.
ACP_PEERS := cmd/waiter/internal/acp/testdata/npm
.PHONY: acp-peers
acp-peers: $(ACP_PEERS)/node_modules/.package-lock.json

$(ACP_PEERS)/node_modules/.package-lock.json: $(ACP_PEERS)/package.json $(ACP_PEERS)/package-lock.json
	cd $(ACP_PEERS) && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

test npm-peers: acp-peers
