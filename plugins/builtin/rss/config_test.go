package main

import (
	"testing"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
)

// proxyConfig is a proxy configuration sending http and https through u.
func proxyConfig(u string) httpproxy.Config { return httpproxy.Config{HTTPProxy: u, HTTPSProxy: u} }

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		check   func(t *testing.T, c Config)
		wantErr string
	}{
		{"defaults under XDG_DATA_HOME", map[string]string{"XDG_DATA_HOME": "/x/data", "HOME": "/home/me"}, func(t *testing.T, c Config) {
			if c.Dir != "/x/data/hologram/rss" || c.Interval != time.Hour || c.Initial != 3 || len(c.Allow) != 0 {
				t.Fatalf("%+v", c)
			}
		}, ""},
		{"a relative XDG_DATA_HOME is ignored", map[string]string{"XDG_DATA_HOME": "data", "HOME": "/home/me"}, func(t *testing.T, c Config) {
			if c.Dir != "/home/me/.local/share/hologram/rss" {
				t.Fatalf("%+v", c)
			}
		}, ""},
		{"everything set", map[string]string{EnvDir: "/srv/rss/", EnvInterval: "30m", EnvInitial: "0", EnvAllow: "127.0.0.1, 10.0.0.0/8",
			"https_proxy": "http://127.0.0.1:7890", "NO_PROXY": "intranet"}, func(t *testing.T, c Config) {
			if c.Dir != "/srv/rss" || c.Interval != 30*time.Minute || c.Initial != 0 || len(c.Allow) != 2 ||
				c.Allow[0].String() != "127.0.0.1/32" || c.Allow[1].String() != "10.0.0.0/8" ||
				c.Proxy.HTTPSProxy != "http://127.0.0.1:7890" || c.Proxy.NoProxy != "intranet" {
				t.Fatalf("%+v", c)
			}
		}, ""},
		{"relative dir", map[string]string{EnvDir: "rss"}, nil, "must be an absolute path"},
		{"no home", map[string]string{}, nil, "neither XDG_DATA_HOME nor HOME"},
		{"short interval", map[string]string{"HOME": "/h", EnvInterval: "1m"}, nil, `interval "1m": from 5m0s to 168h0m0s`},
		{"bad interval", map[string]string{"HOME": "/h", EnvInterval: "hourly"}, nil, "use a duration such as"},
		{"bad initial", map[string]string{"HOME": "/h", EnvInitial: "50"}, nil, "a number from 0 to 20"},
		{"host name in the allow-list", map[string]string{"HOME": "/h", EnvAllow: "localhost"}, nil, "host names are not accepted"},
		{"bad prefix", map[string]string{"HOME": "/h", EnvAllow: "10.0.0.0/33"}, nil, "is not an IP address or a CIDR prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ConfigFromEnv(func(k string) string { return tt.env[k] })
			if plugintest.WantErr(t, err, tt.wantErr) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}
