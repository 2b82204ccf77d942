package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// quietCLocale keeps Fyne from logging "Error parsing user locale C" on every start under the
// C locale with a codeset ("C.UTF-8", the default of containers and minimal installs): Fyne's
// locale lookup accepts "C" and "POSIX" as they are but parses "C.UTF-8" as the language tag
// "C", which is not one. The effective locale (LC_ALL, else LC_MESSAGES, else LANG) is left as
// it is; only when it is C or POSIX with a codeset and LANGUAGE is unset is LANGUAGE set to
// "en" for this process, which the C locale means for messages anyway. The app's own language
// ([gui.LanguageFromLocale]) reads LC_ALL, LC_MESSAGES and LANG, not LANGUAGE.
func quietCLocale(getenv func(string) string, setenv func(k, v string) error) {
	if getenv("LANGUAGE") != "" {
		return
	}
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		v := getenv(k)
		if v == "" {
			continue
		}
		lang, _, _ := strings.Cut(v, ".")
		lang, _, _ = strings.Cut(lang, "@")
		if (lang == "C" || lang == "POSIX") && v != lang {
			_ = setenv("LANGUAGE", "en")
		}
		return
	}
}

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
