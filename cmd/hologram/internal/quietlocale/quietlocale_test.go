package quietlocale

import "testing"

func TestQuietCLocale(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string // LANGUAGE afterwards
	}{
		{"C with a codeset", map[string]string{"LANG": "C.UTF-8"}, "en"},
		{"POSIX with a codeset in LC_ALL", map[string]string{"LC_ALL": "POSIX.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"},
		{"plain C (Fyne accepts it)", map[string]string{"LANG": "C"}, ""},
		{"a real locale", map[string]string{"LANG": "zh_CN.UTF-8"}, ""},
		{"LC_ALL wins over a C LANG", map[string]string{"LC_ALL": "de_DE.UTF-8", "LANG": "C.UTF-8"}, ""},
		{"LANGUAGE already set", map[string]string{"LANG": "C.UTF-8", "LANGUAGE": "fr"}, "fr"},
		{"nothing set", map[string]string{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = v
			}
			quietCLocale(func(k string) string { return env[k] }, func(k, v string) error { env[k] = v; return nil })
			if got := env["LANGUAGE"]; got != tt.want {
				t.Errorf("LANGUAGE = %q, want %q", got, tt.want)
			}
		})
	}
}
