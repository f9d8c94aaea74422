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
// and ATR(14) of its asset, the account's equity, its open positions
// ([Held]) and its open orders ([Reservation]), and the orders accepted
// today. Both are pure functions of plain values; a program loads the
// values, checks, and then submits or refuses:
//
//	if err := o.Validate(); err != nil {
//		return err // a *tradekit.ParamError, wrapping tradekit.ErrInvalid
//	}
//	r, err := brokers.Check(o, g, brokers.Context{Price: last, ATR: atr, Equity: eq,
//		Positions: held, Open: open, TradesToday: n})
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
// rules are as follows.
//
// Open orders (Context.Open) are counted at their worst: any of them may
// fill at any moment, so an open order that would grow a position counts
// as if it had filled; and any of them may be cancelled, so an open order
// that would shrink a position never frees room for another. Each open
// order holds its room from the moment it is accepted until it is filled,
// cancelled, rejected or expires. So a program that adds every order it
// accepts to Open, and places the same buy of s percent of equity again
// and again with nothing held, gets floor(MaxPositionSizePct / s) of them
// accepted, however fast it places them. With Open empty, W = H below and
// no open order adds risk: the results are those of the held positions
// alone.
//
// maxDailyTrades: the orders accepted today, this one included, where
// today is the UTC day ([UTCDay]); every order counts, buy or sell:
//
//	TradesToday + 1 <= MaxDailyTrades
//
// maxPositionSizePct: the worst-case position in the order's symbol after
// the order, valued at P, in percent of equity. The worst case before the
// order is the held quantity plus every open order in the symbol on the
// order's side (buys for a buy, sells for a sell), each with its signed
// Quantity v_j:
//
//	W = H + sum_j {v_j : symbol_j = the order's symbol, sign(v_j) = sign(q)}
//	|W + q| × P / E × 100 <= MaxPositionSizePct
//
// Open orders on the other side are left out: they may be cancelled. An
// order that does not grow the worst-case position (|W + q| <= |W|)
// always passes: a size limit never keeps a trader from cutting a
// position that has grown past it. [Result.Exposure] is W + q, and
// [Result.PositionPct] its percentage; [Result.Position] is H + q, the
// position after this order alone. With no open orders W = H, and
// Exposure is Position.
//
// maxPortfolioRiskPct: what the portfolio loses if every open position,
// every open order that grows a position, and the order exit at their
// stop-loss, in percent of equity:
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
// Held positions count at their latest price, stop and ATR. An open order
// counts, with its signed Quantity, at its reserved Price, its
// StopLossPrice and its ATR, when it grows its symbol's position: when
//
//	sign(Quantity) = sign(H_s)  or  H_s = 0
//
// with H_s the quantity held in its symbol (whatever the order's symbol).
// An open order against the held position (a sell of a long, a buy of a
// short) adds nothing, whatever its size: filled, it would lower the
// risk; cancelled, it would leave it as it is.
//
// The order's own units count at P, its stopLossPrice and Context.ATR.
// An order against the held position first takes that many units out of
// it, so its risk shrinks in proportion, and only the units beyond it,
// which open the other side, add risk of their own. With R_held the sum
// over the held positions and R_open the sum over the open orders
// counted, the risk before and after the order is
//
//	before = R_held + R_open
//	after  = R_held − risk(H) + risk(rest) + risk(new) + R_open
//
// where rest, what stays of the held position, and new, what the order
// opens, are
//
//	rest = H,     new = q       when the order grows the position (or H = 0)
//	rest = H + q, new = 0       when it shrinks it without turning it around
//	rest = 0,     new = H + q   when it turns it around
//
// (risk(H) and risk(rest) at the held position's price, stop and ATR).
// An order that does not add risk (after <= before) always passes.
// [Result.Risk] is after, and [Result.RiskPct] its percentage.
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
// heldQuantity: not a guardrail of the user's, but what the account can
// do. Where it cannot sell short (Context.CanShort false, the zero value,
// as a cash account's), a sell may not exceed what is held and not
// already offered by open sells in the symbol, V_s their quantity:
//
//	|q| <= max(0, H − V_s)
//
// Its Limit is that available quantity, its Actual |q|. A broker would
// refuse such an order; the check says why before it is sent. A buy, or
// any order of an account that can short, passes.
//
// A zero MaxDailyTrades, MaxPositionSizePct or MaxPortfolioRiskPct means
// no limit, and its rule always holds. When E <= 0 no percentage can be
// computed: PositionPct and RiskPct are reported as zero, and the two
// percent rules fail, unless they have no limit or the order shrinks the
// worst-case position or the risk. Limits are compared exactly (|W + q| ×
// P × 100 against limit × E, say); the percentages reported are rounded to
// [PctPlaces] decimal places with [decimal.Decimal.DivRound]. No
// shopspring/decimal package setting is read or written.
package brokers
