package calendar

import (
	"slices"
	"time"
)

// hkOneOffs are Hong Kong general holidays of a single year, and the
// closures around the 1997 handover taken from the exchange's history.
var hkOneOffs = []oneOff{
	{Date{1994, time.June, 14}, "Day following Tuen Ng Festival (coinciding with Queen's Birthday)", ""},
	{Date{1997, time.June, 30}, "Handover of Hong Kong", ""},
	{Date{1997, time.July, 2}, "Day following HKSAR Establishment Day", ""},
	{Date{1997, time.August, 18}, "Sino-Japanese War Victory Day", ""},
	{Date{1997, time.October, 2}, "Day following National Day", ""},
	{Date{1998, time.August, 17}, "Sino-Japanese War Victory Day", ""},
	{Date{1998, time.October, 2}, "Day following National Day", ""},
	{Date{1999, time.December, 31}, "Millennium holiday", ""},
	{Date{2015, time.September, 3}, "70th Anniversary of the Sino-Japanese War Victory", ""},
}

// chingMing returns the Ching Ming (Qingming) festival of year y: the day
// of the Qingming solar term in Hong Kong, by the standard approximation
//
//	day of April = floor(Y*0.2422 + C) - floor(Y/4)
//
// with Y the year within its century and C = 5.59 (1900s) or 4.81
// (2000s); 2100, not a leap year, keeps the 2099 leap count.
func chingMing(y int) Date {
	yy, c := y-1900, 5.59
	if y >= 2000 {
		yy, c = y-2000, 4.81
	}
	leaps := yy / 4
	if y == 2100 {
		leaps = 24
	}
	return Date{y, time.April, int(float64(yy)*0.2422+c) - leaps}
}

// hkexRules are the Hong Kong general holidays (General Holidays
// Ordinance, Cap. 149) on which HKEX's securities market is closed, plus
// its half days.
func hkexRules(y int) []Holiday {
	var g []Holiday
	noSub := map[Date]bool{} // holidays whose Sunday is handled by their own rule
	add := func(d Date, name string) { g = append(g, closed(d, name)) }

	add(Date{y, time.January, 1}, "The first day of January")
	lny := lunarNewYear(y)
	add(lny, "Lunar New Year's Day")
	add(lny.AddDays(1), "The second day of Lunar New Year")
	add(lny.AddDays(2), "The third day of Lunar New Year")
	for i := range 3 {
		noSub[lny.AddDays(i)] = true
	}
	if lny.Weekday() == time.Sunday || lny.AddDays(1).Weekday() == time.Sunday || lny.AddDays(2).Weekday() == time.Sunday {
		// One of the three days is a Sunday: until 2010 the eve was a
		// holiday instead; from 2011 the fourth day is.
		if y <= 2010 {
			add(lny.AddDays(-1), "The day preceding Lunar New Year's Day")
		} else {
			add(lny.AddDays(3), "The fourth day of Lunar New Year")
		}
	}
	e := easter(y)
	cm := chingMing(y)
	add(e.AddDays(-2), "Good Friday")
	add(e.AddDays(1), "Easter Monday")
	if cm == e.AddDays(1) {
		add(cm.AddDays(1), "The day following Ching Ming Festival")
	} else {
		add(cm, "Ching Ming Festival")
	}
	if y >= 1999 {
		add(Date{y, time.May, 1}, "Labour Day")
		add(lunarDate(y, 4, 8), "The Birthday of the Buddha")
	}
	add(lunarDate(y, 5, 5), "Tuen Ng Festival")
	if y >= 1997 {
		add(Date{y, time.July, 1}, "Hong Kong Special Administrative Region Establishment Day")
		add(Date{y, time.October, 1}, "National Day")
	}
	mid := lunarDate(y, 8, 15)
	after := mid.AddDays(1)
	if y >= 1997 && after == (Date{y, time.October, 1}) {
		// Coinciding with National Day, as in 2012: the next day.
		after = after.AddDays(1)
	}
	if after.Weekday() == time.Sunday && y <= 2010 {
		// Until 2010 the festival day itself (a Saturday) replaced a
		// Sunday holiday.
		add(mid, "Chinese Mid-Autumn Festival")
		noSub[mid] = true
	} else {
		add(after, "The day following the Chinese Mid-Autumn Festival")
	}
	add(lunarDate(y, 9, 9), "Chung Yeung Festival")
	if y < 1997 {
		// Colonial holidays (dates as kept by pandas_market_calendars'
		// HKEX history).
		n := 3
		if y == 1993 || y == 1994 {
			n = 2
		}
		add(nth(y, time.June, time.Monday, n), "Queen's Birthday")
		add(nth(y, time.August, time.Monday, -1), "Liberation Day")
	}
	xmas := Date{y, time.December, 25}
	add(xmas, "Christmas Day")
	// "The first weekday after Christmas Day": Saturday counts as a weekday.
	if d := xmas.AddDays(1); d.Weekday() == time.Sunday {
		add(d.AddDays(1), "The first weekday after Christmas Day")
	} else {
		add(d, "The first weekday after Christmas Day")
	}
	g = appendOneOffs(g, y, hkOneOffs)

	// A general holiday on a Sunday gives the next day that is not
	// already a holiday.
	slices.SortFunc(g, func(a, b Holiday) int { return a.Date.Compare(b.Date) })
	hol := map[Date]bool{}
	for _, x := range g {
		hol[x.Date] = true
	}
	n := len(g)
	for _, x := range g[:n] {
		if x.Date.Weekday() != time.Sunday || noSub[x.Date] {
			continue
		}
		d := x.Date.AddDays(1)
		for hol[d] {
			d = d.AddDays(1)
		}
		hol[d] = true
		g = append(g, closed(d, x.Name+" (substitute)"))
	}

	// Half days: morning session only on the eves of Lunar New Year,
	// Christmas and New Year, when they are trading days.
	for _, d := range []Date{lny.AddDays(-1), {y, time.December, 24}, {y, time.December, 31}} {
		if !hol[d] {
			name := "Christmas Eve"
			switch d {
			case lny.AddDays(-1):
				name = "Lunar New Year's Eve"
			case Date{y, time.December, 31}:
				name = "New Year's Eve"
			}
			g = append(g, early(d, name, "12:00"))
		}
	}
	return g
}
