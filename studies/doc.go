// Package studies computes indicator series of the assets in the database:
// the named indicators of the API with validated parameters, their latest
// values across timeframes, and users' custom indicators written in the
// indicators/formula language.
//
// # Method
//
// A series is always computed over the asset's whole daily history, from
// its first bar, and only then cut to the dates asked for. Recursive
// indicators (EMA, RSI, ATR, MACD) thus start from the same seed whatever
// the request, so the value at a date depends only on the prices up to it,
// never on the requested range. Values follow the indicators package, which
// matches TA-Lib's C library.
//
// Weekly and monthly series resample the daily bars with
// ohlcv.Series.Resample (ISO weeks, calendar months; first open, highest
// high, lowest low, last close, summed volume) and date each bar on the
// last trading day it holds; the current week or month is included while
// it is still forming.
//
// # Parameters
//
// [ParseSpec] reads the API's params object (docs/conventions.md,
// "Indicator parameters"): period for SMA,
// EMA, RSI, ATR (defaults 20, 20, 14, 14); fastPeriod, slowPeriod and
// signalPeriod for MACD (12, 26, 9); period and stdDev for BB (20, 2).
// Periods are integers from 1 to 1000 (2 to 1000 for RSI); stdDev is above
// 0 and at most 10. Errors name the parameter.
//
// # Caching
//
// [Service] caches each asset's price columns and each computed series in
// a least-recently-used cache bounded in bytes, keyed by the asset's price
// version (marketdata.Store.PriceVersion), which every price write bumps.
// A request reads that version (one small query), so a change of prices
// through any server instance invalidates every instance's entries at once.
//
// Every method takes adjusted: false computes over the prices as traded,
// true over the prices back-adjusted for splits and dividends
// (marketdata.Adjust, the CRSP/Yahoo convention), under cache keys of their
// own. An adjusted series depends on the corporate actions as well as on
// the prices; rather than a second version to read and announce, saving
// actions (marketdata.Store.SaveActions) bumps the asset's price version
// and sends the same notification a price write does. So the one version
// stays the key of everything computed from an asset, traded or adjusted,
// in every instance: a cache can never pair an old adjustment with a new
// price version. The cost is that a change of actions also recomputes the
// traded series of that asset, which is rare and cheap.
// On PostgreSQL, [Service.Watch] saves that query: it keeps the versions in
// memory and learns of changes from notifications the price writes send,
// about a millisecond after they commit (see marketdata.Versions for how it
// stays safe when notifications are lost).
//
//	svc := studies.New(db, studies.Config{})
//	spec, err := studies.ParseSpec("RSI", `{"period":14}`)
//	out, _, err := svc.Series(ctx, assetID, true, spec, ohlcv.Daily) // adjusted
//	year := out.Window(calendar.NewDate(2025, 1, 1), calendar.NewDate(2025, 12, 31))
package studies
