// Package copytrading lets users publish a portfolio as a leader profile,
// follow leaders, mirror their trades (auto-sync), and publish strategies.
// It sits above packages brokers and marketdata, which never import it.
//
// # Statistics
//
// A leader's figures come from the portfolio's daily equity as its
// broker reports it (package brokers/connect keeps it), never from the
// user's word: a profile is verified when its portfolio belongs to a
// broker connection. The demo leaders ([LoadDemoLeaders]) are fictional
// and their bios say so (SYNTHETIC), but their trades, decided by a
// deterministic simulation over the synthetic demo prices, are orders of
// paper-broker accounts, reported by the broker: they are verified too.
// (Demo leaders that an older Tradekit simulated without a broker, of
// provider [DemoProvider], are not.)
//
// Money moved in or out of the account (deposits, withdrawals) is not a
// return. Returns are time-weighted: with E_t the equity at the end of day
// t and F_t the net flow of day t (deposits positive, withdrawals
// negative), counted at the day's end, the return of day t is
//
//	r_t = (E_t − F_t) / E_{t−1} − 1
//
// for every day after the first whose previous equity is positive; a day
// after an empty account has no return. Over the days with a return:
//
//	totalReturn    = ∏ (1 + r_t) − 1, a fraction (0.1 is 10 %); 0 without returns
//	sharpeRatio    = mean(r) / sd(r) × √252, sd with n − 1, risk-free rate 0;
//	                 none with fewer than two returns or when sd is 0
//	maxDrawdown    = min over t of I_t / max_{s ≤ t} I_s − 1, with
//	                 I_t = ∏_{s ≤ t} (1 + r_s) and I_0 = 1: a fraction ≤ 0;
//	                 none without returns
//	monthlyReturns = ∏ (1 + r_t) − 1 over the days t of each calendar month
//
// Daily returns are computed in exact decimals and rounded once to a
// float64; the figures are float64, rounded half away from zero to
// [FigurePlaces] (8) decimal places through a decimal, so that they carry
// no binary noise. A figure that does not exist is NaN in [Statistics]
// and nil in [Profile]: a profile published minutes ago has no Sharpe
// ratio and no drawdown yet, and the API shows them as null.
//
// # Copies
//
// With auto-sync on, each fill of the leader's portfolio is mirrored in
// the follower's as a market order, sized by [Size] from the follow's
// [Controls] (percentages) and rounded down to [CopyPlaces] decimal
// places. A buy mirrors the leader's trade as a share of the leader's
// equity, applied to the follower's allocation and scaled, within the
// room left under the maximum position:
//
//	A        = equity × allocationPct / 100
//	notional = quantity × price × A × scalingPct / 100 / leaderEquity
//	qty      = min(notional / price, A × maxPositionPct / 100 / price − held)
//
// A sell sells the share f of its position the leader sold, applied to
// what the follow copied (the net quantity of its filled copies), never
// more than the follower holds (less its open sells):
//
//	f   = min(quantity / leaderBefore, 1)
//	qty = min(copied × f, held)
//
// so a full sell closes the copied position. A copy that rounds to
// nothing is skipped, with the reason.
//
// A follow with notifications on is told of each of the leader's trades,
// and, with auto-sync on, of its copy: "Alice (alice) bought 40 ACME at
// 50; copied: a market buy of 2 ACME, order <id>", "…; not copied:
// <reason>" or "…; the copy, a market buy of 2 ACME, was rejected:
// <reason>". The notification's data holds the ids (followId,
// leaderProfileId, fillId) and the copy's copyStatus ("placed",
// "skipped" or "rejected"), copySide, copyQuantity (a JSON number), orderId and reason as
// they apply. A rejected copy is notified on its own too
// ([KindCopyRejected]), whatever the follow's notifications. Both ledgers are read as of the
// fill: leaderBefore is the leader's position before it, as the leader's
// ledger recorded it with the fill ([connect.Fill] PositionAfter), and a
// sell waits, for up to 30 seconds after the fill, while the follow's
// earlier copies in the symbol are still open.
//
// # The copy engine
//
// [Service.Run] is woken by each recorded fill: in process by
// [Service.Wake] (connect's Config.OnFill), and across instances on
// PostgreSQL by a notification on connect.FillsChannel; a pass every
// Config.CopyInterval (1 s) is the safety net. A pass reads, for each
// live follow, the leader's fills after the follow's watermark (the seq
// of the last fill it took up), in seq order. Each (fill, follow) is
// claimed with a lease of 5 seconds, which the instance renews while it
// works; a follow whose next fill another instance holds waits for the
// next pass, so that its copies go out in fill order. When an instance
// dies, its claims are taken over once their lease lapses, within
// about 6 seconds, and the copy's client order id, derived from the
// pair, keeps the broker from placing it twice. A copy's outcome
// (placed, rejected, skipped, notified), its notifications and the
// watermark are written in one transaction.
//
// The package reads and writes connect's tables (portfolios, fills,
// orders, connections) only through package connect, never with SQL of
// its own: a pass's one statement joins each follow to its next fill
// with [connect.NextFill], the copies' orders are read with the subquery
// of their copy events ([connect.Store.AssetOrders],
// [connect.Store.FilledOrders]), and the demo leaders' accounts are
// stored with [connect.Store.InsertAccountHistory]. Notifications are
// package alerts' ([alerts.Notifications]), the strategies' backtest
// figures package backtestdb's. The repository's tables_test.go fails
// when a file names a table another package owns.
//
// scalingPct is at most 1000 %; a follow that would close a loop is
// refused. A loop is a cycle of live follows (A follows B, B follows A,
// or A → B → C → A), whatever their auto-sync: copies would multiply
// around it, each hop scaling the last. [Service.Follow] refuses the
// follow that would close one with an error wrapping
// [tradekit.ErrConflict] that names the loop.
package copytrading
