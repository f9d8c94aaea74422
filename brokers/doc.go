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
//
// # Pre-trade checks
//
// [Order.Validate] checks an order's own invariants, and [Check] checks it
// against a user's [Guardrails] in a [Context]: the latest stored price
// and ATR(14) of its asset, the account's equity and open positions
// ([Held]), and the orders accepted today. Both are pure functions of
// plain values; a program loads the values, checks, and then submits or
// refuses:
//
//	if err := o.Validate(); err != nil {
//		return err // a *tradekit.ParamError, wrapping tradekit.ErrInvalid
//	}
//	r, err := brokers.Check(o, g, brokers.Context{Price: last, ATR: atr, Equity: eq, Positions: held, TradesToday: n})
//	if err != nil {
//		return err // the stop-loss is on the wrong side of the price, or there is no price
//	}
//	if err := r.Err(); err != nil {
//		return err // a *brokers.RejectedError, wrapping tradekit.ErrRejected
//	}
//
// Check evaluates every rule, passing or not, so that a preview can show
// each one's limit and actual value ([Result.Rules]); [Result.Violations]
// lists the broken ones. With q the order's signed quantity (negative for
// a sell), P its execution price (the limit price of a limit order, else
// Context.Price), H the quantity held in its symbol and E the equity, the
// rules are:
//
// maxDailyTrades: the orders accepted today, this one included, where
// today is the UTC day ([UTCDay]); every order counts, buy or sell:
//
//	TradesToday + 1 <= MaxDailyTrades
//
// maxPositionSizePct: the position in the order's symbol after the order,
// valued at P, in percent of equity:
//
//	|H + q| × P / E × 100 <= MaxPositionSizePct
//
// An order that does not grow the position (|H + q| <= |H|) always
// passes: a size limit never keeps a trader from cutting a position that
// has grown past it.
//
// maxPortfolioRiskPct: what the portfolio loses if every open position
// and the order exit at their stop-loss, in percent of equity:
//
//	sum_i risk(q_i, p_i, stop_i, atr_i) / E × 100 <= MaxPortfolioRiskPct
//
// where the risk of q units at price p is
//
//	with a stop:    |q| × max(0, p − stop)    for a long (q > 0)
//	                |q| × max(0, stop − p)    for a short (q < 0)
//	without a stop: |q| × min(p, 2 × ATR)     when ATR(14) is known
//	                |q| × p × 10 / 100        when it is not (zero)
//
// Held positions count at their latest price, stop and ATR. The order's
// own units count at P, its stopLossPrice and Context.ATR. An order
// against the held position (a sell of a long, a buy of a short) first
// takes that many units out of it, so its risk shrinks in proportion, and
// only the units beyond it, which open the other side, add risk of their
// own. An order that does not add risk always passes.
//
// Without a stop, the loss assumed is the usual volatility stop, two
// average true ranges ([DefaultStopATRs]), which is where such a stop
// would stand; no long can lose more than its price, hence the cap at p,
// which applies to shorts alike.
// When the ATR is unknown, 10 % of the price ([FallbackStopPct]) stands
// in: that is about twice the 2 × ATR(14) of a large stock, so missing data
// overstates the risk rather than hiding it.
//
// stopLossRequired: when on, a buy must carry a stopLossPrice (sells are
// not asked for one). Whether or not the rule is on, [Check] refuses, with
// a *tradekit.ParamError for "stopLossPrice", a stop that is not below P
// for a buy or not above P for a sell.
//
// allowedAssetTypes: the order's AssetType is one of AllowedAssetTypes; an
// empty list allows none.
//
// A zero MaxDailyTrades, MaxPositionSizePct or MaxPortfolioRiskPct means
// no limit, and its rule always holds. When E <= 0 no percentage can be
// computed: PositionPct and RiskPct are reported as zero, and the two
// percent rules fail, unless they have no limit or the order shrinks
// the position or the risk. Limits are compared exactly (|H + q| × P × 100
// against limit × E, say); the percentages reported are rounded to
// [PctPlaces] decimal places with [decimal.Decimal.DivRound]. No
// shopspring/decimal package setting is read or written.
package brokers
