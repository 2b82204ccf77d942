# Built-in plugins: every plugins/builtin/<name> (a main package with plugin.json) is built with the
# Makefile's flags into bin/plugins/<name>/ (the binary, named by plugin.json's entry, and
# plugin.json), where the kernel finds them in a checkout and the packages pick them up
# (/usr/lib/hologram/plugins/<name>/). A new plugin needs no edit here.
BUILTIN_PLUGINS := $(notdir $(patsubst %/,%,$(dir $(wildcard plugins/builtin/*/plugin.json))))

.PHONY: builtin-plugins
builtin-plugins:
	@set -e; for p in $(BUILTIN_PLUGINS); do \
	  entry=$$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["entry"])' plugins/builtin/$$p/plugin.json); \
	  mkdir -p $(BIN)/plugins/$$p; \
	  $(GO) build $(BUILDFLAGS) -ldflags '$(LDFLAGS)' -o $(BIN)/plugins/$$p/$$entry ./plugins/builtin/$$p; \
	  install -m 0644 plugins/builtin/$$p/plugin.json $(BIN)/plugins/$$p/plugin.json; \
	done

build: builtin-plugins
