package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// repairPreferences moves aside a preferences file Fyne cannot read (empty, as a save cut
// short leaves it, or not a JSON object), so that Fyne starts with empty preferences instead of
// logging "Preferences load error: EOF" on every start; the file is kept beside, as
// preferences.json.unreadable, and the reason returned for the log. A missing or readable file
// is left alone ("" returned).
func repairPreferences(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var v map[string]any
	if json.Unmarshal(data, &v) == nil && v != nil {
		return "", nil
	}
	why := "it is empty"
	if len(bytes.TrimSpace(data)) > 0 {
		why = "it is not a JSON object"
	}
	if err := os.Rename(path, path+".unreadable"); err != nil {
		return "", fmt.Errorf("move aside the unreadable preferences %s: %w", path, err)
	}
	return fmt.Sprintf("the preferences file %s could not be read (%s): moved to %s.unreadable, starting with default preferences", path, why, path), nil
}

// preferencesPath is where Fyne keeps the app's preferences ($XDG_CONFIG_HOME/fyne/<app id>).
func preferencesPath(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		dir = filepath.Join(getenv("HOME"), ".config")
	}
	return filepath.Join(dir, "fyne", appID, "preferences.json")
}
