// Command backtest runs a long-only daily strategy written in Tradekit's
// formula language over one asset's prices and compares it with buying
// and holding. It uses the library alone: no database, no server.
//
//	go run ./examples/backtest                                 # demo data, the first demo stock
//	go run ./examples/backtest -symbol QNTC -entry 'crossover(ema(close, 20), ema(close, 50))' \
//	    -exit 'crossunder(ema(close, 20), ema(close, 50))'
//	go run ./examples/backtest -csv prices.csv                 # your own daily bars
//
// -symbol takes any symbol of the demo set (QNTC is a NASDAQ stock of it;
// after `tradekit seed`, GET /api/v1/market-data/assets lists them all).
// The CSV is the one `tradekit import prices` reads: a header row and the
// columns date, open, high, low, close and volume, in any order.
//
// Rules: the entry and exit formulas are evaluated on every bar's close;
// a signal (a non-zero value) at bar t trades at the open of bar t+1, so no
// decision uses a price it could not have seen. Each trade pays -cost basis
// points of its value. Without -csv the prices are the demo set's, which are
// SYNTHETIC.
package main
