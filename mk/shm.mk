# Fuzzing of the shared-memory data plane (plugins/shm): the kernel-side readers a plugin can feed
# garbage (the plugin→kernel arena; the event ring and the region header).
#
#   make fuzz-shm                 every fuzz target of plugins/shm for $(FUZZTIME) each (CI: 60s)
#   make fuzz-shm FUZZTIME=10m    longer, locally
#
# The targets are listed by `go test -list`, so a new Fuzz function is picked up without editing
# this file. Inputs that fail are written to plugins/shm/testdata/fuzz/<target>/: commit them, they
# become regression tests of the plain `go test` run.

FUZZTIME ?= 60s
SHM_PKG := ./plugins/shm

.PHONY: fuzz-shm
fuzz-shm:
	@targets="$$($(GO) test $(TESTFLAGS) -list '^Fuzz' $(SHM_PKG) | grep '^Fuzz')" || { echo "fuzz-shm: listing the fuzz targets failed" >&2; exit 1; }; \
	test -n "$$targets" || { echo "fuzz-shm: no fuzz targets in $(SHM_PKG)" >&2; exit 1; }; \
	for t in $$targets; do \
	  echo "fuzz-shm: $$t for $(FUZZTIME)"; \
	  $(GO) test $(TESTFLAGS) -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $(SHM_PKG) || exit 1; \
	done
