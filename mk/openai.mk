# openai-peers installs the official OpenAI JavaScript SDK, the Vercel AI SDK (ai +
# @ai-sdk/openai-compatible), LangChain JS (@langchain/openai) and playwright-core (pinned in
# cmd/homed/testdata/openai-js) that cmd/homed's /v1 end-to-end tests drive homed with, only
# when node_modules is missing or older than the lock file. playwright-core drives Debian's
# chromium (no browser download: --ignore-scripts).
OPENAI_PEERS := cmd/homed/testdata/openai-js
.PHONY: openai-peers
openai-peers: $(OPENAI_PEERS)/node_modules/.package-lock.json

$(OPENAI_PEERS)/node_modules/.package-lock.json: $(OPENAI_PEERS)/package.json $(OPENAI_PEERS)/package-lock.json
	cd $(OPENAI_PEERS) && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

test: openai-peers
