// Package tradekit is the root of Tradekit, an open Go toolkit for market
// data, technical analysis and trading support.
//
// The root package holds only the shared vocabulary: the error kinds that
// every other package wraps ([ErrNotFound], [ErrInvalid], [ErrConflict],
// [ErrRejected], [ErrUnauthorized], …), the two error types whose messages
// are written for end users ([ParamError] names a bad parameter, [Error]
// carries a kind and a message), the one way every surface reports an
// error ([Code] names its kind, [Message] says what users read, [Param]
// and [Details] what a program may act on), and [Quote], which keeps a
// message that echoes user input short. The work is done in subpackages:
//
//	calendar             exchange trading days and holidays computed by rule (pure; the lowest package)
//	indicators           TA-Lib compatible indicators over []float64, batch and streaming
//	indicators/formula   the custom-indicator language
//	ohlcv                price bars as columns (the one bar type), timeframes, resampling
//	marketdata           assets, industries, indexes, exchanges, daily prices
//	marketdata/demo      the deterministic, synthetic demo universe
//	profiles             per-asset analytics profiles (regimes, volatility, seasonality, …)
//	profiles/profiledb   building the profiles of a database's assets, and their store
//	studies              indicator series of stored assets, custom indicators, their cache
//	backtest             the portfolio backtest engine, its tearsheet and the strategy hash
//	backtest/backtestdb  backtests of a database's assets, and their results
//	brokers              orders and the pre-trade guardrail checks; the broker interfaces
//	brokers/alpaca       the client of Alpaca's Trading API v2
//	brokers/connect      broker connections, syncs, portfolios, order placement
//	brokers/paper        the built-in paper broker: its engine and Alpaca-dialect API
//	brokers/paper/portal the paper broker's OAuth server, consent and account pages
//	copytrading          leaders, follows, auto-sync, notifications, strategies
//	knowledge            blog, glossary and roadmap from an embedded content pack
//	billing              accounts, API keys, plans and rate limits; passwords and sessions
//	dashboard            the account dashboard served under /dashboard/ (sign-in, members,
//	                     usage, API keys, brokers, copy trading)
//	server               the /api/v1 HTTP JSON interface
//	cmd/tradekit         the tradekit binary
//
// Dependencies point one way: cmd → server → domain packages → internal and
// this package; copytrading sits above brokers and marketdata. Pure engines
// (indicators, formula, calendar, ohlcv, profiles, the brokers checks,
// backtest)
// import no database package, no net/http and no log, so they can be used
// on their own; a test (purity_test.go) enforces it.
package tradekit
