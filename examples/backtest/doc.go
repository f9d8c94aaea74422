// Command backtest runs a strategy written in Tradekit's formula language
// over a universe of assets with the backtest package, prints its
// tearsheet beside buying and holding, and draws the equity and drawdown
// in a PNG. It uses the library alone: no database, no server.
//
//	go run ./examples/backtest                    # the demo index TKXUS15's point-in-time members
//	go run ./examples/backtest -index TKXGL25 -max-positions 10 -stop-loss 8 -png global.png
//	go run ./examples/backtest -symbols QNTC,NWSC -entry 'crossover(ema(close, 20), ema(close, 50))' \
//	    -exit 'crossunder(ema(close, 20), ema(close, 50))' -max-positions 2
//	go run ./examples/backtest -csv prices.csv -max-positions 1   # your own daily bars of one asset
//
// The demo indexes are TKXUS15, TKXEU6, TKXAP8 and TKXGL25; -symbols
// takes any demo symbols (after `tradekit seed`, GET
// /api/v1/market-data/assets lists them). An index's members enter only
// while they belong to it and are sold after they leave, so the results
// carry no survivorship bias. The days are the exchange calendar's
// sessions when all members share one. The CSV is the one `tradekit
// import prices` reads: a header row and the columns date, open, high,
// low, close and volume, in any order.
//
// Rules (see package backtest): a signal at a bar's close fills at the
// next open, with -slippage and -commission in basis points; positions
// are -position-pct of equity (default an equal share of
// -max-positions). Without -csv the prices are the demo set's, which are
// SYNTHETIC. The tearsheet's formulas are in the backtest package's
// documentation.
package main
