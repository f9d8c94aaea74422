package calendar

import "time"

// tsxOneOffs are the TSX closures that follow no yearly rule.
var tsxOneOffs = []oneOff{
	{Date{2001, time.September, 11}, "September 11 attacks", ""},
	{Date{2001, time.September, 12}, "September 11 attacks", ""},
}

// tsxRules are the Toronto Stock Exchange holidays (Ontario statutory
// holidays plus Civic Holiday and Boxing Day).
func tsxRules(y int) []Holiday {
	ny := Date{y, time.January, 1}
	d := weekendToMonday(ny)
	out := []Holiday{closed(d, observed(ny, d, "New Year's Day"))}
	if y >= 2008 {
		out = append(out, closed(nth(y, time.February, time.Monday, 3), "Family Day"))
	}
	out = append(out,
		closed(easter(y).AddDays(-2), "Good Friday"),
		// The Monday before May 25.
		closed(onOrBefore(Date{y, time.May, 24}, time.Monday), "Victoria Day"),
	)
	cd := Date{y, time.July, 1}
	d = weekendToMonday(cd)
	out = append(out,
		closed(d, observed(cd, d, "Canada Day")),
		closed(nth(y, time.August, time.Monday, 1), "Civic Holiday"),
		closed(nth(y, time.September, time.Monday, 1), "Labour Day"),
		closed(nth(y, time.October, time.Monday, 2), "Thanksgiving Day"),
	)
	out = ukChristmas(out, y)
	if y >= 2010 {
		out = append(out, early(Date{y, time.December, 24}, "Christmas Eve", "13:00"))
	}
	return appendOneOffs(out, y, tsxOneOffs)
}
