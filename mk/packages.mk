# Packages (issue 11; README.md "Install, upgrade, uninstall"): `make packages` writes into dist/, for amd64,
# hologram-full, hologram-server and hologram-client as .deb, .rpm and .tar.gz, and SHA256SUMS.
# They hold the binaries of `make build` (the Makefile's flags; no second build) and the assets
# of jieba-dict, onnxruntime, ocr-models and vad-model. packaging/mkpkg does the work; nfpm is a pinned
# tool in build/tools, not a module dependency.
#
#   make packages                                   all three variants
#   make packages PKG_VARIANTS=server PKG_VERSION=1.2.3 DIST=/tmp/d
#
# The version comes from git describe (tags vX.Y.Z), else 0.0.0~git<UTC commit time>.<commit>.

NFPM_VERSION := v2.45.2
TOOLS_DIR := build/tools
NFPM ?= $(TOOLS_DIR)/nfpm-$(NFPM_VERSION)
DIST ?= dist
PKG_VARIANTS ?= full server client
PKG_VERSION ?=
PKG_MAINTAINER ?=

.PHONY: packages nfpm
nfpm: $(NFPM)

# Installed under a versioned name, so bumping NFPM_VERSION installs the new one.
$(TOOLS_DIR)/nfpm-$(NFPM_VERSION):
	@mkdir -p $(TOOLS_DIR)/.nfpm-$(NFPM_VERSION)
	GOBIN=$(abspath $(TOOLS_DIR))/.nfpm-$(NFPM_VERSION) CGO_ENABLED=0 $(GO) install github.com/goreleaser/nfpm/v2/cmd/nfpm@$(NFPM_VERSION)
	mv $(TOOLS_DIR)/.nfpm-$(NFPM_VERSION)/nfpm $@ && rmdir $(TOOLS_DIR)/.nfpm-$(NFPM_VERSION)

packages: build jieba-dict onnxruntime ocr-models vad-model $(NFPM)
	$(GO) run $(BUILDFLAGS) ./packaging/mkpkg -nfpm $(NFPM) -bin $(BIN) -out $(DIST) \
	  -variants '$(subst $(space),$(comma),$(strip $(PKG_VARIANTS)))' \
	  $(if $(PKG_VERSION),-version '$(PKG_VERSION)') $(if $(PKG_MAINTAINER),-maintainer '$(PKG_MAINTAINER)')
