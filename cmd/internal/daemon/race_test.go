package daemon

import (
	"runtime/debug"
	"sync"
)

// raceEnabled reports whether the test binary was built with -race: the race detector's shadow
// memory inflates the RSS, so memory budgets are not checked then. (A build-tagged constant would
// need the race tag, which the test files' build constraints may not use.)
var raceEnabled = sync.OnceValue(func() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
})
