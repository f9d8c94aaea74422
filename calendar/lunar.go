package calendar

import "time"

// The Chinese lunisolar calendar, 1990-2100, for the Hong Kong lunar
// holidays.
//
// lunarInfo holds one word per lunar year from 1990 (the year whose first
// day falls in Gregorian 1990) to 2100, in the compact encoding widely
// used for the Hong Kong Observatory's Gregorian-Lunar calendar
// conversion tables (https://www.hko.gov.hk/en/gts/time/conversion.htm):
//
//	bits 15..4   month lengths, bit 15 for month 1: 1 = 30 days, 0 = 29 days
//	bits 3..0    the number of the month followed by a leap month, 0 if none
//	bit 16       length of that leap month: 1 = 30 days, 0 = 29 days
//
// The first day of lunar year 1990 was 1990-01-27; every later new year is
// found by adding the lengths of the years before it. The new-year dates
// derived here are checked against the published list in lunar_test.go.
var lunarInfo = [...]uint32{
	0x04af5, 0x04970, 0x064b0, 0x074a3, 0x0ea50, 0x06b58, 0x05ac0, 0x0ab60, 0x096d5, 0x092e0, // 1990-1999
	0x0c960, 0x0d954, 0x0d4a0, 0x0da50, 0x07552, 0x056a0, 0x0abb7, 0x025d0, 0x092d0, 0x0cab5, // 2000-2009
	0x0a950, 0x0b4a0, 0x0baa4, 0x0ad50, 0x055d9, 0x04ba0, 0x0a5b0, 0x15176, 0x052b0, 0x0a930, // 2010-2019
	0x07954, 0x06aa0, 0x0ad50, 0x05b52, 0x04b60, 0x0a6e6, 0x0a4e0, 0x0d260, 0x0ea65, 0x0d530, // 2020-2029
	0x05aa0, 0x076a3, 0x096d0, 0x04afb, 0x04ad0, 0x0a4d0, 0x1d0b6, 0x0d250, 0x0d520, 0x0dd45, // 2030-2039
	0x0b5a0, 0x056d0, 0x055b2, 0x049b0, 0x0a577, 0x0a4b0, 0x0aa50, 0x1b255, 0x06d20, 0x0ada0, // 2040-2049
	0x14b63, 0x09370, 0x049f8, 0x04970, 0x064b0, 0x168a6, 0x0ea50, 0x06b20, 0x1a6c4, 0x0aae0, // 2050-2059
	0x092e0, 0x0d2e3, 0x0c960, 0x0d557, 0x0d4a0, 0x0da50, 0x05d55, 0x056a0, 0x0a6d0, 0x055d4, // 2060-2069
	0x052d0, 0x0a9b8, 0x0a950, 0x0b4a0, 0x0b6a6, 0x0ad50, 0x055a0, 0x0aba4, 0x0a5b0, 0x052b0, // 2070-2079
	0x0b273, 0x06930, 0x07337, 0x06aa0, 0x0ad50, 0x14b55, 0x04b60, 0x0a570, 0x054e4, 0x0d160, // 2080-2089
	0x0e968, 0x0d520, 0x0daa0, 0x16aa6, 0x056d0, 0x04ae0, 0x0a9d4, 0x0a2d0, 0x0d150, 0x0f252, // 2090-2099
	0x0d520, // 2100
}

const lunarFirstYear = 1990

// lunarNewYear1990 is the first day of lunar year 1990.
var lunarNewYear1990 = Date{1990, time.January, 27}

// lunarMonthDays returns the length of regular month m (1-12) of lunar
// year y.
func lunarMonthDays(y, m int) int {
	if lunarInfo[y-lunarFirstYear]&(0x10000>>m) != 0 {
		return 30
	}
	return 29
}

// lunarLeap returns the month after which lunar year y has a leap month
// (0 if none) and that month's length.
func lunarLeap(y int) (month, days int) {
	info := lunarInfo[y-lunarFirstYear]
	month = int(info & 0xf)
	if month == 0 {
		return 0, 0
	}
	if info&0x10000 != 0 {
		return month, 30
	}
	return month, 29
}

// lunarYearDays returns the number of days in lunar year y.
func lunarYearDays(y int) int {
	n := 0
	for m := 1; m <= 12; m++ {
		n += lunarMonthDays(y, m)
	}
	_, leap := lunarLeap(y)
	return n + leap
}

// lunarNewYear returns the Gregorian date of the first day of lunar year
// y, for y in [1990, 2100].
func lunarNewYear(y int) Date {
	d := lunarNewYear1990
	for i := lunarFirstYear; i < y; i++ {
		d = d.AddDays(lunarYearDays(i))
	}
	return d
}

// lunarDate returns the Gregorian date of day day of regular (non-leap)
// month month of lunar year y, for y in [1990, 2100].
func lunarDate(y, month, day int) Date {
	off := 0
	leap, leapDays := lunarLeap(y)
	for m := 1; m < month; m++ {
		off += lunarMonthDays(y, m)
		if m == leap {
			off += leapDays
		}
	}
	return lunarNewYear(y).AddDays(off + day - 1)
}
