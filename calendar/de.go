package calendar

import "time"

// xetraOneOffs are the Xetra closures that follow no yearly rule
// (Deutsche Börse trading-calendar announcements).
var xetraOneOffs = []oneOff{
	{Date{2007, time.May, 28}, "Whit Monday", ""},
	{Date{2017, time.October, 31}, "Reformation Day (500th anniversary)", ""},
}

// xetraRules are the Xetra (Frankfurt electronic market) trading holidays.
// German holidays are not moved off weekends.
func xetraRules(y int) []Holiday {
	e := easter(y)
	out := []Holiday{
		closed(Date{y, time.January, 1}, "New Year's Day"),
		closed(e.AddDays(-2), "Good Friday"),
		closed(e.AddDays(1), "Easter Monday"),
		closed(Date{y, time.May, 1}, "Labour Day"),
		closed(Date{y, time.December, 24}, "Christmas Eve"),
		closed(Date{y, time.December, 25}, "Christmas Day"),
		closed(Date{y, time.December, 26}, "Boxing Day"),
		closed(Date{y, time.December, 31}, "New Year's Eve"),
	}
	// Whit Monday and German Unity Day were Xetra holidays for a few years
	// only; Deutsche Börse traded on them again from 2022.
	if y >= 2015 && y <= 2021 {
		out = append(out, closed(e.AddDays(50), "Whit Monday"))
	}
	if y >= 2014 && y <= 2021 {
		out = append(out, closed(Date{y, time.October, 3}, "Day of German Unity"))
	}
	// From 2010 the last trading day before New Year's Eve ends with the
	// year-end closing auction at 14:00.
	if y >= 2010 {
		out = append(out, early(previousWeekday(Date{y, time.December, 30}), "Last trading day of the year", "14:00"))
	}
	return appendOneOffs(out, y, xetraOneOffs)
}
