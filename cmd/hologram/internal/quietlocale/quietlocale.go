// Package quietlocale keeps Fyne from logging "Error parsing user locale C" on every start
// under the C locale with a codeset ("C.UTF-8", the default of containers and minimal
// installs). Fyne looks the locale up while its lang package initialises, before main runs,
// so this package does its work in init, and must be initialised first: it imports only os and
// strings, the imports of the locale library Fyne's lang package depends on
// (github.com/jeandeaual/go-locale), and its import path sorts before that library's, so
// Go's initialisation order (the first ready package by import path) runs it earlier. The
// desktop app imports it for that effect alone.
package quietlocale

import (
	"os"
	"strings"
)

func init() { quietCLocale(os.Getenv, os.Setenv) }

// quietCLocale keeps Fyne from logging "Error parsing user locale C" on every start under the
// C locale with a codeset ("C.UTF-8", the default of containers and minimal installs): Fyne's
// locale lookup accepts "C" and "POSIX" as they are but parses "C.UTF-8" as the language tag
// "C", which is not one. The effective locale (LC_ALL, else LC_MESSAGES, else LANG) is left as
// it is; only when it is C or POSIX with a codeset and LANGUAGE is unset is LANGUAGE set to
// "en" for this process, which the C locale means for messages anyway. The app's own language
// (gui.LanguageFromLocale) reads LC_ALL, LC_MESSAGES and LANG, not LANGUAGE.
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
