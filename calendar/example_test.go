package calendar_test

import (
	"fmt"

	"github.com/tradekit/tradekit/calendar"
)

func ExampleCalendar_Holidays() {
	nyse, _ := calendar.Lookup("NYSE")
	hs, err := nyse.Holidays(2024)
	if err != nil {
		panic(err)
	}
	for _, h := range hs {
		fmt.Println(h.Date, h.Type, h.Close, h.Name)
	}
	// Output:
	// 2024-01-01 closed  New Year's Day
	// 2024-01-15 closed  Martin Luther King Jr. Day
	// 2024-02-19 closed  Washington's Birthday
	// 2024-03-29 closed  Good Friday
	// 2024-05-27 closed  Memorial Day
	// 2024-06-19 closed  Juneteenth National Independence Day
	// 2024-07-03 early_close 13:00 Day before Independence Day
	// 2024-07-04 closed  Independence Day
	// 2024-09-02 closed  Labor Day
	// 2024-11-28 closed  Thanksgiving Day
	// 2024-11-29 early_close 13:00 Day after Thanksgiving
	// 2024-12-24 early_close 13:00 Christmas Eve
	// 2024-12-25 closed  Christmas Day
}

func ExampleCalendar_Next() {
	lse, _ := calendar.Lookup("xlon") // symbol or MIC, any case
	d := calendar.Date{Year: 2022, Month: 12, Day: 23}
	fmt.Println(lse.IsTradingDay(d), lse.Next(d), lse.Previous(d))
	at, _ := lse.CloseTime(d)
	fmt.Println(at)
	// Output:
	// true 2022-12-28 2022-12-22
	// 12:30
}

func ExampleCalendar_Sessions() {
	hkex, _ := calendar.Lookup("HKEX")
	days, err := hkex.Sessions(calendar.Date{Year: 2025, Month: 1, Day: 27}, calendar.Date{Year: 2025, Month: 2, Day: 4})
	if err != nil {
		panic(err)
	}
	fmt.Println(days)
	// Output:
	// [2025-01-27 2025-01-28 2025-02-03 2025-02-04]
}

func ExampleLookup() {
	for _, code := range []string{"JPX", "XHKG", "crypto", "XXXX"} {
		c, ok := calendar.Lookup(code)
		if !ok {
			fmt.Println(code, "unknown")
			continue
		}
		e := c.Exchange()
		fmt.Println(e.Symbol, e.MIC, e.TimeZone, e.Open+"-"+e.Close)
	}
	// Output:
	// JPX XJPX Asia/Tokyo 09:00-15:30
	// HKEX XHKG Asia/Hong_Kong 09:30-16:00
	// CRYPTO  UTC 00:00-24:00
	// XXXX unknown
}
