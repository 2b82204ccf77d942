package config

import "strings"

// LocaleLanguage is the language of the effective locale — LC_ALL, else LC_MESSAGES, else LANG,
// read with getenv — lower-cased without territory, codeset or modifier ("zh_CN.UTF-8" → "zh"),
// or "" when none is set or it names no language (C, POSIX, a malformed value).
func LocaleLanguage(getenv func(string) string) string {
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		v := getenv(k)
		if v == "" {
			continue
		}
		lang, _, _ := strings.Cut(v, ".")
		lang, _, _ = strings.Cut(lang, "@")
		lang, _, _ = strings.Cut(lang, "_")
		lang = strings.ToLower(lang)
		if lang == "c" || lang == "posix" || len(lang) < 2 || len(lang) > 3 || strings.IndexFunc(lang, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
			return ""
		}
		return lang
	}
	return ""
}
