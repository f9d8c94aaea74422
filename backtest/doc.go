// Package backtest runs a trading strategy over the daily bars of a
// universe of assets and reports the equity curve, every trade and a
// tearsheet, beside a buy-and-hold benchmark. It is pure: no database,
// network, clock or log.
//
// # Strategies
//
// A [Strategy] has an entry and an exit formula in the formula language
// (package indicators/formula), a position size in percent of equity, at
// most MaxPositions positions at once, an optional stop-loss and
// take-profit in percent of the entry price, and costs: commission and
// slippage in basis points. [Strategy.Compile] checks it and fills in the
// defaults. Its canonical JSON form ([Compiled.Canonical]: every field,
// defaults filled in, the formulas as the formula package prints them)
// gives the strategy hash ([Compiled.Hash]), its SHA-256 in hex, under
// which Tradekit keeps results and publishes strategies.
//
// # Trusting the results
//
//   - No look-ahead. A formula's value at a bar depends on that bar and
//     the bars before it only; a signal at a bar's close fills at the
//     asset's next open; a position's size is a share of the equity at the
//     previous close. Running on the same bars cut after any day gives the
//     same equity and trades up to the day before (the package's tests
//     check this).
//   - No survivorship bias. An [Asset] carries its membership periods
//     (an index's point-in-time constituents): it is entered only while a
//     member, a position is sold at the next open after it leaves, and an
//     asset whose bars end early (delisted) is sold at its last close. Its
//     trades stay in the results.
//   - Costs. Every fill moves against the trader by the slippage and pays
//     the commission on its value.
//   - Calendar. The days are the exchange calendar's sessions
//     ([Config.Days]) or the assets' dates; an asset without a bar on a
//     day (a halt, or not listed yet) neither trades nor signals that day,
//     and its last close values its position.
//
// [Run] documents the order of events within a day. Quantities are
// fractional units and money is float64: the engine is a research tool,
// not a ledger.
//
// # The tearsheet
//
// With E₀ the starting cash, E_t the equity at day t's close, r_t =
// E_t / E_{t−1} − 1 the daily returns (E_{−1} = E₀), and Y the calendar
// years from the first to the last day (days / 365.25):
//
//	total return   E_T / E₀ − 1
//	CAGR           (E_T / E₀)^(1/Y) − 1
//	volatility     sd(r) × √252                      (sample standard deviation)
//	Sharpe         mean(r) / sd(r) × √252            (risk-free rate 0)
//	Sortino        mean(r) / √(mean(min(r,0)²)) × √252
//	max drawdown   min_t (E_t / max_{s≤t} E_s − 1)   (max over E₀ too)
//	its duration   the most consecutive days ending below a previous high
//	Calmar         CAGR / |max drawdown|
//	win rate       winning trades / trades           (a trade wins when PnL > 0)
//	profit factor  Σ winners' PnL / |Σ losers' PnL|
//	expectancy     mean PnL of a trade (money); AvgTradeReturn, mean return
//	exposure       days ending with a position / days
//	turnover       (Σ fill values / 2) / mean(E) / Y (yearly)
//
// A trade's PnL is its exit value less its commission and less its entry
// cost (the entry's value and commission); its return is PnL over that
// entry cost.
package backtest
