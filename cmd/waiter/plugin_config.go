package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// pluginConfig runs `waiter plugin config NAME [show | schema | set KEY VALUE... | unset KEY |
// add KEY VALUE | del KEY VALUE]`: a built-in plugin's settings, checked by the kernel
// against the JSON Schema of its plugin.json, written to its file and applied by a restart.
func (a *app) pluginConfig(ctx context.Context, args []string) error {
	fs := newFlags("plugin config")
	asJSON := fs.Bool("json", false, "print the settings as JSON")
	pos, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	const usage = "usage: waiter plugin config NAME [show | schema | set KEY VALUE | unset KEY | add KEY VALUE | del KEY VALUE]"
	if len(pos) < 1 {
		return usagef(usage)
	}
	name, op, rest := pos[0], "show", []string(nil)
	if len(pos) > 1 {
		op, rest = pos[1], pos[2:]
	}
	svc, err := a.service()
	if err != nil {
		return err
	}
	ps, ok := svc.(client.PluginSettingsService)
	if !ok {
		return errors.New("plugin config: this connection has no plugin settings")
	}
	cur, err := ps.PluginSettings(ctx, name)
	if err != nil {
		return err
	}
	props, err := schemaProps(cur.Schema)
	if err != nil {
		return fmt.Errorf("plugin %s: settings schema: %w", name, err)
	}
	switch op {
	case "show":
		if len(rest) != 0 {
			return usagef(usage)
		}
		return a.showPluginSettings(cur, props, *asJSON)
	case "schema":
		if len(rest) != 0 {
			return usagef(usage)
		}
		_, err := a.stdout.Write(append(cur.Schema, '\n'))
		return err
	}
	values := maps.Clone(cur.Values)
	if values == nil {
		values = map[string]any{}
	}
	key := ""
	if len(rest) > 0 {
		key = rest[0]
	}
	p, known := props[key]
	if key != "" && !known {
		return usagef("plugin %s has no setting %q (it has: %s)", name, key, strings.Join(slices.Sorted(maps.Keys(props)), ", "))
	}
	switch {
	case op == "set" && len(rest) == 2:
		v, err := parseSettingValue(p, rest[1])
		if err != nil {
			return usagef("%s: %v", key, err)
		}
		values[key] = v
	case op == "unset" && len(rest) == 1:
		delete(values, key)
	case (op == "add" || op == "del") && len(rest) == 2 && p.Type == "array":
		list, _ := values[key].([]any)
		if op == "add" {
			if !slices.Contains(list, any(rest[1])) {
				list = append(slices.Clone(list), rest[1])
			}
		} else {
			list = slices.DeleteFunc(slices.Clone(list), func(x any) bool { return x == rest[1] })
		}
		if len(list) == 0 {
			delete(values, key)
		} else {
			values[key] = list
		}
	default:
		return usagef(usage + " (add and del are for lists)")
	}
	out, err := ps.SetPluginSettings(ctx, name, values)
	if err != nil {
		return err
	}
	if *asJSON {
		return a.writeJSON(out)
	}
	fmt.Fprintf(a.stdout, "plugin %s: settings written to %s; the plugin restarted with them\n", name, out.Path)
	return nil
}

// settingProp is what waiter reads of a property's schema.
type settingProp struct {
	Title       string       `json:"title"`
	Description string       `json:"description"`
	Type        string       `json:"type"`
	Items       *settingProp `json:"items"`
}

func schemaProps(schema json.RawMessage) (map[string]settingProp, error) {
	var top struct {
		Properties map[string]settingProp `json:"properties"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, err
	}
	if len(top.Properties) == 0 {
		return nil, errors.New("no properties")
	}
	return top.Properties, nil
}

// parseSettingValue reads a command-line value as the property's type: a boolean, a number,
// a list (a JSON array, or one item) or a string.
func parseSettingValue(p settingProp, s string) (any, error) {
	switch p.Type {
	case "boolean":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", s)
		}
		return b, nil
	case "integer", "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return n, nil
	case "array":
		if strings.HasPrefix(strings.TrimSpace(s), "[") {
			var list []any
			if err := json.Unmarshal([]byte(s), &list); err != nil {
				return nil, fmt.Errorf("not a JSON array: %v", err)
			}
			return list, nil
		}
		return []any{s}, nil
	}
	return s, nil
}

func (a *app) showPluginSettings(s client.PluginSettings, props map[string]settingProp, asJSON bool) error {
	if asJSON {
		return a.writeJSON(s)
	}
	state := "the plugin's defaults apply where a setting is not set"
	if !s.Exists {
		state = "the file does not exist yet: the plugin's defaults apply"
	}
	fmt.Fprintf(a.stdout, "plugin %s settings (%s; %s)\n", s.Plugin, s.Path, state)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		p := props[k]
		v := "(default)"
		if x, ok := s.Values[k]; ok {
			raw, _ := json.Marshal(x)
			v = string(raw)
		}
		typ := p.Type
		if p.Items != nil {
			typ += " of " + p.Items.Type
		}
		fmt.Fprintf(a.stdout, "  %-16s %-18s %s\n", k, typ, v)
		if p.Description != "" {
			fmt.Fprintf(a.stdout, "  %-16s %s\n", "", p.Description)
		}
	}
	return nil
}
