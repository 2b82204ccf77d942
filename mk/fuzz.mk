# Fuzzing of every parser that reads what someone else wrote: the HTTP API's JSON, the
# provider's SSE stream, the client's SSE reader, JSON-RPC framing, OneBot frames, ICS, feeds,
# web pages, backup imports, the TOML config, plus the shared-memory readers and the tokenizer.
#
#   make fuzz                  every Fuzz target of the repository for $(FUZZTIME) each (CI: 10s)
#   make fuzz FUZZTIME=5m      longer, locally
#   make fuzz FUZZPKGS=./plugins/protocol    one package
#
# Targets are found by `go test -list`, so a new Fuzz function is fuzzed without editing this
# file. FUZZJOBS targets run at once (the instrumented builds dominate a short run). A run that
# ends in a bare "context deadline exceeded" with no failing input written is Go's fuzzing
# coordinator racing its own -fuzztime deadline (go.dev/issue/75804, fixed in Go 1.27, seen here
# on a loaded machine): it fuzzed its whole time without a crash and counts as done, said so. The seed corpora (f.Add) and the committed inputs in each package's
# testdata/fuzz/<target>/ run as plain tests in `make test`. An input that fails is written to
# testdata/fuzz/<target>/: fix the bug, commit the input (it becomes a regression test).

FUZZTIME ?= 30s
FUZZJOBS ?= 2
FUZZPKGS ?= $(shell git grep -l '^func Fuzz' -- '*_test.go' | xargs -n1 dirname | sort -u | sed 's|^|./|')

.PHONY: fuzz
fuzz:
	@start=$$(date +%s); \
	list=$$(for pkg in $(FUZZPKGS); do \
	  targets="$$($(GO) test $(TESTFLAGS) -list '^Fuzz' $$pkg | grep '^Fuzz')" || { echo "fuzz: listing $$pkg failed" >&2; exit 1; }; \
	  for t in $$targets; do echo "$$pkg $$t"; done; \
	done) || exit 1; \
	test -n "$$list" || { echo "fuzz: no fuzz targets" >&2; exit 1; }; \
	echo "$$list" | xargs -P $(FUZZJOBS) -L 1 sh -c 'echo "fuzz: $$0 $$1 for $(FUZZTIME)"; \
	  out=$$($(GO) test $(TESTFLAGS) -run "^$$" -fuzz "^$$1$$" -fuzztime $(FUZZTIME) $$0 2>&1) || { \
	    if echo "$$out" | grep -q "^    context deadline exceeded$$" && ! echo "$$out" | grep -q "Failing input written"; then \
	      echo "fuzz: $$0 $$1: no crash; the run ended in go.dev/issue/75804 (the fuzzer racing its -fuzztime deadline)"; exit 0; fi; \
	    echo "$$out"; echo "fuzz: $$0 $$1 FAILED"; exit 255; }; \
	  echo "$$out" | tail -1' || exit 1; \
	echo "fuzz: $$(echo "$$list" | wc -l) targets, 0 crashes, in $$(( $$(date +%s) - start )) s"
