package gui

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// Translations: i18n/<lang>/*.json, each an object from the English text (the key, as written
// in the code) to its translation; every file of a language is merged. English needs none.
//
//go:embed i18n
var i18nFS embed.FS

// Languages the UI speaks, by tag.
var Languages = []struct{ Tag, Name string }{
	{"en", "English"},
	{"zh", "简体中文"},
}

var i18n struct {
	mu    sync.RWMutex
	lang  string
	table map[string]string // English → current language; nil for English
}

// SetLanguage switches the UI language ("en", "zh"; anything else is English). Windows built
// before keep their texts: App rebuilds them.
func SetLanguage(tag string) error {
	if tag != "zh" {
		i18n.mu.Lock()
		i18n.lang, i18n.table = "en", nil
		i18n.mu.Unlock()
		return nil
	}
	table := map[string]string{}
	files, err := fs.Glob(i18nFS, path.Join("i18n", tag, "*.json"))
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := i18nFS.ReadFile(f)
		if err != nil {
			return err
		}
		var m map[string]string
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("translations %s: %w", f, err)
		}
		for k, v := range m {
			table[k] = v
		}
	}
	i18n.mu.Lock()
	i18n.lang, i18n.table = tag, table
	i18n.mu.Unlock()
	return nil
}

// Language returns the current language tag.
func Language() string {
	i18n.mu.RLock()
	defer i18n.mu.RUnlock()
	if i18n.lang == "" {
		return "en"
	}
	return i18n.lang
}

// LanguageFromLocale picks the UI language from the locale environment (LC_ALL, LC_MESSAGES,
// LANG): Chinese locales give "zh", everything else "en".
func LanguageFromLocale(getenv func(string) string) string {
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := getenv(k); v != "" {
			if strings.HasPrefix(strings.ToLower(v), "zh") {
				return "zh"
			}
			return "en"
		}
	}
	return "en"
}

// T translates an English UI text into the current language (the text itself when there is
// no translation).
func T(s string) string {
	i18n.mu.RLock()
	defer i18n.mu.RUnlock()
	if v, ok := i18n.table[s]; ok && v != "" {
		return v
	}
	return s
}

// Tf translates a format, then formats it.
func Tf(format string, args ...any) string { return fmt.Sprintf(T(format), args...) }
