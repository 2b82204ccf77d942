package main

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/clock/clocktest"
	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk"
	"github.com/hologramagent/hologram/plugins/sdk/sdktest"
)

// TestManifest keeps plugin.json in step with the plugin.
func TestManifest(t *testing.T) {
	t.Parallel()
	c, _ := newTestCalendar(t, t.TempDir())
	plugintest.CheckManifest(t, c.plugin(), protocol.CapNotify, protocol.CapLifecycle)
}

func newTestCalendar(t *testing.T, dir string) (*calendar, *clocktest.Fake) {
	t.Helper()
	clk := clocktest.New(t0)
	c, err := newCalendar(Config{Dir: dir, Loc: time.UTC}, clk, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return c, clk
}

// fixture is a calendar served in memory with the fake clock.
type fixture struct {
	k      *sdktest.Kernel
	c      *calendar
	clk    *clocktest.Fake
	notes  chan protocol.NotifyParams // its owner/notify calls
	pauses chan bool                  // kernel/paused and kernel/resumed, once the plugin handled them
}

// startCalendar serves a calendar in memory with the fake clock.
func startCalendar(t *testing.T, paused bool) fixture {
	t.Helper()
	c, clk := newTestCalendar(t, t.TempDir())
	notes := make(chan protocol.NotifyParams, 16)
	pauses := make(chan bool, 4)
	p := c.plugin()
	onPause := p.OnPause
	p.OnPause = func(ctx context.Context, k *sdk.Kernel, paused bool) {
		onPause(ctx, k, paused)
		pauses <- paused
	}
	k := sdktest.Start(t, p, sdktest.Options{Plugin: "calendar", Paused: paused,
		Capabilities: []string{protocol.CapNotify, protocol.CapLifecycle},
		Notify: func(_ context.Context, p protocol.NotifyParams) (protocol.NotifyResult, error) {
			notes <- p
			return protocol.NotifyResult{DeliveredTo: "chat"}, nil
		}})
	return fixture{k: k, c: c, clk: clk, notes: notes, pauses: pauses}
}

var idRe = regexp.MustCompile(`\(id ([0-9a-f]{20})`)

// idOf returns the entry id in a tool's answer.
func idOf(t *testing.T, text string) string {
	t.Helper()
	m := idRe.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no id in %q", text)
	}
	return m[1]
}

func TestCalendarTools(t *testing.T) {
	t.Parallel()
	f := startCalendar(t, false)
	k, c := f.k, f.c
	ctx := context.Background()
	call := func(tool, args string) string {
		t.Helper()
		out, err := k.ToolText(ctx, tool, args, "")
		if err != nil {
			t.Fatalf("%s %s: %v", tool, args, err)
		}
		return out
	}
	out := call("calendar_add", `{"title":"Dentist","start":"2026-05-05T09:00","end":"2026-05-05T10:00","location":"Main St 1","remind":["15m","1d"]}`)
	if !strings.HasPrefix(out, "added: Tue 2026-05-05 09:00–10:00 Dentist @ Main St 1 (id ") || !strings.HasSuffix(out, "; reminders 15m, 1d before)") {
		t.Fatalf("add: %q", out)
	}
	dentistID := idOf(t, out)
	standup := idOf(t, call("calendar_add", `{"title":"Standup","start":"2026-05-04T07:00","end":"2026-05-04T07:15","rrule":"FREQ=DAILY;COUNT=5"}`))
	call("calendar_add", `{"title":"Holiday","start":"2026-05-08"}`)
	call("calendar_remind", `{"text":"Call the bank","at":"2026-05-06T15:00"}`)

	out = call("calendar_list", `{"from":"2026-05-05","to":"2026-05-06"}`)
	want := "4 entries from 2026-05-05 00:00 to 2026-05-07 00:00\n" +
		"- Tue 2026-05-05 07:00–07:15 Standup (id " + standup + ", recurring)\n" +
		"- Tue 2026-05-05 09:00–10:00 Dentist @ Main St 1 (id " + dentistID + ")\n" +
		"- Wed 2026-05-06 07:00–07:15 Standup (id " + standup + ", recurring)\n" +
		"- Wed 2026-05-06 15:00 Call the bank [reminder] (id "
	if !strings.HasPrefix(out, want) {
		t.Fatalf("list:\n%s\nwant prefix:\n%s", out, want)
	}
	if out := call("calendar_list", `{"query":"BANK"}`); !strings.HasPrefix(out, "1 entries from 2026-05-05 08:00 to 2026-05-12 08:00\n- Wed 2026-05-06 15:00 Call the bank") {
		t.Fatalf("list by query (default range: now and 7 days on): %q", out)
	}

	// Moving the start keeps the length; other fields stay.
	out = call("calendar_update", `{"id":"`+dentistID+`","start":"2026-05-05T14:30","remind":["30m"]}`)
	if !strings.HasPrefix(out, "updated: Tue 2026-05-05 14:30–15:30 Dentist @ Main St 1") || !strings.Contains(out, "reminders 30m before") {
		t.Fatalf("update: %q", out)
	}
	if out := call("calendar_update", `{"id":"`+dentistID+`","location":"","end":""}`); !strings.HasPrefix(out, "updated: Tue 2026-05-05 14:30 Dentist (id") {
		t.Fatalf("clearing: %q", out)
	}
	if out := call("calendar_delete", `{"id":"`+standup+`","occurrence":"2026-05-06T07:00"}`); !strings.Contains(out, "cancelled the occurrence") {
		t.Fatalf("delete occurrence: %q", out)
	}
	if out := call("calendar_list", `{"from":"2026-05-04","to":"2026-05-09","query":"standup"}`); strings.Count(out, "Standup") != 4 ||
		strings.Contains(out, "2026-05-06 07:00") {
		t.Fatalf("after cancelling one occurrence:\n%s", out)
	}

	ics := call("calendar_export", `{}`)
	if !strings.HasPrefix(ics, "BEGIN:VCALENDAR") || strings.Count(ics, "BEGIN:VEVENT") != 4 || !strings.Contains(ics, "EXDATE:20260506T070000Z") {
		t.Fatalf("export:\n%s", ics)
	}
	if ranged := call("calendar_export", `{"from":"2026-05-08","to":"2026-05-08"}`); strings.Count(ranged, "BEGIN:VEVENT") != 2 {
		t.Fatalf("export of 8 May (Standup and Holiday):\n%s", ranged)
	}
	if out := call("calendar_delete", `{"id":"`+dentistID+`"}`); !strings.HasPrefix(out, "deleted: ") {
		t.Fatalf("delete: %q", out)
	}
	// Importing the export again replaces the three that exist and adds the deleted one back.
	args, _ := json.Marshal(map[string]string{"ics": ics})
	if out := call("calendar_import", string(args)); out != "imported 4 entries (1 new, 3 replaced)" {
		t.Fatalf("import: %q", out)
	}
	if n := len(c.store.All()); n != 4 {
		t.Fatalf("%d entries after the import", n)
	}
	sample, err := os.ReadFile("testdata/sample.ics")
	if err != nil {
		t.Fatal(err)
	}
	args, _ = json.Marshal(map[string]string{"ics": string(sample)})
	if out := call("calendar_import", string(args)); !strings.HasPrefix(out, "imported 4 entries (4 new, 0 replaced)\n") || !strings.Contains(out, "it is cancelled") {
		t.Fatalf("import of the sample: %q", out)
	}
}

func TestCalendarToolsRefuseBadInput(t *testing.T) {
	t.Parallel()
	k := startCalendar(t, false).k
	ctx := context.Background()
	id := idOf(t, must(k.ToolText(ctx, "calendar_add", `{"title":"Once","start":"2026-05-05T09:00"}`, "")))
	tests := []struct{ tool, args, wantErr string }{
		{"calendar_add", `{"title":"x"}`, "start is required"},
		{"calendar_add", `{"title":"x","start":"next friday"}`, `start "next friday": use 2006-01-02T15:04`},
		{"calendar_add", `{"title":"","start":"2026-05-05T09:00"}`, "the title is empty"},
		{"calendar_add", `{"title":"x","start":"2026-05-05T09:00","end":"2026-05-05T08:00"}`, "is before the start"},
		{"calendar_add", `{"title":"x","start":"2026-05-05T09:00","rrule":"FREQ=MINUTELY"}`, "at most hourly"},
		{"calendar_add", `{"title":"x","start":"2026-05-05T09:00","remind":["-1h"]}`, "from 0 to 28 days"},
		{"calendar_add", `{"title":"x","start":"2026-05-05T09:00","tz":"Moon/Base"}`, `time zone "Moon/Base"`},
		{"calendar_add", `{"title":"x","start":"2026-05-05T09:00","colour":"red"}`, `unknown field "colour"`},
		{"calendar_add", `{"title":1,"start":"2026-05-05T09:00"}`, "bad arguments"},
		{"calendar_remind", `{"text":"x","at":"2026-05-05"}`, "a reminder needs a time of day"},
		{"calendar_remind", `{"text":"x","at":"2026-05-05T07:00"}`, "is in the past"},
		{"calendar_list", `{"from":"2026-05-05","to":"2026-05-01"}`, "is not after from"},
		{"calendar_list", `{"from":"2026-01-01","to":"2027-06-01"}`, "longer than 400 days"},
		{"calendar_update", `{"id":"nope","title":"x"}`, `no such calendar entry: "nope"`},
		{"calendar_update", `{"id":"` + id + `","start":"soon"}`, `start "soon"`},
		{"calendar_delete", `{"id":"nope"}`, "no such calendar entry"},
		{"calendar_delete", `{"id":"` + id + `","occurrence":"2026-05-06T09:00"}`, "does not repeat"},
		{"calendar_import", `{"ics":""}`, "ics is empty"},
		{"calendar_import", `{"ics":"BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"}`, "no event could be imported"},
		{"calendar_import", `{"ics":"not ics"}`, "not a valid iCalendar (ICS) document"},
		{"calendar_export", `{"query":"x"}`, "calendar_export takes from and to only"},
		{"calendar_export", `{"from":"2030-01-01","to":"2030-01-02"}`, "there are no entries to export"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			_, err := k.ToolText(ctx, tt.tool, tt.args, "")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

// TestRemindersThroughTheProtocol: a reminder set with the tool arrives as owner/notify when
// the clock reaches it; while the kernel is paused nothing arrives, and on resume the missed
// reminder arrives marked late.
func TestRemindersThroughTheProtocol(t *testing.T) {
	t.Parallel()
	f := startCalendar(t, false)
	k, clk, notes := f.k, f.clk, f.notes
	ctx := context.Background()
	next := func() protocol.NotifyParams {
		t.Helper()
		select {
		case n := <-notes:
			return n
		case <-time.After(10 * time.Second):
			t.Fatal("no owner/notify within 10 s")
		}
		return protocol.NotifyParams{}
	}
	clk.WaitForWaiter(t) // the scheduler runs
	if _, err := k.ToolText(ctx, "calendar_remind", `{"text":"Take the cake out","at":"2026-05-05T08:02"}`, ""); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		clk.WaitForWaiter(t)
		clk.Advance(time.Minute)
	}
	if n := next(); n.Title != "Reminder: Take the cake out" || n.Body != "Due at Tue 5 May 08:02." {
		t.Fatalf("notification %+v", n)
	}

	if _, err := k.ToolText(ctx, "calendar_remind", `{"text":"Water the plants","at":"2026-05-05T08:30"}`, ""); err != nil {
		t.Fatal(err)
	}
	if err := k.Pause(true); err != nil {
		t.Fatal(err)
	}
	if !<-f.pauses {
		t.Fatal("resumed, want paused")
	}
	clk.Advance(time.Hour)
	select {
	case n := <-notes:
		t.Fatalf("delivered while paused: %+v", n)
	default:
	}
	if err := k.Pause(false); err != nil {
		t.Fatal(err)
	}
	if n := next(); n.Title != "Late reminder: Water the plants" || !strings.Contains(n.Body, "delivered late: the agent was paused") {
		t.Fatalf("notification %+v", n)
	}
}

// TestNewCalendarStartedWhilePaused: a calendar that starts while the kernel is paused still
// delivers, on resume, the reminders that fell due during the pause.
func TestNewCalendarStartedWhilePaused(t *testing.T) {
	t.Parallel()
	f := startCalendar(t, true)
	if _, err := f.k.ToolText(context.Background(), "calendar_remind", `{"text":"Feed the cat","at":"2026-05-05T08:05"}`, ""); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(10 * time.Minute)
	if err := f.k.Pause(false); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-f.notes:
		if n.Title != "Late reminder: Feed the cat" || !strings.Contains(n.Body, "was due at Tue 5 May 08:05") {
			t.Fatalf("notification %+v", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no owner/notify within 10 s of the resume")
	}
}
