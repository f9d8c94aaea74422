package calendar

import "time"

// lseOneOffs are the one-off bank holidays of England and Wales that
// closed the LSE (UK Government bank-holiday proclamations).
var lseOneOffs = []oneOff{
	{Date{1999, time.December, 31}, "Millennium Celebrations", ""},
	{Date{2002, time.June, 3}, "Golden Jubilee of Queen Elizabeth II", ""},
	{Date{2011, time.April, 29}, "Wedding of Prince William and Catherine Middleton", ""},
	{Date{2012, time.June, 5}, "Diamond Jubilee of Queen Elizabeth II", ""},
	{Date{2022, time.June, 3}, "Platinum Jubilee of Queen Elizabeth II", ""},
	{Date{2022, time.September, 19}, "State Funeral of Queen Elizabeth II", ""},
	{Date{2023, time.May, 8}, "Coronation of King Charles III", ""},
}

// lseRules are the English bank holidays plus the LSE's half days.
func lseRules(y int) []Holiday {
	out := make([]Holiday, 0, 16)
	ny := Date{y, time.January, 1}
	d := weekendToMonday(ny)
	out = append(out, closed(d, observed(ny, d, "New Year's Day")))
	e := easter(y)
	out = append(out, closed(e.AddDays(-2), "Good Friday"), closed(e.AddDays(1), "Easter Monday"))

	// Early May bank holiday: first Monday in May, moved to VE Day (May 8)
	// for its 50th and 75th anniversaries.
	switch y {
	case 1995, 2020:
		out = append(out, closed(Date{y, time.May, 8}, "Early May Bank Holiday (VE Day)"))
	default:
		out = append(out, closed(nth(y, time.May, time.Monday, 1), "Early May Bank Holiday"))
	}
	// Spring bank holiday: last Monday in May, moved for the jubilees.
	switch y {
	case 2002:
		out = append(out, closed(Date{2002, time.June, 4}, "Spring Bank Holiday"))
	case 2012:
		out = append(out, closed(Date{2012, time.June, 4}, "Spring Bank Holiday"))
	case 2022:
		out = append(out, closed(Date{2022, time.June, 2}, "Spring Bank Holiday"))
	default:
		out = append(out, closed(nth(y, time.May, time.Monday, -1), "Spring Bank Holiday"))
	}
	out = append(out, closed(nth(y, time.August, time.Monday, -1), "Summer Bank Holiday"))
	out = ukChristmas(out, y)

	// Half days (12:30): Christmas Eve and New Year's Eve, or the Friday
	// before when they fall on a weekend.
	out = append(out,
		early(previousWeekday(Date{y, time.December, 24}), "Christmas Eve", "12:30"),
		early(previousWeekday(Date{y, time.December, 31}), "New Year's Eve", "12:30"),
	)
	return appendOneOffs(out, y, lseOneOffs)
}
