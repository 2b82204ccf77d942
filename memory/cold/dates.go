package cold

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// qdate is a date a query names; Year or Day may be 0 (not given).
type qdate struct {
	Year  int
	Month time.Month
	Day   int
}

var months = map[string]time.Month{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
	"oct": 10, "nov": 11, "dec": 12,
}

var (
	// "13 October 2023", "October 13, 2023", "October 2023", "13 Oct"
	enDate = regexp.MustCompile(`(?i)\b(?:(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?)?(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?(?:\s+(\d{1,2})(?:st|nd|rd|th)?\b)?(?:,?\s+(\d{4}))?`)
	// "2023年10月13日", "10月13日", "2023年10月"
	zhDate = regexp.MustCompile(`(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?`)
	// "2023-10-13"
	isoDate = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
)

// queryDates finds the calendar dates a query names. Month names that are also words ("may",
// "march", and abbreviations) count only with a day or a year next to them.
func queryDates(text string) []qdate {
	var out []qdate
	for _, m := range enDate.FindAllStringSubmatch(text, -1) {
		mon := months[strings.ToLower(m[2])]
		day, _ := strconv.Atoi(firstNonEmpty(m[1], m[3]))
		year, _ := strconv.Atoi(m[4])
		if day == 0 && year == 0 && (len(m[2]) <= 4 || strings.EqualFold(m[2], "march")) {
			continue // "may", "march", "mar", "jun"… alone are too often words
		}
		if day > 31 {
			day = 0
		}
		out = append(out, qdate{Year: year, Month: mon, Day: day})
	}
	for _, m := range zhDate.FindAllStringSubmatch(text, -1) {
		mon, _ := strconv.Atoi(m[2])
		if mon < 1 || mon > 12 {
			continue
		}
		year, _ := strconv.Atoi(m[1])
		day, _ := strconv.Atoi(m[3])
		out = append(out, qdate{Year: year, Month: time.Month(mon), Day: day})
	}
	for _, m := range isoDate.FindAllStringSubmatch(text, -1) {
		year, _ := strconv.Atoi(m[1])
		mon, _ := strconv.Atoi(m[2])
		day, _ := strconv.Atoi(m[3])
		if mon >= 1 && mon <= 12 {
			out = append(out, qdate{Year: year, Month: time.Month(mon), Day: day})
		}
	}
	return out
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// onDate reports whether t falls on one of the dates (±1 day when a day is given, the same
// month otherwise; the year must match when given). Times compare in UTC.
func onDate(t time.Time, dates []qdate) bool {
	if t.IsZero() {
		return false
	}
	t = t.UTC()
	for _, d := range dates {
		if d.Year != 0 && d.Day == 0 && (t.Year() != d.Year || t.Month() != d.Month) {
			continue
		}
		if d.Day == 0 {
			if t.Month() == d.Month && (d.Year == 0 || t.Year() == d.Year) {
				return true
			}
			continue
		}
		year := d.Year
		if year == 0 {
			year = t.Year()
		}
		want := time.Date(year, d.Month, d.Day, 12, 0, 0, 0, time.UTC)
		if diff := t.Sub(want); diff < 36*time.Hour && diff > -36*time.Hour {
			return true
		}
	}
	return false
}
