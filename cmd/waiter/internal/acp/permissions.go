package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// Permission decisions kept for a project.
const (
	Allow  = "allow"
	Reject = "reject"
)

// maxPermissionsFile bounds the file read: it holds one line per project and kind of approval.
const maxPermissionsFile = 1 << 20

// Permissions are the owner's "always" answers to approvals asked in an editor, per project
// (the session's cwd) and kind of approval (the plugin and the approval's title, e.g.
// "shell: Run a command"). They live in one JSON file (0600), written whole through a rename.
// Safe for concurrent use within a process.
type Permissions struct {
	path string
	mu   sync.Mutex
}

// Rule is one kept answer.
type Rule struct {
	Project  string `json:"project"`
	Kind     string `json:"kind"`
	Decision string `json:"decision"` // "allow" or "reject"
}

type permFile struct {
	Version int `json:"version"`
	// Projects maps a project dir to kind → decision.
	Projects map[string]map[string]string `json:"projects"`
}

// OpenPermissions uses the file at path (created on the first save).
func OpenPermissions(path string) *Permissions { return &Permissions{path: path} }

// Path is the file's path.
func (p *Permissions) Path() string { return p.path }

func (p *Permissions) load() (permFile, error) {
	f := permFile{Version: 1, Projects: map[string]map[string]string{}}
	fh, err := os.Open(p.path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("acp permissions: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return f, fmt.Errorf("acp permissions: %w", err)
	}
	if st.Size() > maxPermissionsFile {
		return f, fmt.Errorf("acp permissions: %s is %d bytes, more than the %d this file can hold: remove it or revoke rules", p.path, st.Size(), maxPermissionsFile)
	}
	dec := json.NewDecoder(fh)
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("acp permissions: %s: %w (fix or remove the file)", p.path, err)
	}
	if f.Version != 1 {
		return f, fmt.Errorf("acp permissions: %s has version %d, this waiter reads version 1", p.path, f.Version)
	}
	if f.Projects == nil {
		f.Projects = map[string]map[string]string{}
	}
	return f, nil
}

func (p *Permissions) save(f permFile) error {
	if err := os.MkdirAll(filepath.Dir(p.path), 0o700); err != nil {
		return fmt.Errorf("acp permissions: %w", err)
	}
	raw, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p.path), ".acp-permissions-*")
	if err != nil {
		return fmt.Errorf("acp permissions: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("acp permissions: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("acp permissions: %w", err)
	}
	if err := os.Rename(tmp.Name(), p.path); err != nil {
		return fmt.Errorf("acp permissions: %w", err)
	}
	return nil
}

// Lookup returns the kept decision for kind in project ("" when none).
func (p *Permissions) Lookup(project, kind string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := p.load()
	if err != nil {
		return "", err
	}
	return f.Projects[project][kind], nil
}

// Set keeps decision ("allow" or "reject") for kind in project.
func (p *Permissions) Set(project, kind, decision string) error {
	if decision != Allow && decision != Reject {
		return fmt.Errorf("acp permissions: decision %q is neither %q nor %q", decision, Allow, Reject)
	}
	if project == "" || kind == "" {
		return errors.New("acp permissions: empty project or kind")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := p.load()
	if err != nil {
		return err
	}
	if f.Projects[project] == nil {
		f.Projects[project] = map[string]string{}
	}
	f.Projects[project][kind] = decision
	return p.save(f)
}

// List returns every rule, by project then kind.
func (p *Permissions) List() ([]Rule, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := p.load()
	if err != nil {
		return nil, err
	}
	out := []Rule{}
	for proj, kinds := range f.Projects {
		for kind, d := range kinds {
			out = append(out, Rule{Project: proj, Kind: kind, Decision: d})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Project != out[j].Project {
			return out[i].Project < out[j].Project
		}
		return out[i].Kind < out[j].Kind
	})
	return out, nil
}

// Revoke removes the rules of project: only kind's when kind is not empty. It returns how many
// it removed.
func (p *Permissions) Revoke(project, kind string) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := p.load()
	if err != nil {
		return 0, err
	}
	kinds := f.Projects[project]
	n := 0
	if kind == "" {
		n = len(kinds)
		delete(f.Projects, project)
	} else if _, ok := kinds[kind]; ok {
		n = 1
		delete(kinds, kind)
		if len(kinds) == 0 {
			delete(f.Projects, project)
		}
	}
	if n == 0 {
		return 0, nil
	}
	return n, p.save(f)
}
