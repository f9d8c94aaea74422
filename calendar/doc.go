// Package calendar computes exchange trading holidays by rule, for any
// year from 1990 to 2100, with no database and no network.
//
// A [Calendar] answers, for one exchange: which weekdays of a year are
// closures or early closes ([Calendar.Holidays]), whether a date is a
// trading day ([Calendar.IsTradingDay]), the next and previous trading
// days ([Calendar.Next], [Calendar.Previous]), the sessions between two
// dates ([Calendar.Sessions]) and the closing time of a day
// ([Calendar.CloseTime]). Dates are civil dates ([Date]) in the exchange's
// own time zone.
//
//	nyse, _ := calendar.Lookup("NYSE") // or "XNYS", any case
//	hs, err := nyse.Holidays(2024)     // closures and early closes, sorted
//	d := calendar.Date{Year: 2024, Month: time.July, Day: 4}
//	nyse.IsTradingDay(d)               // false
//	nyse.Next(d)                       // 2024-07-05
//	days, err := nyse.Sessions(from, to)
//
// # Exchanges
//
// Symbols and MICs: NYSE (XNYS), NASDAQ (XNAS), LSE (XLON), XETRA (XETR),
// TSX (XTSE), ASX (XASX), JPX (XJPX), HKEX (XHKG), and CRYPTO, a 24/7
// pseudo-exchange on which every day is a trading day. [Exchanges] lists
// them with time zone, country, currency and regular session.
//
// # Range and errors
//
// Holidays are known for [MinYear] to [MaxYear] (1990-2100).
// [Calendar.Holidays] and [Calendar.Sessions] return an error wrapping
// [tradekit.ErrInvalid] for a year outside that range or an invalid date;
// nothing in the package panics on user input. The single-day methods
// treat a weekday outside the range as a trading day.
//
// # Method
//
// Each exchange is a function from a year to the list of its holidays:
// fixed dates, n-th weekdays, Easter-based days, weekend observance
// shifts, substitute days, and a table of one-off events. The list is
// cut to weekdays, sorted, deduplicated (a closure wins over an early
// close on the same date) and memoised per calendar and year behind a
// sync.Once, with a bitset per year for the day checks; [Calendar.Holidays]
// returns a copy. The calendars are shared, immutable values, safe for
// concurrent use.
//
// Easter is computed with the anonymous Gregorian algorithm (Meeus,
// Astronomical Algorithms, ch. 8). Japan's equinox days use the published
// approximation
//
//	day = floor(C + 0.242194*(y-1980) - floor((y-1980)/4))
//
// with C = 20.8431 (March) and 23.2488 (September) for 1980-2099, and
// 21.8510 and 24.2488 for 2100. Ching Ming (the Qingming solar term) uses
// floor(Y*0.2422 + C) - floor(Y/4) with Y the year within the century and
// C = 5.59 (1900s) or 4.81 (2000s). Chinese lunar dates come from a
// compact table of month lengths and leap months for lunar years
// 1990-2100, in the encoding widely used for the Hong Kong Observatory's
// Gregorian-Lunar conversion tables
// (https://www.hko.gov.hk/en/gts/time/conversion.htm), anchored at lunar
// new year 1990-01-27; the derived new-year dates are tested against the
// Observatory's list for 1990-2050.
//
// # Rules by exchange
//
// NYSE and NASDAQ (09:30-16:00 America/New_York; NYSE Rule 7.2, the NYSE
// holiday pages https://www.nyse.com/markets/hours-calendars and the
// NYSE closings history). Closed on New Year's Day (Sunday moves to
// Monday; a Saturday New Year's Day is not observed on the Friday before),
// Martin Luther King Jr. Day (third Monday of January, from 1998),
// Washington's Birthday (third Monday of February), Good Friday, Memorial
// Day (last Monday of May), Juneteenth (June 19, from 2022), Independence
// Day (July 4), Labor Day (first Monday of September), Thanksgiving
// (fourth Thursday of November) and Christmas Day; Juneteenth,
// Independence Day and Christmas Day on a Saturday are observed on the
// Friday before, on a Sunday on the Monday after. One-off closures: 1994-04-27 (Nixon), 2001-09-11 to
// 14, 2004-06-11 (Reagan), 2007-01-02 (Ford), 2012-10-29/30 (Hurricane
// Sandy), 2018-12-05 (G. H. W. Bush), 2025-01-09 (Carter). Early closes
// at 13:00 (14:00 until 1992): the day after Thanksgiving (from 1992);
// Christmas Eve, Monday to Thursday; July 3 when July 4 is a Tuesday,
// Wednesday or Friday (from 1995), and when July 4 is a Thursday the
// Friday after (1996-2012) or the Wednesday before (from 2013); and
// 1997-12-26 and 2003-12-26. Weather late openings and intraday halts are
// not modelled.
//
// LSE (08:00-16:30 Europe/London; the bank holidays of England and Wales,
// https://www.gov.uk/bank-holidays, and the LSE's trading notices).
// Closed on New Year's Day (weekend to Monday), Good Friday, Easter
// Monday, the early May bank holiday (first Monday of May; VE Day, May 8,
// instead in 1995 and 2020), the spring bank holiday (last Monday of May;
// moved to 2002-06-04, 2012-06-04 and 2022-06-02 for the jubilees), the
// summer bank holiday (last Monday of August), Christmas Day and Boxing
// Day with substitute days (Christmas on Saturday: Monday 27 and Tuesday
// 28; on Sunday: Tuesday 27; Boxing Day on Saturday: Monday 28).
// One-offs: 1999-12-31 (Millennium), 2002-06-03 (Golden Jubilee),
// 2011-04-29 (Royal Wedding), 2012-06-05 (Diamond Jubilee), 2022-06-03
// (Platinum Jubilee), 2022-09-19 (State Funeral of Queen Elizabeth II),
// 2023-05-08 (Coronation). Half days at 12:30 on Christmas Eve and New
// Year's Eve, or the Friday before when they fall on a weekend.
//
// XETRA (09:00-17:30 Europe/Berlin; Deutsche Börse trading calendars,
// https://www.xetra.com). Closed on New Year's Day, Good Friday, Easter
// Monday, Labour Day (May 1), Christmas Eve, Christmas Day, Boxing Day and
// New Year's Eve, never moved off a weekend; also Whit Monday in 2007 and
// 2015-2021, German Unity Day (October 3) 2014-2021 and Reformation Day
// 2017-10-31. From 2010 the last trading day before New Year's Eve closes
// at 14:00. Before 2000 the same list is applied; the Frankfurt floor's
// additional closures of the 1990s are not modelled.
//
// TSX (09:30-16:00 America/Toronto; TMX trading calendars,
// https://www.tsx.com). Closed on New Year's Day and Canada Day (weekend
// to Monday), Family Day (third Monday of February, from 2008), Good
// Friday, Victoria Day (the Monday before May 25), the Civic Holiday
// (first Monday of August), Labour Day, Thanksgiving (second Monday of
// October), Christmas Day and Boxing Day (substitute days as for the LSE),
// and 2001-09-11/12. Christmas Eve on a weekday closes at 13:00 from 2010.
//
// ASX (10:00-16:10 Australia/Sydney, closing auction included; ASX
// trading calendars, https://www.asx.com.au). Closed on New Year's Day
// and Australia Day (January 26, weekend to Monday; before 1994 the Monday
// on or after January 26), Good Friday, Easter Monday, Anzac Day (April
// 25, not moved off a weekend), the King's/Queen's Birthday (second Monday
// of June), Christmas Day and Boxing Day (substitute days as for the
// LSE), and 2022-09-22 (National Day of Mourning). Early close at 14:10 on
// the last business day before Christmas and the last business day of the
// year.
//
// JPX (09:00-15:30 Asia/Tokyo, lunch break not modelled; JPX market
// holidays https://www.jpx.co.jp/english/corporate/about-jpx/calendar/ and
// the Cabinet Office's national-holiday tables). Closed on Japan's
// national holidays and on December 31 to January 3. National holidays:
// New Year's Day; Coming of Age Day (January 15, second Monday of January
// from 2000); National Foundation Day (February 11); the Emperor's
// Birthday (December 23 until 2018, February 23 from 2020); the vernal
// and autumnal equinox days; Greenery Day / Showa Day (April 29, named
// Showa Day from 2007); Constitution Memorial Day (May 3); Greenery Day
// (May 4, from 2007); Children's Day (May 5); Marine Day (July 20 from
// 1996, third Monday of July from 2003); Mountain Day (August 11, from
// 2016); Respect for the Aged Day (September 15, third Monday of
// September from 2003); Health and Sports Day (October 10, second Monday
// of October from 2000, "Sports Day" from 2020); Culture Day (November 3);
// Labour Thanksgiving Day (November 23); the Olympic moves of 2020 (July
// 23, 24, August 10) and 2021 (July 22, 23, August 8); and the special
// holidays of 1990-11-12, 1993-06-09, 2019-05-01 and 2019-10-22. A
// holiday on a Sunday gives a substitute holiday on the Monday (until
// 2006, only if that Monday is not already a holiday) or, from 2007, on
// the next day that is not a holiday; a day between two holidays is a
// "citizens' holiday". JPX's own closure on 2020-10-01 (system failure)
// is included.
//
// HKEX (09:30-16:00 Asia/Hong_Kong, lunch break not modelled; the
// General Holidays Ordinance, gov.hk general-holiday lists and HKEX's
// trading calendars). Closed on the general holidays: January 1; the
// first three days of the Lunar New Year (when one of them is a Sunday,
// the day before Lunar New Year's Day until 2010, the fourth day from
// 2011); Ching Ming (the day after Easter Monday when they coincide); Good
// Friday; Easter Monday; Labour Day and the Buddha's Birthday (4th month,
// 8th day), both from 1999; Tuen Ng (5th month, 5th day); HKSAR
// Establishment Day (July 1) and National Day (October 1), from 1997; the
// day after the Mid-Autumn Festival (8th month, 15th day; the festival day
// itself when that is a Sunday, until 2010; the next day when it falls on
// National Day); Chung Yeung (9th month, 9th day); Christmas Day and the
// first weekday after it (Saturday counts as a weekday). A general holiday
// on a Sunday gives the next day that is not a holiday, except the Lunar
// New Year days, which have their own rule. Before 1997 the colonial
// Queen's Birthday (third Monday of June; second in 1993 and 1994) and
// Liberation Day (last Monday of August) are used, with the handover
// closures of 1997-1998, 1999-12-31 and 2015-09-03 as one-offs; the dates
// before 1999 follow pandas_market_calendars' HKEX history and are the
// least certain part of the package. Half days (close 12:00) on the eves
// of Lunar New Year, Christmas and New Year when they are trading days.
// Typhoon and rainstorm closures are unscheduled and not modelled.
//
// The lunar table's entries for 2057 and 2060 differ between published
// copies of the encoding (in month lengths only, not in year lengths, so
// the new-year dates agree); the festival dates of those two years may be
// a day off.
package calendar
