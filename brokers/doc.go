// Package brokers is Tradekit's vocabulary of brokerage: the domain types
// (an account's balances, its positions, its fills, its daily equity) and
// [Broker], what Tradekit needs of one user's account at a broker. It is
// pure: no database, no network, money and quantities as
// [decimal.Decimal], so that Go programs can use it on their own.
//
// The work is done in subpackages:
//
//	brokers/alpaca   the client of Alpaca's Trading API v2 dialect (OAuth 2.0 and
//	                 /v2/account, /v2/positions, /v2/orders, /v2/account/portfolio/history)
//	brokers/paper    Tradekit's own paper broker, which speaks that same dialect over HTTP
//	brokers/connect  broker connections: the OAuth flow, encrypted tokens, sync, portfolios
//
// Both brokers are reached through brokers/alpaca over real HTTP, so the
// built-in paper broker exercises the very code path a real broker does.
//
// Conventions: quantities are positive for long positions and negative for
// short ones; prices and money are in the account's currency; times are
// UTC.
package brokers
