package calendar

import "time"

// This file holds the date arithmetic shared by the exchange rules.

// easter returns Easter Sunday of year y in the Gregorian calendar, by the
// anonymous Gregorian algorithm (Meeus/Jones/Butcher, "Astronomical
// Algorithms", chapter 8).
func easter(y int) Date {
	a := y % 19
	b, c := y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return Date{y, time.Month(month), day}
}

// nth returns the n-th weekday wd of month m in year y (n >= 1), or the
// last one when n is -1.
func nth(y int, m time.Month, wd time.Weekday, n int) Date {
	if n < 0 {
		last := Date{y, m, daysIn(y, m)}
		return last.AddDays(-int((last.Weekday() - wd + 7) % 7))
	}
	first := Date{y, m, 1}
	return first.AddDays(int((wd-first.Weekday()+7)%7) + 7*(n-1))
}

// onOrBefore returns the last weekday wd on or before d.
func onOrBefore(d Date, wd time.Weekday) Date {
	return d.AddDays(-int((d.Weekday() - wd + 7) % 7))
}

// nearestWeekday moves a Saturday to the Friday before and a Sunday to the
// Monday after (the US rule).
func nearestWeekday(d Date) Date {
	switch d.Weekday() {
	case time.Saturday:
		return d.AddDays(-1)
	case time.Sunday:
		return d.AddDays(1)
	}
	return d
}

// weekendToMonday moves a Saturday or Sunday to the Monday after.
func weekendToMonday(d Date) Date {
	switch d.Weekday() {
	case time.Saturday:
		return d.AddDays(2)
	case time.Sunday:
		return d.AddDays(1)
	}
	return d
}

// previousWeekday returns d itself on a weekday, else the Friday before.
func previousWeekday(d Date) Date {
	switch d.Weekday() {
	case time.Saturday:
		return d.AddDays(-1)
	case time.Sunday:
		return d.AddDays(-2)
	}
	return d
}

// closed and early build raw rule results.
func closed(d Date, name string) Holiday { return Holiday{Date: d, Name: name, Type: Closed} }

func early(d Date, name, at string) Holiday {
	return Holiday{Date: d, Name: name, Type: EarlyClose, Close: at}
}

// observed adds " (observed)" to name when the date was moved.
func observed(orig, d Date, name string) string {
	if orig != d {
		return name + " (observed)"
	}
	return name
}

// oneOff is a dated event of one exchange: a closure, or an early close
// when at is set.
type oneOff struct {
	date Date
	name string
	at   string
}

// appendOneOffs appends the events of year y.
func appendOneOffs(out []Holiday, y int, events []oneOff) []Holiday {
	for _, e := range events {
		if e.date.Year != y {
			continue
		}
		if e.at == "" {
			out = append(out, closed(e.date, e.name))
		} else {
			out = append(out, early(e.date, e.name, e.at))
		}
	}
	return out
}

// ukChristmas appends Christmas Day and Boxing Day with the English
// substitute-day rule: a holiday on a weekend moves to the next weekday
// not already a holiday (Christmas on Saturday: Mon 27 and Tue 28;
// Christmas on Sunday: Mon 26 and Tue 27; Christmas on Friday: Mon 28).
func ukChristmas(out []Holiday, y int) []Holiday {
	xmas, boxing := Date{y, time.December, 25}, Date{y, time.December, 26}
	out = append(out, closed(xmas, "Christmas Day"), closed(boxing, "Boxing Day"))
	switch xmas.Weekday() {
	case time.Friday:
		out = append(out, closed(Date{y, time.December, 28}, "Boxing Day (substitute)"))
	case time.Saturday:
		out = append(out, closed(Date{y, time.December, 27}, "Christmas Day (substitute)"),
			closed(Date{y, time.December, 28}, "Boxing Day (substitute)"))
	case time.Sunday:
		out = append(out, closed(Date{y, time.December, 27}, "Christmas Day (substitute)"))
	}
	return out
}
