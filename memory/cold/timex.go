package cold

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// A span is a stretch of time a query names, [from, to), in UTC. Relative expressions
// ("yesterday", "last week", "三天前") are resolved against the time of the query; ranges of a
// month ("early May", "the last two weeks of August 2023", "8月下旬") and "between … and …"
// against the calendar. A range of a month without a year (anyYear) matches that range of any
// year, as a date without a year does (onDate).
type span struct {
	from, to time.Time
	anyYear  bool
}

// contains reports whether t falls in the span.
func (s span) contains(t time.Time) bool {
	if t.IsZero() {
		return false
	}
	t = t.UTC()
	from, to := s.from, s.to
	if s.anyYear {
		shift := t.Year() - from.Year()
		from, to = from.AddDate(shift, 0, 0), to.AddDate(shift, 0, 0)
	}
	return !t.Before(from) && t.Before(to)
}

// days is the span's length in days.
func (s span) days() float64 { return s.to.Sub(s.from).Hours() / 24 }

// maxBoostDays: a span longer than this (a year, "the first half of 2023") says too little
// about which events are meant to lift them above the others; it still bounds a date-only
// question's events (timeOnly).
const maxBoostDays = 45

// qtime is what a query says about time: calendar dates (onDate) and spans.
type qtime struct {
	dates []qdate
	spans []span
}

// empty reports whether the query names no time.
func (q qtime) empty() bool { return len(q.dates) == 0 && len(q.spans) == 0 }

// boosts reports whether t falls on one of the dates or in one of the spans short enough to
// boost (maxBoostDays).
func (q qtime) boosts(t time.Time) bool {
	if onDate(t, q.dates) {
		return true
	}
	for _, s := range q.spans {
		if s.days() <= maxBoostDays && s.contains(t) {
			return true
		}
	}
	return false
}

// window is the whole stretch the query names when it names exactly one stretch with a year
// (a date, or a span): the events a question that gives only a time is about. ok is false
// when the query names no time, or several, or one without a year.
func (q qtime) window() (from, to time.Time, ok bool) {
	if len(q.dates)+len(q.spans) != 1 {
		return time.Time{}, time.Time{}, false
	}
	if len(q.spans) == 1 {
		s := q.spans[0]
		return s.from, s.to, !s.anyYear
	}
	d := q.dates[0]
	if d.Year == 0 {
		return time.Time{}, time.Time{}, false
	}
	if d.Day == 0 {
		from = time.Date(d.Year, d.Month, 1, 0, 0, 0, 0, time.UTC)
		return from, from.AddDate(0, 1, 0), true
	}
	from = time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
	return from, from.AddDate(0, 0, 1), true
}

// queryTime finds the dates and spans a query names; now is the time it is asked (zero: relative
// expressions are not resolved).
func queryTime(text string, now time.Time) qtime {
	q := qtime{dates: queryDates(text)}
	q.spans = append(q.spans, monthRanges(text)...)
	if !now.IsZero() {
		q.spans = append(q.spans, relativeSpans(text, now.UTC())...)
	}
	return q
}

// Numbers written out, English and Chinese, as relative expressions use them.
var numberWords = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "a couple of": 2,
	"few": 3, "a few": 3, "several": 3,
	"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10, "几": 3,
}

func number(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return numberWords[strings.ToLower(s)]
}

const enMonths = `january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec`

var (
	// "early May", "mid-August 2023", "late June", "the end of March", "the beginning of May 2023"
	enPart = regexp.MustCompile(`(?i)\b(early|mid|late|the\s+(?:beginning|start|middle|end)\s+of)[\s-]+(` + enMonths + `)\b\.?(?:,?\s+(\d{4}))?`)
	// "the last two weeks of August", "the first week of May 2023"
	enWeeksOf = regexp.MustCompile(`(?i)\bthe\s+(first|last)\s+(?:(\d|two|three)\s+)?weeks?\s+of\s+(` + enMonths + `)\b\.?(?:,?\s+(\d{4}))?`)
	// "between 3 and 10 May 2023", "from May 3 to May 10, 2023"
	enBetween = regexp.MustCompile(`(?i)\b(?:between|from)\s+(.{1,40}?)\s+(?:and|to|until|till|through)\s+(.{3,40}?)(?:[?.!;]|$)`)
	// "8月初", "5月中旬", "2023年8月下旬", "八月底" is not handled (digits only, as zhDate).
	zhPart = regexp.MustCompile(`(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(初|上旬|中旬|中|下旬|底|末)`)
)

// monthRanges finds the parts of months a query names.
func monthRanges(text string) []span {
	var out []span
	add := func(year int, mon time.Month, fromDay, toDay int) { // toDay 0: the month's end
		y := year
		if y == 0 {
			y = 2000 // a leap year: any year's dates fit
		}
		from := time.Date(y, mon, fromDay, 0, 0, 0, 0, time.UTC)
		to := time.Date(y, mon+1, 1, 0, 0, 0, 0, time.UTC)
		if toDay > 0 {
			to = time.Date(y, mon, toDay+1, 0, 0, 0, 0, time.UTC)
		}
		if from.Before(to) {
			out = append(out, span{from: from, to: to, anyYear: year == 0})
		}
	}
	for _, m := range enPart.FindAllStringSubmatch(text, -1) {
		mon := months[strings.ToLower(m[2])]
		year, _ := strconv.Atoi(m[3])
		part := strings.ToLower(m[1])
		switch {
		case part == "early" || strings.Contains(part, "beginning") || strings.Contains(part, "start"):
			add(year, mon, 1, 10)
		case part == "mid" || strings.Contains(part, "middle"):
			add(year, mon, 11, 20)
		default: // late, the end of
			add(year, mon, 21, 0)
		}
	}
	for _, m := range enWeeksOf.FindAllStringSubmatch(text, -1) {
		n := 1
		if m[2] != "" {
			n = number(m[2])
		}
		mon := months[strings.ToLower(m[3])]
		year, _ := strconv.Atoi(m[4])
		if strings.EqualFold(m[1], "first") {
			add(year, mon, 1, min(7*n, 28))
		} else {
			end := time.Date(2001, mon+1, 0, 0, 0, 0, 0, time.UTC).Day() // the month's last day (February of a common year: a week more, not less)
			if mon == time.February {
				end = 29
			}
			add(year, mon, max(1, end-7*n+1), 0)
		}
	}
	for _, m := range zhPart.FindAllStringSubmatch(text, -1) {
		mon, _ := strconv.Atoi(m[2])
		if mon < 1 || mon > 12 {
			continue
		}
		year, _ := strconv.Atoi(m[1])
		switch m[3] {
		case "初", "上旬":
			add(year, time.Month(mon), 1, 10)
		case "中旬", "中":
			add(year, time.Month(mon), 11, 20)
		default:
			add(year, time.Month(mon), 21, 0)
		}
	}
	for _, m := range enBetween.FindAllStringSubmatch(text, -1) {
		a, b := queryDates(m[1]), queryDates(m[2])
		if len(b) != 1 || b[0].Day == 0 {
			continue
		}
		end := b[0]
		var start qdate
		switch {
		case len(a) == 1 && a[0].Day != 0:
			start = a[0]
		case len(a) == 0: // "between 3 and 10 May": the first end is a day of the second's month
			d, err := strconv.Atoi(strings.TrimRight(strings.TrimSpace(m[1]), "stndrh"))
			if err != nil || d < 1 || d > 31 {
				continue
			}
			start = qdate{Year: end.Year, Month: end.Month, Day: d}
		default:
			continue
		}
		if start.Year == 0 {
			start.Year = end.Year
		}
		y := start.Year
		if y == 0 {
			y = 2000
		}
		ey := end.Year
		if ey == 0 {
			ey = y
		}
		from := time.Date(y, start.Month, start.Day, 0, 0, 0, 0, time.UTC)
		to := time.Date(ey, end.Month, end.Day+1, 0, 0, 0, 0, time.UTC)
		if from.Before(to) && to.Sub(from) <= 400*24*time.Hour {
			out = append(out, span{from: from, to: to, anyYear: start.Year == 0})
		}
	}
	return out
}

var (
	enUnitsAgo  = regexp.MustCompile(`(?i)\b(\d{1,3}|a couple of|couple of|a few|few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+(day|week|month|year)s?\s+ago\b`)
	enLastUnit  = regexp.MustCompile(`(?i)\b(last|this|next|past)\s+(week|weekend|month|year)\b`)
	enPastUnits = regexp.MustCompile(`(?i)\b(?:the\s+)?(?:past|last)\s+(\d{1,3}|two|three|four|five|six|seven|eight|nine|ten|few|several|couple of)\s+(day|week|month)s\b`)
	enLastDay   = regexp.MustCompile(`(?i)\blast\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b`)
	enDayWord   = regexp.MustCompile(`(?i)\b(the\s+day\s+before\s+yesterday|yesterday|today|tonight|this\s+morning|this\s+evening|tomorrow)\b`)
	zhUnitsAgo  = regexp.MustCompile(`(\d{1,3}|[一两二三四五六七八九十几]{1,2})\s*(天|日|周|个星期|星期|个礼拜|礼拜|个月|年)(?:以)?前`)
	zhWords     = regexp.MustCompile(`大前天|前天|昨天|昨日|今天|今日|今晚|明天|上周末|上个?周|上个?星期|上个?礼拜|这周|本周|这个?星期|上个?月|这个月|本月|去年|今年|前年`)
)

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
}

// relativeSpans resolves the relative expressions of a query against now (UTC).
func relativeSpans(text string, now time.Time) []span {
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	day := func(offset int) span { // one day, with a day's slack either side (times of day and zones vary)
		d := today.AddDate(0, 0, offset)
		return span{from: d.AddDate(0, 0, -1), to: d.AddDate(0, 0, 2)}
	}
	// Weeks run Monday to Sunday.
	monday := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7))
	week := func(offset int) span {
		m := monday.AddDate(0, 0, 7*offset)
		return span{from: m, to: m.AddDate(0, 0, 7)}
	}
	weekend := func() span { // the last Saturday and Sunday before today (today included on a Sunday)
		sat := monday.AddDate(0, 0, -2)
		if today.Weekday() == time.Sunday {
			sat = today.AddDate(0, 0, -1)
		}
		return span{from: sat, to: sat.AddDate(0, 0, 2)}
	}
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	month := func(offset int) span {
		m := first.AddDate(0, offset, 0)
		return span{from: m, to: m.AddDate(0, 1, 0)}
	}
	year := func(offset int) span {
		y := time.Date(now.Year()+offset, 1, 1, 0, 0, 0, 0, time.UTC)
		return span{from: y, to: y.AddDate(1, 0, 0)}
	}
	// ago is n units back, as wide as a unit (half of it either side), at least a day's slack.
	ago := func(n int, unit string) span {
		switch unit {
		case "week":
			c := today.AddDate(0, 0, -7*n)
			return span{from: c.AddDate(0, 0, -4), to: c.AddDate(0, 0, 5)}
		case "month":
			c := today.AddDate(0, -n, 0)
			return span{from: c.AddDate(0, 0, -15), to: c.AddDate(0, 0, 16)}
		case "year":
			c := today.AddDate(-n, 0, 0)
			return span{from: c.AddDate(0, -6, 0), to: c.AddDate(0, 6, 0)}
		}
		return day(-n)
	}
	var out []span
	for _, m := range enDayWord.FindAllStringSubmatch(text, -1) {
		switch w := strings.Join(strings.Fields(strings.ToLower(m[1])), " "); w {
		case "the day before yesterday":
			out = append(out, day(-2))
		case "yesterday":
			out = append(out, day(-1))
		case "tomorrow":
			out = append(out, day(1))
		default:
			out = append(out, day(0))
		}
	}
	for _, m := range enUnitsAgo.FindAllStringSubmatch(text, -1) {
		if n := number(strings.Join(strings.Fields(m[1]), " ")); n > 0 {
			out = append(out, ago(n, strings.ToLower(m[2])))
		}
	}
	// "the last two weeks of August" is a part of a month (monthRanges), not the last two weeks.
	ofMonth := func(end int) bool { return strings.HasPrefix(strings.ToLower(strings.TrimSpace(text[end:])), "of ") }
	for _, ix := range enPastUnits.FindAllStringSubmatchIndex(text, -1) {
		if ofMonth(ix[1]) {
			continue
		}
		n := number(strings.Join(strings.Fields(text[ix[2]:ix[3]]), " "))
		if n <= 0 {
			continue
		}
		unit := strings.ToLower(text[ix[4]:ix[5]])
		from := today.AddDate(0, 0, -n)
		switch unit {
		case "week":
			from = today.AddDate(0, 0, -7*n)
		case "month":
			from = today.AddDate(0, -n, 0)
		}
		out = append(out, span{from: from, to: today.AddDate(0, 0, 1)})
	}
	for _, ix := range enLastUnit.FindAllStringSubmatchIndex(text, -1) {
		if ofMonth(ix[1]) {
			continue
		}
		which, unit := strings.ToLower(text[ix[2]:ix[3]]), strings.ToLower(text[ix[4]:ix[5]])
		off := map[string]int{"last": -1, "past": -1, "this": 0, "next": 1}[which]
		switch unit {
		case "week":
			if which == "past" { // "the past week": the seven days up to today
				out = append(out, span{from: today.AddDate(0, 0, -7), to: today.AddDate(0, 0, 1)})
			} else {
				out = append(out, week(off))
			}
		case "weekend":
			if off < 0 {
				out = append(out, weekend())
			} else {
				w := weekend()
				out = append(out, span{from: w.from.AddDate(0, 0, 7*(off+1)), to: w.to.AddDate(0, 0, 7*(off+1))})
			}
		case "month":
			if which == "past" {
				out = append(out, span{from: today.AddDate(0, -1, 0), to: today.AddDate(0, 0, 1)})
			} else {
				out = append(out, month(off))
			}
		case "year":
			out = append(out, year(off))
		}
	}
	for _, m := range enLastDay.FindAllStringSubmatch(text, -1) {
		wd := weekdays[strings.ToLower(m[1])]
		back := (int(today.Weekday()) - int(wd) + 7) % 7
		if back == 0 {
			back = 7
		}
		out = append(out, day(-back))
	}
	for _, m := range zhUnitsAgo.FindAllStringSubmatch(text, -1) {
		n := number(m[1])
		if n == 0 {
			n = zhNumber(m[1])
		}
		if n <= 0 {
			continue
		}
		unit := map[string]string{"天": "day", "日": "day", "周": "week", "个星期": "week", "星期": "week",
			"个礼拜": "week", "礼拜": "week", "个月": "month", "年": "year"}[m[2]]
		out = append(out, ago(n, unit))
	}
	for _, w := range zhWords.FindAllString(text, -1) {
		switch w {
		case "大前天":
			out = append(out, day(-3))
		case "前天":
			out = append(out, day(-2))
		case "昨天", "昨日":
			out = append(out, day(-1))
		case "今天", "今日", "今晚":
			out = append(out, day(0))
		case "明天":
			out = append(out, day(1))
		case "上周末":
			out = append(out, weekend())
		case "这周", "本周", "这星期", "这个星期":
			out = append(out, week(0))
		case "这个月", "本月":
			out = append(out, month(0))
		case "去年":
			out = append(out, year(-1))
		case "今年":
			out = append(out, year(0))
		case "前年":
			out = append(out, year(-2))
		default:
			if strings.HasSuffix(w, "月") {
				out = append(out, month(-1)) // 上月, 上个月
			} else {
				out = append(out, week(-1)) // 上周, 上个星期, 上礼拜…
			}
		}
	}
	return out
}

// zhNumber reads a Chinese number up to 99 (十, 十二, 二十, 二十五).
func zhNumber(s string) int {
	rs := []rune(s)
	switch {
	case len(rs) == 1:
		return numberWords[s]
	case len(rs) == 2 && rs[0] == '十':
		return 10 + numberWords[string(rs[1])]
	case len(rs) == 2 && rs[1] == '十':
		return 10 * numberWords[string(rs[0])]
	}
	return 0
}
