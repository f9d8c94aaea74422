// Package massive is the [feed.Provider] of Massive (formerly Polygon.io),
// written from its public REST documentation: grouped daily aggregates
// (one request a day for the whole US stock market, raw prices), the
// tickers reference for new assets, and splits and dividends, following
// next_url pagination.
//
//	p := massive.New(massive.Config{APIKey: os.Getenv("TRADEKIT_MASSIVE_API_KEY")})
//	bars, err := p.DayBars(ctx, calendar.NewDate(2026, 11, 27), nil)
package massive
