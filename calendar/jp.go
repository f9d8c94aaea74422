package calendar

import (
	"math"
	"time"
)

// jpOneOffs are the national holidays declared by special acts, and
// jpxOneOffs the exchange's own unscheduled closures.
var (
	jpOneOffs = []oneOff{
		{Date{1990, time.November, 12}, "Enthronement Ceremony of Emperor Akihito", ""},
		{Date{1993, time.June, 9}, "Wedding of Crown Prince Naruhito", ""},
		{Date{2019, time.May, 1}, "Accession of Emperor Naruhito", ""},
		{Date{2019, time.October, 22}, "Enthronement Ceremony of Emperor Naruhito", ""},
	}
	jpxOneOffs = []oneOff{
		{Date{2020, time.October, 1}, "Trading system failure", ""},
	}
)

// equinox returns the day in March (vernal) or September (autumnal) of the
// equinox holiday of year y, by the approximation published for the
// Japanese calendar (valid 1980-2099, and with shifted constants 2100-2150):
//
//	day = floor(C + 0.242194*(y-1980) - floor((y-1980)/4))
//
// with C = 20.8431 (March) or 23.2488 (September) for 1980-2099, and
// 21.8510 or 24.2488 for 2100-2150.
func equinox(y int, vernal bool) Date {
	var c float64
	switch {
	case vernal && y < 2100:
		c = 20.8431
	case vernal:
		c = 21.8510
	case y < 2100:
		c = 23.2488
	default:
		c = 24.2488
	}
	n := y - 1980
	day := int(math.Floor(c + 0.242194*float64(n) - math.Floor(float64(n)/4)))
	if vernal {
		return Date{y, time.March, day}
	}
	return Date{y, time.September, day}
}

// japanHolidays returns the national holidays of Japan in year y under
// the Act on National Holidays as amended (Happy Monday system from
// 2000/2003, Showa Day 2007, Mountain Day 2016, Emperor's Birthday moved
// in 2019/2020, Olympic moves 2020/2021), with substitute holidays and
// "citizens' holidays", sorted by date.
func japanHolidays(y int) []Holiday {
	var h []Holiday
	add := func(d Date, name string) { h = append(h, closed(d, name)) }
	add(Date{y, time.January, 1}, "New Year's Day")
	if y < 2000 {
		add(Date{y, time.January, 15}, "Coming of Age Day")
	} else {
		add(nth(y, time.January, time.Monday, 2), "Coming of Age Day")
	}
	add(Date{y, time.February, 11}, "National Foundation Day")
	if y >= 2020 {
		add(Date{y, time.February, 23}, "Emperor's Birthday")
	}
	add(equinox(y, true), "Vernal Equinox Day")
	if y < 2007 {
		add(Date{y, time.April, 29}, "Greenery Day")
	} else {
		add(Date{y, time.April, 29}, "Showa Day")
	}
	add(Date{y, time.May, 3}, "Constitution Memorial Day")
	if y >= 2007 {
		add(Date{y, time.May, 4}, "Greenery Day")
	}
	add(Date{y, time.May, 5}, "Children's Day")
	switch {
	case y == 2020:
		add(Date{y, time.July, 23}, "Marine Day")
	case y == 2021:
		add(Date{y, time.July, 22}, "Marine Day")
	case y >= 2003:
		add(nth(y, time.July, time.Monday, 3), "Marine Day")
	case y >= 1996:
		add(Date{y, time.July, 20}, "Marine Day")
	}
	switch {
	case y == 2020:
		add(Date{y, time.August, 10}, "Mountain Day")
	case y == 2021:
		add(Date{y, time.August, 8}, "Mountain Day")
	case y >= 2016:
		add(Date{y, time.August, 11}, "Mountain Day")
	}
	if y < 2003 {
		add(Date{y, time.September, 15}, "Respect for the Aged Day")
	} else {
		add(nth(y, time.September, time.Monday, 3), "Respect for the Aged Day")
	}
	add(equinox(y, false), "Autumnal Equinox Day")
	switch {
	case y < 2000:
		add(Date{y, time.October, 10}, "Health and Sports Day")
	case y < 2020:
		add(nth(y, time.October, time.Monday, 2), "Health and Sports Day")
	case y == 2020:
		add(Date{y, time.July, 24}, "Sports Day")
	case y == 2021:
		add(Date{y, time.July, 23}, "Sports Day")
	default:
		add(nth(y, time.October, time.Monday, 2), "Sports Day")
	}
	add(Date{y, time.November, 3}, "Culture Day")
	add(Date{y, time.November, 23}, "Labour Thanksgiving Day")
	if y <= 2018 {
		add(Date{y, time.December, 23}, "Emperor's Birthday")
	}
	h = appendOneOffs(h, y, jpOneOffs)

	var national [367]bool // by day of year
	for _, x := range h {
		national[x.Date.YearDay()] = true
	}
	holiday := national
	// Substitute holiday: a national holiday on a Sunday moves to the
	// Monday (until 2006, only if that Monday is not itself a holiday) or,
	// from 2007, to the next day that is not a national holiday.
	n := len(h)
	for _, x := range h[:n] {
		if x.Date.Weekday() != time.Sunday {
			continue
		}
		d := x.Date.AddDays(1)
		if y >= 2007 {
			for d.Year == y && holiday[d.YearDay()] {
				d = d.AddDays(1)
			}
		} else if holiday[d.YearDay()] {
			continue
		}
		if d.Year == y {
			holiday[d.YearDay()] = true
			h = append(h, closed(d, "Substitute Holiday"))
		}
	}
	// Citizens' holiday: a day that is not a Sunday or already a holiday,
	// between two national holidays.
	last := Date{y, time.December, 31}.YearDay()
	for yd := 2; yd < last; yd++ {
		if national[yd-1] && national[yd+1] && !holiday[yd] {
			d := Date{y, time.January, 1}.AddDays(yd - 1)
			if d.Weekday() != time.Sunday {
				holiday[yd] = true
				h = append(h, closed(d, "Citizens' Holiday"))
			}
		}
	}
	return h
}

// jpxRules are the Japan Exchange Group (Tokyo Stock Exchange) closures:
// the national holidays plus the year-end and new-year holidays from
// December 31 to January 3.
func jpxRules(y int) []Holiday {
	out := japanHolidays(y)
	out = append(out,
		closed(Date{y, time.January, 2}, "New Year Holiday"),
		closed(Date{y, time.January, 3}, "New Year Holiday"),
		closed(Date{y, time.December, 31}, "Year-end Holiday"),
	)
	return appendOneOffs(out, y, jpxOneOffs)
}
