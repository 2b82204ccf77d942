package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // time_now must know every IANA zone even without system tzdata

	"github.com/hologramagent/hologram/kernel/llm"
)

// timeNow is the built-in time_now tool.
type timeNow struct {
	clock func() time.Time
}

// TimeNow returns the built-in time_now tool. It answers with the current time from clock (nil:
// time.Now) in RFC 3339, the weekday and the time zone, in local time or in the IANA zone given as
// {"timezone": "Asia/Shanghai"}; an unknown zone is an error. It is parallel-safe.
func TimeNow(clock func() time.Time) Tool {
	if clock == nil {
		clock = time.Now
	}
	return timeNow{clock: clock}
}

func (timeNow) Spec() llm.Tool {
	return llm.Tool{
		Name:        "time_now",
		Description: "Current date and time (RFC 3339), weekday and time zone. Optionally in another IANA time zone.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"timezone":{"type":"string",` +
			`"description":"IANA time zone name such as Europe/Paris; default: the local zone"}}}`),
	}
}

func (timeNow) ParallelSafe() bool { return true }

// Visibility: the time is no one's secret.
func (timeNow) Visibility() Visibility { return VisibilityAny }

func (t timeNow) Run(_ context.Context, args json.RawMessage) (string, error) {
	var in struct {
		Timezone string `json:"timezone"`
	}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &in); err != nil {
			return "", fmt.Errorf("time_now: invalid arguments: %w", err)
		}
	}
	now := t.clock()
	if tz := strings.TrimSpace(in.Timezone); tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			return "", fmt.Errorf("time_now: unknown time zone %q (want an IANA name such as Asia/Shanghai): %w", tz, err)
		}
		now = now.In(loc)
	} else {
		now = now.Local()
	}
	zone, _ := now.Zone()
	return fmt.Sprintf("%s (%s, time zone %s %s)", now.Format(time.RFC3339), now.Weekday(), now.Location(), zone), nil
}
