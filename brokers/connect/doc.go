// Package connect runs users' broker connections: the OAuth 2.0
// authorization code flow (with PKCE) against a broker, the tokens it
// yields sealed at rest, syncs that pull an account into a portfolio, and
// the portfolios themselves. Brokers are reached through package
// brokers/alpaca, over real HTTP, whether the broker is Alpaca or
// Tradekit's own paper broker (package brokers/paper).
//
// # The flow
//
//  1. [Service.Connect] stores a pending connection with a single-use
//     state (256 random bits, stored as its SHA-256, valid for
//     Config.StateTTL, 10 minutes) and a PKCE verifier, and returns the
//     broker's authorization URL for the user's browser.
//  2. The broker sends the browser back to the callback with code and
//     state. [Service.Callback] takes the state (a replayed or unknown one
//     changes nothing), exchanges the code, reads the account, and marks
//     the connection active with its account name. A denial, an expired
//     state or a failed exchange leaves the connection pending with its
//     reason in LastError; either way the browser goes on to the
//     connection's redirect URL with connectionId and status, or error.
//     An active connection's first sync starts at once.
//  3. [Service.Disconnect] first settles the connection's pending
//     orders with its still valid tokens (each read back with its fills,
//     and cancelled at the broker when still open there), then revokes
//     the tokens at the broker (RFC 7009) where it can, forgets them and
//     keeps the row, disconnected. No order of a disconnected connection
//     stays pending.
//
// # Tokens at rest
//
// Access and refresh tokens are sealed with AES-256-GCM ([Sealer]) under
// the server's secret key, each bound to its connection and kind, so the
// database never holds a token in plaintext. A refreshed token is sealed
// and stored before it is used.
//
// # Syncs
//
// A sync claims its connection in the database (sync status syncing, with
// the sync's id), so any instance may run it and two never run one
// connection at once. It reads the account (cash, equity), the positions,
// the fills since the last one synced (a year back the first time) and
// the daily equity over the past year, writes them into the connection's
// portfolio in one transaction, and closes its log entry: completed with
// the number of positions, or failed with a reason for the user. A sync
// still marked syncing Config.SyncTimeout after it began (its instance
// stopped) is marked failed by [Service.Tick]. [Service.Run] syncs every
// active connection each Config.SyncInterval (15 minutes).
//
// # The exposure ledger
//
// Every pre-trade check reads the connection's ledger, never the broker:
//
//   - Positions and cash: the connection's portfolio, as the last sync
//     found it, kept current by the account's own fills. A fill is
//     applied in the transaction that records the order's new state
//     ([Store] settle, then applyFill): the cash moves by quantity × price
//     and commission, the position by the quantity (a buy's average cost
//     by what the units cost; a buy with a stop-loss sets the position's
//     stop), and the fill is recorded with the portfolio's next seq
//     ([Fill.Seq]) and the position after it. Order.LedgerQty and
//     LedgerCash say how much of an order's fills the ledger holds, so a
//     partial fill, a state read twice or by two instances, is applied
//     once.
//   - Reservations: each pending order holds exposure at
//     Order.ReservedPrice (its limit, or the latest close plus
//     Config.SlippageBps for a market order), for the part not yet filled;
//     [brokers.Check] counts them ([brokers.Context] Open).
//   - Reconciliation: a sync reads the broker's account and positions,
//     and the open orders' fills, around each other until they agree (at
//     most three times), and in one transaction under the user's lock
//     and the ledger's replaces the ledger with them, notes each open order's fills so far
//     as held, and records on the connection when it did so and how the
//     ledger differed (Connection.LedgerDrift, also logged). A fill
//     applied while the sync read the broker (Portfolio.Version moved)
//     leaves the ledger to the next sync.
//   - Stop-losses: a buy's stopLossPrice goes to the broker with the
//     order ([brokers.OrderRequest] StopLossPrice; Alpaca: an OTO order
//     with a stop_loss leg, good till cancelled), so the broker holds the
//     stop. The tracker follows the buy alone (the order Tradekit placed):
//     its fills are what the ledger applies. When the stop leg fills, it
//     is a sell Tradekit did not place: the next sync records it among
//     the account's fills (by the broker's id) and reconciliation takes
//     the broker's cash and positions, so the ledger shows the position
//     sold, and LedgerDrift notes the difference. Until then the ledger
//     still holds the position. The resting stop holds the position's
//     shares at the broker (qty_available), so the broker refuses a
//     later sell of them: when it refuses a sell, Tradekit cancels the
//     stop-loss legs of the symbol that the sell needs
//     ([brokers.Trader] ReleaseStopLosses: for Alpaca the open OTO stop
//     legs, newest first, as few as free the quantity, waiting for the
//     cancellations) and sends the sell once more. A sell of the whole
//     position cancels its stops; a partial sell may leave the rest of
//     the position without a stop at the broker, while the ledger keeps
//     the position's stop for the guardrails. Sells that need no
//     cancellation cost no extra round trip.
//
// A placement's check and reservation run under one lock per user that
// every instance takes, as do a reconciliation and a change of
// guardrails: a PostgreSQL advisory transaction lock keyed by the user
// id; SQLite transactions are IMMEDIATE and serialise writers already.
// What moves a connection's ledger (a fill applied to it, a
// reconciliation) takes the ledger's own lock, keyed by the connection
// id, so that one writer at a time reads and moves it. A check does not
// wait for it: it reads the ledger, with the open orders' reservations,
// in one statement, which sees a fill being recorded either whole (the
// order filled, its reservation gone, the position moved) or not at all,
// as in a sequential run where the fill came just after the check.
//
// A recorded fill is announced: to Config.OnFill in this process, and on
// PostgreSQL by NOTIFY on [FillsChannel] at commit, so that every
// instance's copy engine wakes at once.
//
// # Orders
//
// [Service.PlaceOrder] takes an order through a user's active connection:
//
//  1. With a client order id the user used before, it places nothing and
//     returns that order as it is now (the same parameters) or a conflict
//     (other parameters). Parameters are compared by a SHA-256 of their
//     canonical form, so "2" and "2.000" are one quantity.
//  2. Under the user's lock, in one transaction, it looks for the client
//     order id again and reads, in one statement, the asset, the
//     connection (the user's, active), the user's guardrails, the ledger
//     (cash, positions with their stops, open orders' reservations) and
//     the count of the orders accepted since 00:00 UTC; then the quotes
//     of the assets involved (latest stored close and ATR(14), computed
//     once per price version of the asset). It runs [brokers.Check] and
//     records the order: pending with its reservation, or rejected with
//     every broken rule. Concurrent
//     orders of one user, on any number of instances, therefore accept
//     exactly what a sequential run would. Before the connection's first
//     sync the ledger is written first, from the broker.
//  3. It sends a pending order to the broker with its own id as the
//     client order id, so a resend never places a second order. A refusal
//     (insufficient buying power, say) records the order rejected with the
//     broker's reason; an unreachable broker leaves it pending for the
//     tracker. A market order is read back 4, 8, 16 … ms after the broker
//     acknowledged it, for half a second, so that its fill reaches the
//     ledger (and the copy engine) at once.
//
// The order tracker ([Service.TrackOrders], run every
// Config.OrderInterval) reads each pending order from its broker at
// intervals of an eighth of its age, from 200 ms to 30 s: the orders of a
// connection due in a round are read together, with one list call
// ([brokers.Trader.Orders], the orders submitted since the oldest of
// them), so a round costs one broker request per connection however many
// orders are pending; resting orders read less often than every 15 s
// join a read due within 7.5 s, so that they share their reads. It
// records a
// fill (price, quantity, commission, time), a cancellation or a rejection
// with a conditional update that only a pending order passes, so each
// change of state is recorded once whichever instance sees it first. An
// order the broker never acknowledged is sent again, and rejected a
// minute after it was placed. A broker that refuses a request over its
// rate limit and says when to come back ([brokers.RetryAfter]: Alpaca's
// X-RateLimit-Reset, the paper broker's Retry-After) has the orders that
// request was for, and those after it in the round, checked again then,
// on every instance: requests spent on refusals would not get through
// anyway, and the budget that returns goes to the orders waiting.
// [Service.CancelOrder] cancels at the broker
// and records the cancellation under the same condition; a final order
// no longer reserves anything.
//
// [Service.PreviewOrder] runs step 2's reads and check, all at once and
// without the lock, and records and sends nothing.
//
// # Portfolios
//
// Each connection that became active owns one portfolio; a plan's
// portfolio count bounds the active connections. [Value] values positions
// at Tradekit's latest stored close of the symbol's asset; a symbol that
// is no Tradekit asset, or has no stored price, keeps the broker's
// market value.
//
// Other packages read portfolios through [Store], never through SQL of
// their own: package copytrading reads a leader's portfolio by id
// ([Store.PortfolioByID]), a follower's by connection ([Store.PortfolioOf]),
// both with their positions, and a leader's fills, daily equity, provider
// and last change ([Store.Fills], [Store.HistoryByID], [Store.Providers],
// [Store.UpdatedAt]). A Store built on a transaction reads inside it.
//
// Where another package's statement must reach connect's tables, connect
// hands it the piece (external.go), so that the statement stays one: the
// copy engine joins each follow to the leader's next fill with
// [NextFill], and reads the orders its copy events name with
// [Store.AssetOrders] and [Store.FilledOrders], which take the subquery
// of their ids. The demo leaders are stored with
// [Store.InsertAccountHistory] in the loader's transaction, and found
// again with [Store.ConnectionOwner].
package connect
