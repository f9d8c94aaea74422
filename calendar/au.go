package calendar

import "time"

// asxOneOffs are the ASX closures that follow no yearly rule.
var asxOneOffs = []oneOff{
	{Date{2022, time.September, 22}, "National Day of Mourning for Queen Elizabeth II", ""},
}

// asxRules are the ASX trading holidays (national and New South Wales
// public holidays observed by the exchange).
func asxRules(y int) []Holiday {
	ny := Date{y, time.January, 1}
	d := weekendToMonday(ny)
	out := []Holiday{closed(d, observed(ny, d, "New Year's Day"))}
	// Australia Day: since 1994 on January 26, moved to Monday from a
	// weekend; before 1994 on the Monday on or after January 26.
	ad := Date{y, time.January, 26}
	if y >= 1994 {
		d = weekendToMonday(ad)
	} else {
		d = ad.AddDays(int((time.Monday - ad.Weekday() + 7) % 7))
	}
	out = append(out, closed(d, observed(ad, d, "Australia Day")))
	e := easter(y)
	birthday := "Queen's Birthday"
	if y >= 2023 {
		birthday = "King's Birthday"
	}
	out = append(out,
		closed(e.AddDays(-2), "Good Friday"),
		closed(e.AddDays(1), "Easter Monday"),
		// Anzac Day is not moved off a weekend.
		closed(Date{y, time.April, 25}, "Anzac Day"),
		closed(nth(y, time.June, time.Monday, 2), birthday),
	)
	out = ukChristmas(out, y)
	// Early closes (14:10, closing auction included): the last business
	// day before Christmas and the last business day of the year.
	out = append(out,
		early(previousWeekday(Date{y, time.December, 24}), "Christmas Eve", "14:10"),
		early(previousWeekday(Date{y, time.December, 31}), "New Year's Eve", "14:10"),
	)
	return appendOneOffs(out, y, asxOneOffs)
}
