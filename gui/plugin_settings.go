package gui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// A built-in plugin's settings form is generated from the JSON Schema its plugin.json declares
// (kernel: PluginSettings): one field per property, in the schema's order.

// Kinds of settings field.
const (
	fieldText    = "text"    // string, or an enum of strings
	fieldNumber  = "number"  // integer or number
	fieldBool    = "bool"    // boolean
	fieldFolders = "folders" // array of strings with "format": "directory"
	fieldList    = "list"    // array of strings, one a line
)

// SettingsField is one property of a plugin's settings schema and its bound value.
type SettingsField struct {
	Key, Title, Help string
	Kind             string
	Integer          bool
	Folder           bool // a text field holding one folder ("format": "directory")
	Enum             []string
	// Text holds a text or number field (and a list's lines); Bool a boolean's; Folders the
	// folders of a folder list.
	Text    binding.String
	Bool    binding.Bool
	Folders binding.Item[[]string]
}

// PluginSettingsForm is the form of one plugin's settings.
type PluginSettingsForm struct {
	Plugin, Path string
	Fields       []*SettingsField
}

// schemaProp is the part of a property's schema the form uses.
type schemaProp struct {
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Type        string      `json:"type"`
	Enum        []string    `json:"enum"`
	Items       *schemaProp `json:"items"`
	Format      string      `json:"format"`
}

// propertyOrder returns the keys of the schema's "properties" object in the order written.
func propertyOrder(schema json.RawMessage) ([]string, map[string]schemaProp, error) {
	var top struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, nil, err
	}
	if top.Type != "object" || len(top.Properties) == 0 {
		return nil, nil, errors.New("the schema is not an object with properties")
	}
	props := map[string]schemaProp{}
	if err := json.Unmarshal(top.Properties, &props); err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if _, err := dec.Token(); err != nil { // {
		return nil, nil, err
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, nil, err
		}
	}
	return keys, props, nil
}

// newPluginSettingsForm builds the form of s, filled with its values.
func newPluginSettingsForm(s client.PluginSettings) (*PluginSettingsForm, error) {
	keys, props, err := propertyOrder(s.Schema)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: settings schema: %w", s.Plugin, err)
	}
	f := &PluginSettingsForm{Plugin: s.Plugin, Path: s.Path}
	for _, k := range keys {
		p := props[k]
		fd := &SettingsField{Key: k, Title: p.Title, Help: p.Description, Enum: p.Enum,
			Text: binding.NewString(), Bool: binding.NewBool(), Folders: newSliceBinding[string]()}
		if fd.Title == "" {
			fd.Title = k
		}
		v, set := s.Values[k]
		switch {
		case p.Type == "boolean":
			fd.Kind = fieldBool
			b, _ := v.(bool)
			_ = fd.Bool.Set(b)
		case p.Type == "integer" || p.Type == "number":
			fd.Kind, fd.Integer = fieldNumber, p.Type == "integer"
			if n, ok := v.(float64); ok && set {
				_ = fd.Text.Set(strconv.FormatFloat(n, 'f', -1, 64))
			}
		case p.Type == "array" && p.Items != nil && p.Items.Type == "string":
			var items []string
			if list, ok := v.([]any); ok {
				for _, x := range list {
					if s, ok := x.(string); ok {
						items = append(items, s)
					}
				}
			}
			if p.Items.Format == "directory" {
				fd.Kind = fieldFolders
				_ = fd.Folders.Set(items)
			} else {
				fd.Kind = fieldList
				_ = fd.Text.Set(strings.Join(items, "\n"))
			}
		case p.Type == "string":
			fd.Kind, fd.Folder = fieldText, p.Format == "directory"
			s, _ := v.(string)
			_ = fd.Text.Set(s)
		default:
			continue // a kind the form cannot edit: the file keeps it (see Values)
		}
		f.Fields = append(f.Fields, fd)
	}
	return f, nil
}

// AddFolder appends dir to a folder list (once; blank is ignored).
func (fd *SettingsField) AddFolder(dir string) {
	dir = strings.TrimSpace(dir)
	list, _ := fd.Folders.Get()
	if dir == "" || slices.Contains(list, dir) {
		return
	}
	_ = fd.Folders.Set(append(slices.Clone(list), dir))
}

// RemoveFolder drops dir from a folder list.
func (fd *SettingsField) RemoveFolder(dir string) {
	list, _ := fd.Folders.Get()
	_ = fd.Folders.Set(slices.DeleteFunc(slices.Clone(list), func(s string) bool { return s == dir }))
}

// Values returns the form as the settings to send: empty fields are left out (the plugin's
// defaults apply); a number that does not parse is an error naming its field. Keys of old
// that the form cannot edit are kept.
func (f *PluginSettingsForm) Values(old map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range old {
		out[k] = v
	}
	for _, fd := range f.Fields {
		delete(out, fd.Key)
		text, _ := fd.Text.Get()
		text = strings.TrimSpace(text)
		switch fd.Kind {
		case fieldBool:
			if b, _ := fd.Bool.Get(); b {
				out[fd.Key] = true
			}
		case fieldNumber:
			if text == "" {
				continue
			}
			n, err := strconv.ParseFloat(text, 64)
			if err != nil || (fd.Integer && n != float64(int64(n))) {
				if fd.Integer {
					return nil, errors.New(Tf("%s: %q is not a whole number.", fd.Title, text))
				}
				return nil, errors.New(Tf("%s: %q is not a number.", fd.Title, text))
			}
			out[fd.Key] = n
		case fieldFolders:
			if list, _ := fd.Folders.Get(); len(list) > 0 {
				out[fd.Key] = list
			}
		case fieldList:
			var lines []string
			for _, l := range strings.Split(text, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					lines = append(lines, l)
				}
			}
			if len(lines) > 0 {
				out[fd.Key] = lines
			}
		case fieldText:
			if text != "" {
				out[fd.Key] = text
			}
		}
	}
	return out, nil
}

// settingsService is the kernel's plugin settings, when the connection has them.
func (vm *PluginsVM) settingsService() (client.PluginSettingsService, bool) {
	ps, ok := vm.svc.(client.PluginSettingsService)
	return ps, ok
}

// OpenSettings reads a plugin's settings and returns its form (and the values read, for Save).
func (vm *PluginsVM) OpenSettings(ctx context.Context, name string) (*PluginSettingsForm, map[string]any, error) {
	ps, ok := vm.settingsService()
	if !ok {
		err := errors.New(T("This connection cannot edit plugin settings."))
		vm.report(err.Error(), true)
		return nil, nil, err
	}
	s, err := ps.PluginSettings(ctx, name)
	if err != nil {
		vm.report(Tf("Could not read the settings of %s: %v", name, err), true)
		return nil, nil, fmt.Errorf("plugin settings %s: %w", name, err)
	}
	f, err := newPluginSettingsForm(s)
	if err != nil {
		vm.report(Tf("Could not read the settings of %s: %v", name, err), true)
		return nil, nil, err
	}
	return f, s.Values, nil
}

// SaveSettings writes the form: the kernel checks it against the schema, writes the plugin's
// file and restarts it.
func (vm *PluginsVM) SaveSettings(ctx context.Context, f *PluginSettingsForm, old map[string]any) error {
	ps, ok := vm.settingsService()
	if !ok {
		return errors.New(T("This connection cannot edit plugin settings."))
	}
	values, err := f.Values(old)
	if err != nil {
		vm.report(err.Error(), true)
		return err
	}
	_ = vm.Busy.Set(true)
	defer vm.Busy.Set(false)
	if _, err := ps.SetPluginSettings(ctx, f.Plugin, values); err != nil {
		vm.report(Tf("Could not save the settings of %s: %v", f.Plugin, err), true)
		return fmt.Errorf("save plugin settings %s: %w", f.Plugin, err)
	}
	vm.report(Tf("Saved the settings of %s (%s); it restarted with them.", f.Plugin, f.Path), false)
	return vm.Refresh(ctx)
}

// showPluginSettings opens the settings dialog of f on w: one row per field, a folder list
// with Choose folder… (a folder picker, for a kernel on this machine), Add and Remove; Save
// writes it through vm.
func showPluginSettings(vm *PluginsVM, f *PluginSettingsForm, old map[string]any, local bool, w fyne.Window) {
	rows := container.NewVBox()
	for _, fd := range f.Fields {
		fd := fd
		var input fyne.CanvasObject
		switch fd.Kind {
		case fieldBool:
			input = widget.NewCheckWithData(fd.Title, fd.Bool)
		case fieldNumber, fieldText:
			if len(fd.Enum) > 0 {
				sel := widget.NewSelect(fd.Enum, func(s string) { _ = fd.Text.Set(s) })
				if v, _ := fd.Text.Get(); v != "" {
					sel.SetSelected(v)
				}
				input = sel
			} else {
				e := widget.NewEntryWithData(fd.Text)
				e.SetPlaceHolder(T("(default)"))
				input = e
				if fd.Folder && local {
					pick := widget.NewButtonWithIcon(T("Choose folder…"), theme.FolderOpenIcon(), func() {
						dialog.NewFolderOpen(func(dir fyne.ListableURI, err error) {
							if err == nil && dir != nil {
								_ = fd.Text.Set(dir.Path())
							}
						}, w).Show()
					})
					input = container.NewBorder(nil, nil, nil, pick, e)
				}
			}
		case fieldList:
			e := widget.NewEntryWithData(fd.Text)
			e.MultiLine = true
			e.SetPlaceHolder(T("one a line"))
			input = e
		case fieldFolders:
			list := container.NewVBox()
			redraw := func() {
				dirs, _ := fd.Folders.Get()
				objs := make([]fyne.CanvasObject, 0, len(dirs)+1)
				for _, d := range dirs {
					d := d
					rm := widget.NewButtonWithIcon("", theme.DeleteIcon(), func() { fd.RemoveFolder(d) })
					objs = append(objs, container.NewBorder(nil, nil, nil, rm, widget.NewLabel(d)))
				}
				if len(dirs) == 0 {
					objs = append(objs, settingsText(T("No folder: the plugin's default applies."), widget.LowImportance))
				}
				list.Objects = objs
				list.Refresh()
				rows.Refresh()
			}
			fd.Folders.AddListener(binding.NewDataListener(redraw))
			entry := widget.NewEntry()
			entry.SetPlaceHolder(T("/path/to/folder"))
			add := widget.NewButtonWithIcon(T("Add"), theme.ContentAddIcon(), func() {
				fd.AddFolder(entry.Text)
				entry.SetText("")
			})
			bar := container.NewBorder(nil, nil, nil, add, entry)
			if local {
				pick := widget.NewButtonWithIcon(T("Choose folder…"), theme.FolderOpenIcon(), func() {
					dialog.NewFolderOpen(func(dir fyne.ListableURI, err error) {
						if err == nil && dir != nil {
							fd.AddFolder(dir.Path())
						}
					}, w).Show()
				})
				bar = container.NewBorder(nil, nil, nil, container.NewHBox(add, pick), entry)
			}
			input = container.NewVBox(list, bar)
		}
		title := widget.NewLabelWithStyle(fd.Title, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		rows.Add(title)
		if fd.Kind == fieldBool {
			rows.Objects = rows.Objects[:len(rows.Objects)-1] // the check box carries the title
		}
		rows.Add(input)
		if fd.Help != "" {
			rows.Add(settingsText(fd.Help, widget.LowImportance))
		}
	}
	rows.Add(settingsText(Tf("Saved to %s on the kernel's machine; the plugin restarts with them.", f.Path), widget.LowImportance))
	scroll := container.NewVScroll(rows)
	scroll.SetMinSize(fyne.NewSize(560, 420))
	d := dialog.NewCustomConfirm(Tf("Settings of %s", f.Plugin), T("Save"), T("Cancel"), scroll, func(ok bool) {
		if ok {
			vm.spawn(func(ctx context.Context) { _ = vm.SaveSettings(ctx, f, old) })
		}
	}, w)
	d.Show()
}
