package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugconf"
)

// Environment variables the calendar plugin reads (the kernel passes its own environment and
// the plugin's configured env to the plugin).
const (
	// EnvDir overrides where the calendar is kept (an absolute path).
	EnvDir = "HOLOGRAM_CALENDAR_DIR"
	// EnvTZ is the IANA time zone of times given without one (default: the system's).
	EnvTZ = "HOLOGRAM_CALENDAR_TZ"
)

// Config is the plugin's configuration.
type Config struct {
	// Dir holds calendar.json: $HOLOGRAM_CALENDAR_DIR, or the kernel's data
	// dir ($HOLOGRAM_DATA_DIR)/calendar, or $XDG_DATA_HOME/hologram/calendar ($HOME/.local/share when
	// XDG_DATA_HOME is unset or relative).
	Dir string
	// Loc is the zone of times given without an offset, and of new entries.
	Loc *time.Location
}

// ConfigFromEnv reads the configuration from getenv (os.Getenv in the plugin).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	dir, err := plugconf.StateDir(getenv, EnvDir, "calendar")
	if err != nil {
		return Config{}, err
	}
	c := Config{Dir: dir}
	if tz := strings.TrimSpace(getenv(EnvTZ)); tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			return Config{}, fmt.Errorf("%s=%q: %w", EnvTZ, tz, err)
		}
		c.Loc = loc
	} else {
		c.Loc = systemZone(getenv)
	}
	return c, nil
}

// systemZone returns the system's zone under its IANA name when it can be found (TZ,
// /etc/timezone, the /etc/localtime link), so exported times carry a TZID; else time.Local.
func systemZone(getenv func(string) string) *time.Location {
	try := func(name string) *time.Location {
		name = strings.TrimPrefix(strings.TrimSpace(name), ":")
		if name == "" || filepath.IsAbs(name) {
			return nil
		}
		loc, err := time.LoadLocation(name)
		if err != nil {
			return nil
		}
		return loc
	}
	if loc := try(getenv("TZ")); loc != nil {
		return loc
	}
	if b, err := os.ReadFile("/etc/timezone"); err == nil {
		if loc := try(string(b)); loc != nil {
			return loc
		}
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(target, "zoneinfo/"); ok {
			if loc := try(name); loc != nil {
				return loc
			}
		}
	}
	return time.Local
}
