package marketdata_test

import (
	"fmt"
	"strings"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

func ExampleReadPricesCSV() {
	csv := `Date,Open,High,Low,Close,Adj Close,Volume
2024-01-02,187.15,188.44,183.89,185.64,184.94,82488700
2024-01-03,184.22,185.88,183.43,184.25,183.55,58414500
`
	bars, err := marketdata.ReadPricesCSV(strings.NewReader(csv))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, b := range bars {
		fmt.Println(b.Date, b.Open, b.High, b.Low, b.Close, b.Volume)
	}
	_, err = marketdata.ReadPricesCSV(strings.NewReader("date,open,high,low,close,volume\n2024-01-02,10,9,8,10,1\n"))
	fmt.Println(err)
	// Output:
	// 2024-01-02 187.15 188.44 183.89 185.64 82488700
	// 2024-01-03 184.22 185.88 183.43 184.25 58414500
	// line 2: 2024-01-02: high 9 is below open 10 or close 10
}

func ExamplePriceID() {
	asset := marketdata.AssetID("ACME")
	id := marketdata.PriceID(asset, calendar.Date{Year: 2024, Month: 1, Day: 2})
	fmt.Println(asset)
	fmt.Println(id, id.Version())
	fmt.Println(marketdata.PriceID(asset, calendar.Date{Year: 2024, Month: 1, Day: 3}) != id)
	// Output:
	// b09fcd01-9c34-541d-ba73-f0aa633f9d97
	// b09fcd01-9c34-841d-ba73-f0aa0000b0eb VERSION_8
	// true
}

func ExampleHolidays() {
	nyse := marketdata.Exchange{ID: marketdata.ExchangeID("NYSE"), Symbol: "NYSE"}
	hs, _ := marketdata.Holidays(nyse, marketdata.HolidaysEarlyClose, 2025)
	for _, h := range hs {
		fmt.Println(h.Date, h.Name, h.Close)
	}
	// Output:
	// 2025-07-03 Day before Independence Day 13:00
	// 2025-11-28 Day after Thanksgiving 13:00
	// 2025-12-24 Christmas Eve 13:00
}
