# HologramAgent build. The Makefile owns the build flags: every go command below uses $(GOFLAGS_ALL);
# never pass -tags alone (it replaces the list and drops FTS5: "no such module: fts5").
SHELL := /bin/bash
TAGS ?= sqlite_fts5
TEST_TAGS ?= $(TAGS) integration
comma := ,
empty :=
space := $(empty) $(empty)
GO ?= go
BUILDFLAGS = -trimpath -tags=$(subst $(space),$(comma),$(strip $(TAGS)))
TESTFLAGS = -trimpath -tags=$(subst $(space),$(comma),$(strip $(TEST_TAGS)))
# The client variant of the desktop app (no kernel inside) adds nokernel to the same tags.
CLIENTFLAGS = -trimpath -tags=$(subst $(space),$(comma),$(strip $(TAGS) nokernel))
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.0.0)
LDFLAGS = -X github.com/hologramagent/hologram/kernel.Version=$(VERSION) -X main.version=$(VERSION)
# -O1 -g0 halves the cold build of the SQLite amalgamation (≈ 50 s of one core at -O2).
export CGO_ENABLED := 1
export CGO_CFLAGS ?= -O1 -g0
BIN := bin
# hologram-bench is a development tool: built here, never packaged (packaging/mkpkg lists the
# programs it ships).
CMDS := homed waiter hologram hologram-bench

.PHONY: all deps build run run-server test test-unit bench bench-memory vet fmt mutate-pairing smoke clean npm-peers

all: build

# deps installs what the build and the tests need on a fresh Debian 12 (as root), then the Go modules.
deps:
	@./.ci/deps.sh
	$(GO) mod download

# npm-peers installs the pinned npm MCP servers the plugin tests run as real peers
# (plugins/testdata/npm), only when node_modules is missing or older than the lock file.
NPM_PEERS := plugins/testdata/npm
npm-peers: $(NPM_PEERS)/node_modules/.package-lock.json

$(NPM_PEERS)/node_modules/.package-lock.json: $(NPM_PEERS)/package.json $(NPM_PEERS)/package-lock.json
	cd $(NPM_PEERS) && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

build: deps $(addprefix $(BIN)/,$(CMDS)) $(BIN)/hologram-client

$(BIN)/%: FORCE
	@mkdir -p $(BIN)
	$(GO) build $(BUILDFLAGS) -ldflags '$(LDFLAGS)' -o $@ ./cmd/$*

# hologram-client is the desktop app without the kernel: it attaches to a homed (--remote).
$(BIN)/hologram-client: FORCE
	@mkdir -p $(BIN)
	$(GO) build $(CLIENTFLAGS) -ldflags '$(LDFLAGS)' -o $@ ./cmd/hologram

FORCE:

# run opens the desktop app with the kernel inside, on the default data dir (a display is needed:
# a desktop session, or e.g. `Xvfb :99 & DISPLAY=:99 make run`). ARGS are passed to hologram.
# It builds the built-in plugins too (bin/plugins/*, found by the kernel in a checkout: without
# them the agent has no files, notes, calendar, rss or web tools) and waiter, to look inside
# (`bin/waiter tools`).
run: have-display deps $(BIN)/hologram $(BIN)/waiter builtin-plugins
	$(BIN)/hologram $(ARGS)

.PHONY: have-display
have-display:
	@if [ -z "$$DISPLAY" ] && [ -z "$$WAYLAND_DISPLAY" ]; then \
	  echo "make run opens a window, but there is no display (DISPLAY is unset): run it in a desktop session," >&2; \
	  echo "or under Xvfb (Xvfb :99 & DISPLAY=:99 make run), or use 'make run-server' for the terminal." >&2; exit 1; fi

# run-server starts homed on the default data dir and opens `waiter chat` against it; homed stops
# with the chat.
run-server: deps $(BIN)/homed $(BIN)/waiter builtin-plugins
	@./.ci/run-local.sh $(BIN)

# test runs every test, integration ones included, with the same flags as the binaries (plus -race).
# The packages' tests run after the others, alone: they install and purge the server package on
# this machine (as root), and kernels started by other tests would find its built-in plugins.
test: deps npm-peers assets jieba-dict packages
	$(GO) vet $(TESTFLAGS) ./...
	$(GO) test $(TESTFLAGS) -race -count=1 -timeout 20m $(TESTARGS) $$($(GO) list ./... | grep -v '/packaging')
	$(GO) test $(TESTFLAGS) -count=1 -timeout 20m $(TESTARGS) ./packaging/...

bench: build
	$(GO) test $(TESTFLAGS) -run '^$$' -bench . -benchmem $(BENCHARGS) ./...
	$(BIN)/hologram-bench turns

# bench-memory runs the recall benchmark on every dev set (evaluation data, never shipped): LoCoMo
# dev, RealMem, MADial zh and en, each beside its same-run BM25 baseline, in one table; the JSON
# report goes to build/recall-dev.json. BENCHARGS adds flags, e.g. BENCHARGS='--param date_boost=0'.
LOCOMO ?= ../shared/data/locomo/locomo-dev.json
REALMEM ?= ../shared/data/realmem
MADIAL ?= ../shared/data/madial
bench-memory: build
	@mkdir -p build
	$(BIN)/hologram-bench recall --locomo $(LOCOMO) --realmem $(REALMEM) --madial $(MADIAL) --json build/recall-dev.json $(BENCHARGS)

# mutate-pairing deletes each call/result pairing record line of kernel/agent in turn and shows
# the agent's tests failing for every one of them.
mutate-pairing:
	@./kernel/agent/testdata/mutate-pairing.sh

smoke: build
	HOMED_BIN=$(BIN)/homed WAITER_BIN=$(BIN)/waiter ../shared/tools/smoke-cli-contract

vet:
	$(GO) vet $(TESTFLAGS) ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN)

# jieba-dict copies gojieba's five dictionary files into build/jieba/, where the memory
# tokenizer (memory/embed.ResolveJiebaDir) finds them in a checkout; packages ship the same
# files under /usr/lib/hologram/jieba/.
JIEBA_VERSION := v1.4.6
JIEBA_FILES := jieba.dict.utf8 hmm_model.utf8 user.dict.utf8 idf.utf8 stop_words.utf8
.PHONY: jieba-dict
jieba-dict:
	@src="$$($(GO) env GOMODCACHE)/github.com/yanyiwu/gojieba@$(JIEBA_VERSION)/deps/cppjieba/dict"; \
	test -d "$$src" || $(GO) mod download github.com/yanyiwu/gojieba@$(JIEBA_VERSION) || exit 1; \
	mkdir -p build/jieba && \
	for f in $(JIEBA_FILES); do install -m 0644 "$$src/$$f" build/jieba/$$f || exit 1; done; \
	echo "jieba dictionaries copied to build/jieba/"

# Fragments: mk/*.mk add targets (assets, packages, fuzzing) with the flags defined above.
-include $(wildcard mk/*.mk)
