package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"time"
)

// nfpmConfig is nfpm's configuration (nfpm.yaml; JSON is YAML) for one format.
type nfpmConfig struct {
	Name          string            `json:"name"`
	Arch          string            `json:"arch"`
	Platform      string            `json:"platform"`
	Version       string            `json:"version"`
	VersionSchema string            `json:"version_schema"`
	Release       string            `json:"release,omitempty"`
	Section       string            `json:"section"`
	Priority      string            `json:"priority"`
	Maintainer    string            `json:"maintainer"`
	Description   string            `json:"description"`
	Vendor        string            `json:"vendor"`
	Homepage      string            `json:"homepage"`
	License       string            `json:"license"`
	MTime         string            `json:"mtime"`
	Provides      []string          `json:"provides,omitempty"`
	Conflicts     []string          `json:"conflicts,omitempty"`
	Replaces      []string          `json:"replaces,omitempty"`
	Depends       []string          `json:"depends,omitempty"`
	Recommends    []string          `json:"recommends,omitempty"`
	Contents      []nfpmContent     `json:"contents"`
	Scripts       map[string]string `json:"scripts,omitempty"`
	RPM           *nfpmRPM          `json:"rpm,omitempty"`
}

type nfpmContent struct {
	Src      string       `json:"src"`
	Dst      string       `json:"dst"`
	Type     string       `json:"type,omitempty"`
	FileInfo nfpmFileInfo `json:"file_info"`
}

type nfpmFileInfo struct {
	Mode  uint32 `json:"mode"`
	Owner string `json:"owner"`
	Group string `json:"group"`
}

type nfpmRPM struct {
	Summary string `json:"summary"`
	Group   string `json:"group"`
}

// nfpmConfigFor is the package's nfpm configuration for format ("deb" or "rpm").
func (p *pkg) nfpmConfigFor(format string, d deps) (nfpmConfig, error) {
	c := nfpmConfig{
		Name: p.v.Package, Arch: arch, Platform: "linux", Version: p.version,
		// The version is used as it is: it is valid for both formats already (packageVersion).
		VersionSchema: "none",
		Section:       "utils", Priority: "optional", Maintainer: p.maint,
		Description: p.v.descriptionText(), Vendor: "HologramAgent", Homepage: homepage,
		License: p.license, MTime: p.time.UTC().Format(time.RFC3339),
		// The three variants are mutually exclusive; each provides the virtual "hologram".
		Provides: []string{"hologram"}, Conflicts: p.v.others(),
	}
	switch format {
	case "deb":
		c.Replaces = p.v.others()
		c.Depends, c.Recommends = d.DebDepends, d.DebRecommends
	case "rpm":
		// rpm has no Replaces: nfpm would write Obsoletes, which would make dnf swap variants
		// on its own. Conflicts make the choice explicit, as in the .deb.
		c.Release = "1"
		c.Depends = d.RPMRequires
		c.RPM = &nfpmRPM{Summary: p.v.Summary, Group: "Applications/Productivity"}
	default:
		return c, fmt.Errorf("unknown format %q", format)
	}
	for _, e := range p.entries {
		if e.Only != "" && e.Only != format {
			continue
		}
		src, err := filepath.Abs(e.Src)
		if err != nil {
			return c, err
		}
		ct := nfpmContent{Src: src, Dst: e.Dst, FileInfo: nfpmFileInfo{Mode: uint32(e.Mode), Owner: "root", Group: "root"}}
		if format == "rpm" {
			// nfpm drops doc and license entries from a .deb; only the .rpm marks them.
			ct.Type = e.Type
		}
		c.Contents = append(c.Contents, ct)
	}
	if p.v.SystemUnit {
		c.Scripts = map[string]string{}
		for k, f := range map[string]string{"postinstall": "server-postinst.sh", "preremove": "server-prerm.sh", "postremove": "server-postrm.sh"} {
			abs, err := filepath.Abs(filepath.Join(p.o.Root, "packaging", "scripts", f))
			if err != nil {
				return c, err
			}
			c.Scripts[k] = abs
		}
	}
	return c, nil
}

// nfpm writes the package's file of format ("deb" or "rpm") into the output dir.
func (p *pkg) nfpm(ctx context.Context, format string, d deps) (string, error) {
	c, err := p.nfpmConfigFor(format, d)
	if err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return "", err
	}
	cfg, err := p.genFile("nfpm-"+format+".yaml", data)
	if err != nil {
		return "", err
	}
	target := filepath.Join(p.o.Out, p.fileName(format))
	env := []string{"SOURCE_DATE_EPOCH=" + strconv.FormatInt(p.time.Unix(), 10)}
	if _, err := runCmd(ctx, "", env, p.o.NFPM, "package", "--config", cfg, "--packager", format, "--target", target); err != nil {
		return "", err
	}
	return target, nil
}

// fileName is the conventional name of the package's file of format.
func (p *pkg) fileName(format string) string {
	if format == "rpm" {
		return p.v.Package + "-" + p.version + "-1.x86_64.rpm"
	}
	return p.v.Package + "_" + p.version + "_" + arch + ".deb"
}
