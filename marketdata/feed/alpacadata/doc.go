// Package alpacadata is the [feed.Provider] of Alpaca's market-data API,
// written from its public documentation: daily bars of many symbols a
// request (/v2/stocks/bars, timeframe=1Day, adjustment=raw, following
// next_page_token) and splits and cash dividends (/v1/corporate-actions),
// with the APCA-API-KEY-ID and APCA-API-SECRET-KEY headers.
//
// Alpaca answers for the symbols asked, so this provider updates the
// assets the database holds; it creates none.
//
//	p, err := alpacadata.New(alpacadata.Config{KeyID: id, SecretKey: secret})
//	bars, err := p.DayBars(ctx, calendar.NewDate(2026, 11, 27), []string{"AAPL", "MSFT"})
package alpacadata
