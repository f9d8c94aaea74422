package calendar

import "time"

// nyseOneOffs are the unscheduled NYSE/Nasdaq closures and the planned
// early closes that follow no rule, 1990 on (NYSE "Closings" history,
// NYSE press releases).
var nyseOneOffs = []oneOff{
	{Date{1994, time.April, 27}, "National Day of Mourning for Richard Nixon", ""},
	{Date{1997, time.December, 26}, "Day after Christmas", "13:00"},
	{Date{2001, time.September, 11}, "September 11 attacks", ""},
	{Date{2001, time.September, 12}, "September 11 attacks", ""},
	{Date{2001, time.September, 13}, "September 11 attacks", ""},
	{Date{2001, time.September, 14}, "September 11 attacks", ""},
	{Date{2003, time.December, 26}, "Day after Christmas", "13:00"},
	{Date{2004, time.June, 11}, "National Day of Mourning for Ronald Reagan", ""},
	{Date{2007, time.January, 2}, "National Day of Mourning for Gerald Ford", ""},
	{Date{2012, time.October, 29}, "Hurricane Sandy", ""},
	{Date{2012, time.October, 30}, "Hurricane Sandy", ""},
	{Date{2018, time.December, 5}, "National Day of Mourning for George H. W. Bush", ""},
	{Date{2025, time.January, 9}, "National Day of Mourning for Jimmy Carter", ""},
}

// nyseRules are the NYSE rules (NYSE Rule 7.2 and its history); Nasdaq
// follows the same calendar.
func nyseRules(y int) []Holiday {
	out := make([]Holiday, 0, 16)
	// New Year's Day: Sunday moves to Monday; Saturday is not observed on
	// the Friday before (that Friday ends the accounting year).
	if ny := (Date{y, time.January, 1}); ny.Weekday() != time.Saturday {
		d := nearestWeekday(ny)
		out = append(out, closed(d, observed(ny, d, "New Year's Day")))
	}
	if y >= 1998 {
		out = append(out, closed(nth(y, time.January, time.Monday, 3), "Martin Luther King Jr. Day"))
	}
	out = append(out,
		closed(nth(y, time.February, time.Monday, 3), "Washington's Birthday"),
		closed(easter(y).AddDays(-2), "Good Friday"),
		closed(nth(y, time.May, time.Monday, -1), "Memorial Day"),
	)
	if y >= 2022 {
		j := Date{y, time.June, 19}
		d := nearestWeekday(j)
		out = append(out, closed(d, observed(j, d, "Juneteenth National Independence Day")))
	}
	july4 := Date{y, time.July, 4}
	d := nearestWeekday(july4)
	out = append(out, closed(d, observed(july4, d, "Independence Day")))
	out = append(out,
		closed(nth(y, time.September, time.Monday, 1), "Labor Day"),
		closed(nth(y, time.November, time.Thursday, 4), "Thanksgiving Day"),
	)
	xmas := Date{y, time.December, 25}
	d = nearestWeekday(xmas)
	out = append(out, closed(d, observed(xmas, d, "Christmas Day")))

	// Early closes. 14:00 until 1992, 13:00 from 1993.
	at := "13:00"
	if y < 1993 {
		at = "14:00"
	}
	if y >= 1995 {
		// The day before Independence Day when July 4 is a Tuesday,
		// Wednesday or Friday; when it is a Thursday, the Friday after
		// until 2012 and the Wednesday before from 2013.
		switch july4.Weekday() {
		case time.Tuesday, time.Wednesday, time.Friday:
			out = append(out, early(july4.AddDays(-1), "Day before Independence Day", at))
		case time.Thursday:
			if y >= 2013 {
				out = append(out, early(july4.AddDays(-1), "Day before Independence Day", at))
			} else if y >= 1996 {
				out = append(out, early(july4.AddDays(1), "Day after Independence Day", at))
			}
		}
	}
	if y >= 1992 {
		out = append(out, early(nth(y, time.November, time.Thursday, 4).AddDays(1), "Day after Thanksgiving", at))
	}
	// Christmas Eve, Monday to Thursday (on a Friday it is the observed
	// Christmas holiday).
	if eve := (Date{y, time.December, 24}); eve.Weekday() >= time.Monday && eve.Weekday() <= time.Thursday {
		out = append(out, early(eve, "Christmas Eve", at))
	}
	return appendOneOffs(out, y, nyseOneOffs)
}
