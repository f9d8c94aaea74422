package calendar

import (
	"testing"
	"time"
)

// lunarNewYears are the first days of the Chinese lunar years 1990-2050 as
// published in the Hong Kong Observatory's Gregorian-Lunar calendar
// conversion tables (https://www.hko.gov.hk/en/gts/time/conversion.htm).
var lunarNewYears = []string{
	"1990-01-27", "1991-02-15", "1992-02-04", "1993-01-23", "1994-02-10",
	"1995-01-31", "1996-02-19", "1997-02-07", "1998-01-28", "1999-02-16",
	"2000-02-05", "2001-01-24", "2002-02-12", "2003-02-01", "2004-01-22",
	"2005-02-09", "2006-01-29", "2007-02-18", "2008-02-07", "2009-01-26",
	"2010-02-14", "2011-02-03", "2012-01-23", "2013-02-10", "2014-01-31",
	"2015-02-19", "2016-02-08", "2017-01-28", "2018-02-16", "2019-02-05",
	"2020-01-25", "2021-02-12", "2022-02-01", "2023-01-22", "2024-02-10",
	"2025-01-29", "2026-02-17", "2027-02-06", "2028-01-26", "2029-02-13",
	"2030-02-03", "2031-01-23", "2032-02-11", "2033-01-31", "2034-02-19",
	"2035-02-08", "2036-01-28", "2037-02-15", "2038-02-04", "2039-01-24",
	"2040-02-12", "2041-02-01", "2042-01-22", "2043-02-10", "2044-01-30",
	"2045-02-17", "2046-02-06", "2047-01-26", "2048-02-14", "2049-02-02",
	"2050-01-23",
}

func TestLunarNewYear(t *testing.T) {
	for i, want := range lunarNewYears {
		y := 1990 + i
		if got := lunarNewYear(y).String(); got != want {
			t.Errorf("lunarNewYear(%d) = %s, want %s", y, got, want)
		}
	}
}

// TestLunarFestivals checks lunar dates against festival days published
// by the Hong Kong Government (gov.hk general holidays) and the HKO.
func TestLunarFestivals(t *testing.T) {
	tests := []struct {
		y, m, d int
		want    string
	}{
		{2017, 4, 8, "2017-05-03"},  // Buddha's Birthday
		{2017, 5, 5, "2017-05-30"},  // Tuen Ng
		{2017, 8, 15, "2017-10-04"}, // Mid-Autumn, after the leap 6th month
		{2017, 9, 9, "2017-10-28"},  // Chung Yeung
		{2023, 4, 8, "2023-05-26"},
		{2023, 5, 5, "2023-06-22"},
		{2023, 8, 15, "2023-09-29"},
		{2023, 9, 9, "2023-10-23"},
		{2024, 8, 15, "2024-09-17"},
		{2025, 5, 5, "2025-05-31"},  // Tuen Ng on a Saturday
		{2025, 8, 15, "2025-10-06"}, // after the leap 6th month of 2025
		{2025, 9, 9, "2025-10-29"},
		{1996, 8, 15, "1996-09-27"},
	}
	for _, tt := range tests {
		if got := lunarDate(tt.y, tt.m, tt.d).String(); got != tt.want {
			t.Errorf("lunarDate(%d, %d, %d) = %s, want %s", tt.y, tt.m, tt.d, got, tt.want)
		}
	}
}

// TestEquinoxAndChingMing checks the solar-term approximations against
// published dates (Japan's National Astronomical Observatory "koyomi"
// announcements; HK general holidays for Ching Ming).
func TestEquinoxAndChingMing(t *testing.T) {
	tests := []struct {
		got  Date
		want Date
	}{
		{equinox(2023, true), Date{2023, time.March, 21}},
		{equinox(2024, true), Date{2024, time.March, 20}},
		{equinox(2025, true), Date{2025, time.March, 20}},
		{equinox(2023, false), Date{2023, time.September, 23}},
		{equinox(2024, false), Date{2024, time.September, 22}},
		{equinox(2025, false), Date{2025, time.September, 23}},
		{equinox(2012, false), Date{2012, time.September, 22}},
		{equinox(1990, true), Date{1990, time.March, 21}},
		{chingMing(2023), Date{2023, time.April, 5}},
		{chingMing(2024), Date{2024, time.April, 4}},
		{chingMing(2025), Date{2025, time.April, 4}},
		{chingMing(2026), Date{2026, time.April, 5}},
		{chingMing(1999), Date{1999, time.April, 5}},
		{chingMing(2008), Date{2008, time.April, 4}},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %v, want %v", tt.got, tt.want)
		}
	}
}

// TestLunarTableLengths guards the table's shape: every lunar year has 353
// to 385 days.
func TestLunarTableLengths(t *testing.T) {
	if n := len(lunarInfo); n != MaxYear-lunarFirstYear+1 {
		t.Fatalf("len(lunarInfo) = %d, want %d", n, MaxYear-lunarFirstYear+1)
	}
	for y := lunarFirstYear; y <= MaxYear; y++ {
		if n := lunarYearDays(y); n < 353 || n > 385 {
			t.Errorf("lunarYearDays(%d) = %d", y, n)
		}
	}
}
