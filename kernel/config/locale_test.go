package config

import "testing"

func TestLocaleLanguage(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{nil, ""},
		{map[string]string{"LANG": "zh_CN.UTF-8"}, "zh"},
		{map[string]string{"LANG": "pt_BR.UTF-8@euro"}, "pt"},
		{map[string]string{"LC_ALL": "de_DE.UTF-8", "LANG": "zh_CN.UTF-8"}, "de"},
		{map[string]string{"LC_MESSAGES": "fr_FR.UTF-8", "LANG": "en_US.UTF-8"}, "fr"},
		{map[string]string{"LANG": "C.UTF-8"}, ""},
		{map[string]string{"LANG": "POSIX"}, ""},
		{map[string]string{"LANG": "x1_Y"}, ""},
	} {
		if got := LocaleLanguage(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("LocaleLanguage(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}
