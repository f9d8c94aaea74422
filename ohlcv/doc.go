// Package ohlcv holds the one form in which Tradekit passes price bars
// around: [Series], an asset's open, high, low, close and volume as
// float64 columns with their dates, oldest first, and [Timeframe], the bar
// length of daily, weekly and monthly series.
//
// Columns rather than rows, because every consumer works on whole
// columns: the indicator functions take []float64, the formula evaluator
// runs one vector operation per node over a column, and the analytics
// profiles read closes and highs as arrays. A price history is converted
// from its stored decimals into a Series once per price change
// (marketdata.Store.PriceColumns) and shared read-only after that.
//
// Dates are [calendar.Date] values: trading days in the exchange's own
// time zone, with no time of day, so no conversion or location can shift a
// bar to another day.
//
// # Resampling
//
// [Series.Resample] turns daily bars into weekly or monthly ones. A weekly
// bar covers one ISO 8601 week (Monday to Sunday; 2021-01-01, a Friday,
// belongs to the week of Monday 2020-12-28), a monthly bar one calendar
// month. Each takes the first open, the highest high, the lowest low, the
// last close and the summed volume of the days it holds, and is dated on
// the last day present (the last trading day, not the calendar end). A
// period without bars is absent; the last period may still be forming.
package ohlcv
