// Package backtestdb runs backtests over a database's assets and keeps
// their results: [Load] builds a universe of stored assets (symbols, or
// an index with its point-in-time members) with their prices and the
// exchange calendar's sessions, [Run] runs a strategy over it into a
// result as the API serves it, bounded in size (see [MaxEquityPoints]
// and [MaxTrades]), [Store] keeps one result per user and strategy
// hash, and [Service] runs backtests for an API's users within their
// plan's bounds: results kept per account and backtests running at once.
package backtestdb
