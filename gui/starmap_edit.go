package gui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// The star map's edits: pins, entity and triple edits, merges and forgetting, each reported
// in the map's status line.

// selectedEntity returns the selected entity, or an error to show.
func (vm *StarMapVM) selectedEntity() (client.Entity, error) {
	sel, _ := vm.Selected.Get()
	if sel.Entity == nil {
		return client.Entity{}, errors.New(T("Select a star first."))
	}
	return sel.Entity.Entity, nil
}

// act runs one action on the kernel, then reloads the sky; done is the success message.
func (vm *StarMapVM) act(ctx context.Context, what string, fn func() error, done string) error {
	_ = vm.Busy.Set(true)
	err := fn()
	_ = vm.Busy.Set(false)
	if err != nil {
		vm.report(Tf("Could not %s: %v", what, err), true)
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := vm.Load(ctx); err != nil {
		return err
	}
	vm.report(done, false)
	return nil
}

// SetPinned pins or unpins the selected entity (pinned ones never fade from memory).
func (vm *StarMapVM) SetPinned(ctx context.Context, pinned bool) error {
	e, err := vm.selectedEntity()
	if err != nil {
		vm.report(err.Error(), true)
		return err
	}
	done := Tf("Pinned %s.", e.Name)
	if !pinned {
		done = Tf("Unpinned %s.", e.Name)
	}
	return vm.act(ctx, T("pin"), func() error {
		return vm.svc.Pin(ctx, client.PinRequest{Kind: "entity", ID: e.ID, Pinned: pinned})
	}, done)
}

// Edit changes the selected entity's name, kind, text and scope.
func (vm *StarMapVM) Edit(ctx context.Context, name, kind, text, scope string) error {
	e, err := vm.selectedEntity()
	if err != nil {
		vm.report(err.Error(), true)
		return err
	}
	name, kind, scope = strings.TrimSpace(name), strings.TrimSpace(kind), strings.TrimSpace(scope)
	switch {
	case name == "":
		err = errors.New(T("A star needs a name."))
	case scope != "" && client.CheckScope(scope) != nil:
		err = errors.New(T("The scope is private, public or group:<id>."))
	}
	if err != nil {
		vm.report(err.Error(), true)
		return err
	}
	e.Name, e.Kind, e.Text, e.Scope = name, kind, text, scope
	return vm.act(ctx, T("save the star"), func() error {
		_, err := vm.svc.PutEntity(ctx, e)
		return err
	}, Tf("Saved %s.", name))
}

// Forget deletes the selected entity with its triples and blocks.
func (vm *StarMapVM) Forget(ctx context.Context) error {
	e, err := vm.selectedEntity()
	if err != nil {
		vm.report(err.Error(), true)
		return err
	}
	return vm.act(ctx, T("forget the star"), func() error { return vm.svc.DeleteEntity(ctx, e.ID) }, Tf("Forgot %s.", e.Name))
}

// Merge moves every triple and block of the star named other onto the selected one and deletes
// it (two names for the same thing).
func (vm *StarMapVM) Merge(ctx context.Context, other string) error {
	e, err := vm.selectedEntity()
	if err != nil {
		vm.report(err.Error(), true)
		return err
	}
	from, err := vm.findEntity(other)
	if err == nil && from.ID == e.ID {
		err = errors.New(T("A star cannot be merged with itself."))
	}
	if err != nil {
		vm.report(err.Error(), true)
		return err
	}
	return vm.act(ctx, T("merge"), func() error {
		_, err := vm.svc.MergeEntities(ctx, e.ID, from.ID)
		return err
	}, Tf("Merged %s into %s.", from.Name, e.Name))
}

// findEntity finds the one entity called name (case-insensitively).
func (vm *StarMapVM) findEntity(name string) (client.Entity, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return client.Entity{}, errors.New(T("Enter the name of the star to merge."))
	}
	var found []client.Entity
	for _, e := range vm.Sky().Entities {
		if strings.EqualFold(e.Name, name) {
			found = append(found, e)
		}
	}
	switch len(found) {
	case 0:
		return client.Entity{}, errors.New(Tf("No star is called %s.", name))
	case 1:
		return found[0], nil
	}
	return client.Entity{}, errors.New(Tf("%d stars are called %s; rename one first.", len(found), name))
}

// EntityNames lists the sky's entity names (for the merge form), sorted.
func (vm *StarMapVM) EntityNames() []string {
	s := vm.Sky()
	out := make([]string, 0, len(s.Entities))
	for _, e := range s.Entities {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// PinTriple pins or unpins a triple.
func (vm *StarMapVM) PinTriple(ctx context.Context, id int64, pinned bool) error {
	done := T("Pinned the fact.")
	if !pinned {
		done = T("Unpinned the fact.")
	}
	return vm.act(ctx, T("pin the fact"), func() error {
		return vm.svc.Pin(ctx, client.PinRequest{Kind: "triple", ID: id, Pinned: pinned})
	}, done)
}

// EditTriple corrects a triple: the correction supersedes it (the old one stays in history).
func (vm *StarMapVM) EditTriple(ctx context.Context, t client.Triple, predicate, object string) error {
	predicate, object = strings.TrimSpace(predicate), strings.TrimSpace(object)
	if predicate == "" || object == "" {
		err := errors.New(T("A fact needs a relation and an object."))
		vm.report(err.Error(), true)
		return err
	}
	return vm.act(ctx, T("correct the fact"), func() error {
		_, err := vm.svc.EditTriple(ctx, t.ID, client.TripleInput{Subject: t.SubjectName, Predicate: predicate, Object: object,
			Scope: t.Scope, ValidFrom: vm.now()})
		return err
	}, T("Corrected the fact; the old one stays in its history."))
}

// ForgetEvents forgets events (a fact's sources, or an event star): they, and every fact whose
// only source they were, leave memory.
func (vm *StarMapVM) ForgetEvents(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		err := errors.New(T("Nothing to forget."))
		vm.report(err.Error(), true)
		return err
	}
	var res client.ForgetResult
	err := vm.act(ctx, T("forget"), func() error {
		var err error
		res, err = vm.svc.Forget(ctx, ids)
		return err
	}, "")
	if err == nil {
		vm.report(Tf("Forgot %d events and %d facts.", res.Events, res.Triples), false)
	}
	return err
}
