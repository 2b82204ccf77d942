// Command mkpkg builds HologramAgent's packages: for each variant (full, server, client) a .deb
// and an .rpm (with nfpm) and a .tar.gz, plus SHA256SUMS, from the binaries `make build` left
// in bin/ and the assets under build/. It builds nothing itself: the packages hold the very
// binaries the tests ran. `make packages` runs it (mk/packages.mk).
//
//	mkpkg [-root DIR] [-bin DIR] [-assets DIR] [-out DIR] [-work DIR] -nfpm PATH
//	      [-variants full,server,client] [-formats deb,rpm,tar] [-version V]
//	      [-maintainer "Name <mail>"]
//
// The version comes from `git describe` (tags vX.Y.Z), else 0.0.0~git<UTC commit time>.<commit>;
// see [packageVersion]. Per package it generates the DEP-5 copyright file (our licence and every
// bundled third-party licence: the Go modules linked into each binary, the assets'), a Debian
// changelog from git log, man pages (help2man on each binary's --help and --version), icons
// (rsvg-convert), AppStream metainfo, systemd units, and the dependencies of its ELF files
// (dpkg-shlibdeps for .deb, rpm's elfdeps for .rpm).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is mkpkg's whole life; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "mkpkg: %v\n", err)
		return 2
	}
	files, err := build(ctx, o, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "mkpkg: %v\n", err)
		return 1
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return 0
}

// options are mkpkg's inputs; paths are relative to the working directory.
type options struct {
	Root       string   // the repository: git history, LICENSE, packaging/, gui/assets/
	Bin        string   // homed, waiter, hologram, hologram-client, plugins/<name>/
	Assets     string   // jieba/, onnxruntime/, models/ocr/, models/vad/ (make jieba-dict, onnxruntime, ocr-models, vad-model)
	Out        string   // the packages and SHA256SUMS
	Work       string   // generated files and nfpm configs, replaced on each run
	NFPM       string   // the nfpm binary
	Variants   []string // a subset of full, server, client
	Formats    []string // a subset of deb, rpm, tar
	Version    string   // the package version; empty derives it from git
	Maintainer string   // "Name <mail>"; empty: [maintainer]
	Go         string   // the go command (go list finds the linked packages' licences)
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("mkpkg", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := options{}
	var variants, formats string
	fs.StringVar(&o.Root, "root", ".", "repository `dir`")
	fs.StringVar(&o.Bin, "bin", "bin", "binaries `dir` (make build)")
	fs.StringVar(&o.Assets, "assets", "build", "assets `dir` (jieba/, onnxruntime/, models/ocr/, models/vad/)")
	fs.StringVar(&o.Out, "out", "dist", "output `dir`")
	fs.StringVar(&o.Work, "work", "build/pkg", "work `dir` for generated files")
	fs.StringVar(&o.NFPM, "nfpm", "", "nfpm `binary` (required)")
	fs.StringVar(&variants, "variants", strings.Join(variantNames(), ","), "comma-separated `variants` to build")
	fs.StringVar(&formats, "formats", "deb,rpm,tar", "comma-separated `formats` to write")
	fs.StringVar(&o.Version, "version", "", "package `version` (default: from git describe)")
	fs.StringVar(&o.Maintainer, "maintainer", "", "package maintainer `\"Name <mail>\"` (default: the project's, "+maintainer+")")
	fs.StringVar(&o.Go, "go", "go", "go `command`")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.NFPM == "" {
		return options{}, errors.New("-nfpm is required (make packages installs it into build/tools)")
	}
	for _, v := range strings.Split(variants, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if _, ok := variantByName(v); !ok {
			return options{}, fmt.Errorf("unknown variant %q (variants: %s)", v, strings.Join(variantNames(), ", "))
		}
		o.Variants = append(o.Variants, v)
	}
	if len(o.Variants) == 0 {
		return options{}, errors.New("-variants names no variant")
	}
	for _, f := range strings.Split(formats, ",") {
		switch f = strings.TrimSpace(f); f {
		case "":
		case "deb", "rpm", "tar":
			o.Formats = append(o.Formats, f)
		default:
			return options{}, fmt.Errorf("unknown format %q (formats: deb, rpm, tar)", f)
		}
	}
	if len(o.Formats) == 0 {
		return options{}, errors.New("-formats names no format")
	}
	if o.Version != "" {
		if err := checkVersion(o.Version); err != nil {
			return options{}, err
		}
	}
	return o, nil
}
