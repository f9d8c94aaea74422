package calendar_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tradekit/tradekit/calendar"
)

// publishedClosed lists full-day weekday closures for 2023-2025, typed in
// from each exchange's published trading calendar:
//
//	XETRA  Deutsche Börse "Trading calendar" (xetra.com, Trading hours and calendars)
//	TSX    TMX Group "Trading Calendar" (tsx.com, Calendars and trading hours)
//	ASX    ASX "Trading calendar" (asx.com.au, Trading hours and calendar)
//	JPX    JPX "Market Holidays" (jpx.co.jp/english/corporate/about-jpx/calendar)
//	HKEX   HKEX "Trading Calendar and Holiday Schedule" (hkex.com.hk), which follows
//	       the Hong Kong general holidays (gov.hk/en/about/abouthk/holiday)
//
// Unscheduled weather closures (HKEX typhoon and rainstorm days) are not
// part of the published lists and are not modelled.
var publishedClosed = map[string]map[int][]string{
	"XETRA": {
		2023: {"2023-04-07", "2023-04-10", "2023-05-01", "2023-12-25", "2023-12-26"},
		2024: {"2024-01-01", "2024-03-29", "2024-04-01", "2024-05-01", "2024-12-24", "2024-12-25", "2024-12-26", "2024-12-31"},
		2025: {"2025-01-01", "2025-04-18", "2025-04-21", "2025-05-01", "2025-12-24", "2025-12-25", "2025-12-26", "2025-12-31"},
	},
	"TSX": {
		2023: {"2023-01-02", "2023-02-20", "2023-04-07", "2023-05-22", "2023-07-03", "2023-08-07", "2023-09-04", "2023-10-09", "2023-12-25", "2023-12-26"},
		2024: {"2024-01-01", "2024-02-19", "2024-03-29", "2024-05-20", "2024-07-01", "2024-08-05", "2024-09-02", "2024-10-14", "2024-12-25", "2024-12-26"},
		2025: {"2025-01-01", "2025-02-17", "2025-04-18", "2025-05-19", "2025-07-01", "2025-08-04", "2025-09-01", "2025-10-13", "2025-12-25", "2025-12-26"},
	},
	"ASX": {
		2023: {"2023-01-02", "2023-01-26", "2023-04-07", "2023-04-10", "2023-04-25", "2023-06-12", "2023-12-25", "2023-12-26"},
		2024: {"2024-01-01", "2024-01-26", "2024-03-29", "2024-04-01", "2024-04-25", "2024-06-10", "2024-12-25", "2024-12-26"},
		2025: {"2025-01-01", "2025-01-27", "2025-04-18", "2025-04-21", "2025-04-25", "2025-06-09", "2025-12-25", "2025-12-26"},
	},
	"JPX": {
		2023: {"2023-01-02", "2023-01-03", "2023-01-09", "2023-02-23", "2023-03-21", "2023-05-03", "2023-05-04", "2023-05-05", "2023-07-17", "2023-08-11", "2023-09-18", "2023-10-09", "2023-11-03", "2023-11-23"},
		2024: {"2024-01-01", "2024-01-02", "2024-01-03", "2024-01-08", "2024-02-12", "2024-02-23", "2024-03-20", "2024-04-29", "2024-05-03", "2024-05-06", "2024-07-15", "2024-08-12", "2024-09-16", "2024-09-23", "2024-10-14", "2024-11-04", "2024-12-31"},
		2025: {"2025-01-01", "2025-01-02", "2025-01-03", "2025-01-13", "2025-02-11", "2025-02-24", "2025-03-20", "2025-04-29", "2025-05-05", "2025-05-06", "2025-07-21", "2025-08-11", "2025-09-15", "2025-09-23", "2025-10-13", "2025-11-03", "2025-11-24", "2025-12-31"},
	},
	"HKEX": {
		2023: {"2023-01-02", "2023-01-23", "2023-01-24", "2023-01-25", "2023-04-05", "2023-04-07", "2023-04-10", "2023-05-01", "2023-05-26", "2023-06-22", "2023-10-02", "2023-10-23", "2023-12-25", "2023-12-26"},
		2024: {"2024-01-01", "2024-02-12", "2024-02-13", "2024-03-29", "2024-04-01", "2024-04-04", "2024-05-01", "2024-05-15", "2024-06-10", "2024-07-01", "2024-09-18", "2024-10-01", "2024-10-11", "2024-12-25", "2024-12-26"},
		2025: {"2025-01-01", "2025-01-29", "2025-01-30", "2025-01-31", "2025-04-04", "2025-04-18", "2025-04-21", "2025-05-01", "2025-05-05", "2025-07-01", "2025-10-01", "2025-10-07", "2025-10-29", "2025-12-25", "2025-12-26"},
	},
}

// publishedEarly lists the early closes of 2023-2025 from the same
// calendars. JPX has none.
var publishedEarly = map[string]map[int][]string{
	"XETRA": {
		2023: {"2023-12-29 14:00"},
		2024: {"2024-12-30 14:00"},
		2025: {"2025-12-30 14:00"},
	},
	"TSX": {
		2023: {},
		2024: {"2024-12-24 13:00"},
		2025: {"2025-12-24 13:00"},
	},
	"ASX": {
		2023: {"2023-12-22 14:10", "2023-12-29 14:10"},
		2024: {"2024-12-24 14:10", "2024-12-31 14:10"},
		2025: {"2025-12-24 14:10", "2025-12-31 14:10"},
	},
	"JPX": {2023: {}, 2024: {}, 2025: {}},
	"HKEX": {
		2023: {},
		2024: {"2024-02-09 12:00", "2024-12-24 12:00", "2024-12-31 12:00"},
		2025: {"2025-01-28 12:00", "2025-12-24 12:00", "2025-12-31 12:00"},
	},
}

func TestPublishedCalendars2023to2025(t *testing.T) {
	for code, years := range publishedClosed {
		c := mustLookup(t, code)
		for y, want := range years {
			if diff := cmp.Diff(want, datesOf(t, c, y, calendar.Closed)); diff != "" {
				t.Errorf("%s closures %d mismatch (-want +got):\n%s", code, y, diff)
			}
			if diff := cmp.Diff(publishedEarly[code][y], earlyOf(t, c, y)); diff != "" {
				t.Errorf("%s early closes %d mismatch (-want +got):\n%s", code, y, diff)
			}
		}
	}
}

// TestHistoricalRules spot-checks rule changes and one-off closures, each
// against the source named in its comment.
func TestHistoricalRules(t *testing.T) {
	tests := []struct {
		code    string
		date    string
		trading bool
	}{
		// Japan: Cabinet Office national-holiday tables.
		{"JPX", "1990-11-12", false}, // Enthronement Ceremony of Emperor Akihito
		{"JPX", "1993-06-09", false}, // Wedding of Crown Prince Naruhito
		{"JPX", "1999-01-15", false}, // Coming of Age Day on Jan 15 before 2000
		{"JPX", "2000-01-10", false}, // second Monday of January from 2000
		{"JPX", "2002-09-16", false}, // Respect for the Aged Day still Sept 15 (a Sunday) in 2002: substitute Monday
		{"JPX", "2002-09-17", true},
		{"JPX", "2003-09-15", false}, // third Monday of September from 2003
		{"JPX", "2006-05-04", false}, // citizens' holiday between May 3 and 5
		{"JPX", "2008-05-06", false}, // substitute for Greenery Day (Sunday May 4), 2007 rule
		{"JPX", "2009-09-22", false}, // citizens' holiday ("Silver Week")
		{"JPX", "2018-12-24", false}, // substitute for the Emperor's Birthday (Sunday Dec 23)
		{"JPX", "2019-12-23", true},  // no Emperor's Birthday in 2019
		{"JPX", "2019-04-30", false}, // 2019 ten-day Golden Week
		{"JPX", "2019-05-01", false},
		{"JPX", "2019-05-02", false},
		{"JPX", "2019-10-22", false}, // Enthronement Ceremony of Emperor Naruhito
		{"JPX", "2020-07-23", false}, // Olympic moves: Marine Day
		{"JPX", "2020-07-24", false}, // Sports Day
		{"JPX", "2020-08-10", false}, // Mountain Day
		{"JPX", "2020-10-12", true},  // no Sports Day in October 2020
		{"JPX", "2020-10-01", false}, // arrowhead system failure
		{"JPX", "2021-08-09", false}, // substitute for Mountain Day (Sunday Aug 8)
		// Japan, further samples from exchange_calendars' XTKS tests.
		{"JPX", "2012-04-30", false}, // Showa Day observed
		{"JPX", "2012-12-24", false}, // Emperor's Birthday observed
		{"JPX", "2013-05-06", false}, // Children's Day observed
		{"JPX", "2009-05-06", false}, // Constitution Day observed on the next non-holiday
		{"JPX", "2019-08-12", false}, // Mountain Day observed
		{"JPX", "2020-02-24", false}, // Emperor's Birthday observed
		{"JPX", "2020-05-06", false},
		{"JPX", "2020-09-22", false},
		{"JPX", "2015-08-11", true},  // Mountain Day not before 2016
		{"JPX", "1996-07-22", true},  // Marine Day 1996 fell on a Saturday
		{"JPX", "1990-02-12", false}, // substitute for National Foundation Day (pre-2007 rule)
		// Hong Kong: gov.hk general-holiday lists; exchange_calendars XHKG tests.
		{"HKEX", "2003-01-31", false}, // day preceding Lunar New Year's Day (pre-2011 rule)
		{"HKEX", "2003-02-03", false},
		{"HKEX", "2017-01-31", false}, // fourth day of Lunar New Year
		{"HKEX", "2017-05-03", false}, // Buddha's Birthday
		{"HKEX", "2017-05-30", false}, // Tuen Ng
		{"HKEX", "2017-10-05", false}, // day following Mid-Autumn
		{"HKEX", "2018-02-19", false}, // fourth day of Lunar New Year
		{"HKEX", "2012-10-02", false}, // Mid-Autumn holiday moved past National Day
		{"HKEX", "2015-04-07", false}, // Ching Ming on Easter Sunday
		{"HKEX", "2015-09-03", false}, // 70th anniversary of the War of Resistance victory
		{"HKEX", "2020-12-28", true},  // Boxing Day holiday was Saturday Dec 26
		{"HKEX", "2022-09-12", false}, // day following Mid-Autumn fell on a Sunday
		{"HKEX", "1997-07-01", false}, // HKSAR Establishment Day
		{"HKEX", "1991-06-18", false}, // Tuen Ng on a Sunday, next day Queen's Birthday (pandas_market_calendars' HKEX list)
		{"HKEX", "1999-04-06", false}, // Ching Ming on Easter Monday (same list)
		{"HKEX", "2010-04-06", false}, // Ching Ming on Easter Monday (same list)
		{"HKEX", "2026-04-07", false}, // Ching Ming on Easter Sunday, announced for 2026 (gov.hk)
		{"HKEX", "1998-05-01", true},  // Labour Day a general holiday from 1999
		// Xetra: Deutsche Börse trading calendars.
		{"XETRA", "2017-10-31", false}, // Reformation Day 500th anniversary
		{"XETRA", "2019-06-10", false}, // Whit Monday 2015-2021
		{"XETRA", "2022-06-06", true},  // Whit Monday traded again from 2022
		{"XETRA", "2019-10-03", false}, // German Unity Day 2014-2021
		{"XETRA", "2023-10-03", true},
		// TSX: Family Day from 2008; September 11 2001.
		{"TSX", "2007-02-19", true},
		{"TSX", "2008-02-18", false},
		{"TSX", "2001-09-12", false},
		// ASX: National Day of Mourning for Queen Elizabeth II.
		{"ASX", "2022-09-22", false},
		{"ASX", "2026-04-27", true}, // Anzac Day on a Saturday is not moved
	}
	for _, tt := range tests {
		c := mustLookup(t, tt.code)
		if got := c.IsTradingDay(mustDate(t, tt.date)); got != tt.trading {
			t.Errorf("%s IsTradingDay(%s) = %v, want %v", tt.code, tt.date, got, tt.trading)
		}
	}
}
