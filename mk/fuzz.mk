# Fuzzing of every parser that reads what someone else wrote: the HTTP API's JSON, the
# provider's SSE stream, the client's SSE reader, JSON-RPC framing, OneBot frames, ICS, feeds,
# web pages, backup imports, the TOML config, plus the shared-memory readers and the tokenizer.
#
#   make fuzz                  every Fuzz target of the repository for $(FUZZTIME) each (CI: 10s)
#   make fuzz FUZZTIME=5m      longer, locally
#   make fuzz FUZZPKGS=./plugins/protocol    one package
#
# Targets are found by `go test -list`, so a new Fuzz function is fuzzed without editing this
# file. The seed corpora (f.Add) and the committed inputs in each package's testdata/fuzz/<target>/
# run as plain tests in `make test`. An input that fails is written to testdata/fuzz/<target>/:
# fix the bug, commit the input (it becomes a regression test).

FUZZTIME ?= 30s
FUZZPKGS ?= $(shell git grep -l '^func Fuzz' -- '*_test.go' | xargs -n1 dirname | sort -u | sed 's|^|./|')

.PHONY: fuzz
fuzz:
	@set -e; start=$$(date +%s); n=0; \
	for pkg in $(FUZZPKGS); do \
	  targets="$$($(GO) test $(TESTFLAGS) -list '^Fuzz' $$pkg | grep '^Fuzz')" || { echo "fuzz: listing $$pkg failed" >&2; exit 1; }; \
	  for t in $$targets; do \
	    echo "fuzz: $$pkg $$t for $(FUZZTIME)"; \
	    $(GO) test $(TESTFLAGS) -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	    n=$$((n+1)); \
	  done; \
	done; \
	echo "fuzz: $$n targets, 0 crashes, in $$(( $$(date +%s) - start )) s"
