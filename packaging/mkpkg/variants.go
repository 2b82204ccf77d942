package main

// A variant is one of the three mutually exclusive packages (ARCHITECTURE.md §9).
type variant struct {
	Name    string // full, server, client
	Package string // the package name
	// Summary is the one-line description; Description the paragraphs after it.
	Summary     string
	Description []string
	// Bins are the programs in /usr/bin.
	Bins []program
	// Kernel variants ship the built-in plugins and the assets under /usr/lib/hologram.
	Kernel bool
	// UserUnit adds the opt-in systemd user unit for homed (a desktop's own kernel without the
	// GUI); the server runs homed as a system service and has none.
	UserUnit bool
	// Examples keeps the example plugins ([examplePlugins]) among the built-in ones: a
	// developer's desktop may try them, a server has no use for them.
	Examples bool
	// SystemUnit adds the hardened system unit, its user and its maintainer scripts.
	SystemUnit bool
	// Desktop adds the .desktop launcher, the icons and the fonts the GUI needs.
	Desktop bool
}

// A program is one binary of bin/ installed as /usr/bin/Name, with its man page.
type program struct {
	File    string // in bin/
	Name    string // in /usr/bin
	ManDesc string // the man page's NAME line
}

var (
	progHomed    = program{File: "homed", Name: "homed", ManDesc: "the HologramAgent kernel, headless: agent, memory and plugins behind an HTTP API"}
	progWaiter   = program{File: "waiter", Name: "waiter", ManDesc: "terminal chat and administration client of a HologramAgent kernel"}
	progHologram = program{File: "hologram", Name: "hologram", ManDesc: "the HologramAgent desktop app, with the kernel inside"}
	progClient   = program{File: "hologram-client", Name: "hologram", ManDesc: "the HologramAgent desktop app, attached to a remote kernel"}
)

var variants = []variant{
	{
		Name: "full", Package: "hologram-full",
		Summary: "personal AI agent with memory and plugins (desktop app and server)",
		Description: []string{
			"HologramAgent is a self-hosted personal AI agent: it chats through the LLM providers you configure, remembers across conversations, and uses plugins as tools.",
			"This package has everything: the desktop app hologram with the kernel inside, the headless kernel homed (with an opt-in systemd user unit), the terminal client waiter, the built-in plugins and the memory's assets (Chinese word segmentation dictionaries, ONNX Runtime and OCR models).",
		},
		Bins: []program{progHologram, progHomed, progWaiter}, Kernel: true, UserUnit: true, Examples: true, Desktop: true,
	},
	{
		Name: "server", Package: "hologram-server",
		Summary: "personal AI agent with memory and plugins (headless server)",
		Description: []string{
			"HologramAgent is a self-hosted personal AI agent: it chats through the LLM providers you configure, remembers across conversations, and uses plugins as tools.",
			"This package is for servers: the headless kernel homed as a hardened systemd service with its own system user, the terminal client waiter, the built-in plugins and the memory's assets. It needs no graphics libraries; desktops and the waiter client connect to it over its API.",
		},
		Bins: []program{progHomed, progWaiter}, Kernel: true, SystemUnit: true,
	},
	{
		Name: "client", Package: "hologram-client",
		Summary: "personal AI agent with memory and plugins (desktop client)",
		Description: []string{
			"HologramAgent is a self-hosted personal AI agent: it chats through the LLM providers you configure, remembers across conversations, and uses plugins as tools.",
			"This package is the client only: the desktop app hologram and the terminal client waiter, which attach to a kernel running elsewhere (hologram-server or hologram-full) over its remote API.",
		},
		Bins: []program{progClient, progWaiter}, Desktop: true,
	},
}

func variantNames() []string {
	var n []string
	for _, v := range variants {
		n = append(n, v.Name)
	}
	return n
}

func variantByName(name string) (variant, bool) {
	for _, v := range variants {
		if v.Name == name {
			return v, true
		}
	}
	return variant{}, false
}

// others are the packages v conflicts with and replaces.
func (v variant) others() []string {
	var o []string
	for _, w := range variants {
		if w.Name != v.Name {
			o = append(o, w.Package)
		}
	}
	return o
}

// examplePlugins are the plugins of plugins/builtin that are examples for plugin authors
// (built, never started by default): only variants with Examples ship them.
var examplePlugins = map[string]bool{"echo": true}

// maintainer is the packages' Maintainer unless -maintainer says otherwise: the project's
// own address, the same for every build (not the committer of HEAD).
const maintainer = "HologramAgent maintainers <maintainers@hologramagent.org>"

// Fixed names shared by the files below.
const (
	appID      = "com.github.hologramagent.hologram"
	homepage   = "https://github.com/hologramagent/hologram"
	libDir     = "/usr/lib/hologram"
	unitName   = "hologram.service"
	arch       = "amd64"
	ourLicense = "AGPL-3.0-only"
)
