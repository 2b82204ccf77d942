package memadmin

import (
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory/embed"
)

// ModelOut converts a model manager's model info for the API (active: the chosen model's id).
func ModelOut(info embed.ModelInfo, active string) client.EmbeddingModel {
	s := info.Spec
	m := client.EmbeddingModel{ID: s.ID, Description: s.Description, Kind: string(s.Kind), Dim: s.Dim, Repo: s.Repo,
		Revision: s.Revision, Upstream: s.Upstream, Licence: s.Licence, Installed: info.Installed, Active: s.ID == active,
		Source: info.Source, InstalledAt: info.InstalledAt, Partial: info.Partial, Files: []client.ModelFile{}}
	pinned := map[string]embed.ModelFile{}
	known := true
	for _, f := range s.Files {
		pinned[f.Path] = f
		if f.Size == 0 && !f.Optional {
			known = false
		}
	}
	if info.Installed {
		for _, f := range info.Files {
			m.Files = append(m.Files, client.ModelFile{Path: f.Path, Size: f.Size, SHA256: f.SHA256, Pinned: pinned[f.Path].SHA256,
				Check: f.Check, Optional: pinned[f.Path].Optional})
			m.Size += f.Size
		}
		return m
	}
	for _, f := range s.Files {
		m.Files = append(m.Files, client.ModelFile{Path: f.Path, Size: f.Size, Pinned: f.SHA256, Optional: f.Optional})
		if known {
			m.Size += f.Size
		}
	}
	return m
}
