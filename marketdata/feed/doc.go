// Package feed keeps market data current from a vendor: it fetches the
// daily bars of every trading day of a range by the exchange calendar,
// the reference data of assets it does not know yet, and the splits and
// cash dividends of the range, and stores them through the same path as
// `tradekit import` ([github.com/tradekit/tradekit/marketdata/bulk.Import],
// [marketdata.Store.SaveAsset], [marketdata.Store.SaveActions]), so
// adjusted series, profiles and alerts follow.
//
// A [Provider] is one vendor's client; the packages massive and
// alpacadata implement it. A [Runner] runs a provider over a range, records
// each run and each day in the database, and refetches a failed day on the
// next run. [Store.Acquire] is the lease that lets one instance at a time
// run a provider's daily feed.
//
//	p, err := massive.New(massive.Config{APIKey: key})
//	…
//	r := &feed.Runner{DB: db, Provider: p}
//	res, err := r.Run(ctx, calendar.NewDate(2026, 11, 2), calendar.NewDate(2026, 11, 30))
//	…
//	fmt.Println(res) // massive: 20 trading days from 2026-11-02 to 2026-11-30: 20 fetched, …
//	if err := res.Err(); err != nil { … } // the days not stored, fetched again by the next run
package feed
