# a2a-peers installs the official A2A JavaScript SDK (@a2a-js/sdk, pinned in
# cmd/homed/testdata/a2a-js) whose client cmd/homed's A2A end-to-end test drives homed with,
# only when node_modules is missing or older than the lock file. Its optional server-side peer
# dependencies (express, grpc, databases) are not installed: the test uses the client only.
A2A_PEERS := cmd/homed/testdata/a2a-js
.PHONY: a2a-peers
a2a-peers: $(A2A_PEERS)/node_modules/.package-lock.json

$(A2A_PEERS)/node_modules/.package-lock.json: $(A2A_PEERS)/package.json $(A2A_PEERS)/package-lock.json
	cd $(A2A_PEERS) && npm ci --ignore-scripts --no-audit --no-fund --legacy-peer-deps
	@touch $@

test: a2a-peers
