// Package packaging holds what HologramAgent's packages are made of — systemd units, the
// .desktop launcher, the AppStream metainfo template, maintainer scripts — and their tests.
// The packages themselves are built by the mkpkg command in packaging/mkpkg (make packages).
//
// The tests (build tag integration) check the packages `make packages` wrote into dist/: their
// contents and metadata (dpkg-deb, rpm), lintian, desktop-file-validate, appstreamcli, and,
// as root, a real install of the server package with dpkg: start the installed homed as its
// user, reach its API, remove, purge, and an upgrade that keeps a populated data dir. With
// HOLOGRAM_CI=1 a missing tool or a missing dist/ fails them instead of skipping. The install
// tests leave the machine as they found it (purge at the end, on failure too).
package packaging
