// Package universe builds backtest universes from the demo data set or a
// CSV file, for the examples.
//
// A [Universe] holds the assets (with their daily bars) and the days a
// backtest steps through: the exchange calendar's sessions when every
// asset trades on one calendar. [Demo] reads the synthetic demo data set,
// back-adjusted for its splits and dividends, as the API's backtests are
// by default; [CSV] reads one asset from a file in the format of
// `tradekit import prices`.
//
//	u, err := universe.Demo("TKXUS15", "") // an index's members over time
//	u, err := universe.CSV("prices.csv")
package universe
