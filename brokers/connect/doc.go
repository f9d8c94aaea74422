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
//  3. [Service.Disconnect] revokes the tokens at the broker (RFC 7009)
//     where it can, forgets them and keeps the row, disconnected.
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
// # Orders
//
// [Service.PlaceOrder] takes an order through a user's active connection:
//
//  1. With a client order id the user used before, it places nothing and
//     returns that order as it is now (the same parameters) or a conflict
//     (other parameters). Parameters are compared by a SHA-256 of their
//     canonical form, so "2" and "2.000" are one quantity.
//  2. It reads the account (equity, cash, positions) from the broker, and
//     the latest stored close and ATR(14) of the order's asset and of
//     every position's from Tradekit's prices (see [brokers.Check] for
//     the rules' formulas). A position's stop-loss is that of the latest
//     filled buy of its symbol through the connection that carried one.
//  3. Under a lock per user that every instance takes (a PostgreSQL
//     advisory transaction lock; SQLite serialises writers already), it
//     looks for the client order id again, counts the orders accepted
//     since 00:00 UTC, runs [brokers.Check] and records the order: pending,
//     or rejected with every broken rule. Concurrent orders of one user are
//     therefore checked one after the other, and maxDailyTrades is exact
//     however many instances receive them.
//  4. It sends a pending order to the broker with its own id as the
//     client order id, so a resend never places a second order. A refusal
//     (insufficient buying power, say) records the order rejected with the
//     broker's reason; an unreachable broker leaves it pending for the
//     tracker.
//
// The order tracker ([Service.TrackOrders], run every
// Config.OrderInterval) reads each pending order from its broker at
// intervals of an eighth of its age, from 200 ms to 30 s, and records a
// fill (price, quantity, commission, time), a cancellation or a rejection
// with a conditional update that only a pending order passes, so each
// change of state is recorded once whichever instance sees it first. An
// order the broker never acknowledged is sent again, and rejected a
// minute after it was placed. A fill starts a sync of the connection, so
// the portfolio shows it. [Service.CancelOrder] cancels at the broker and
// records the cancellation under the same condition.
//
// [Service.PreviewOrder] runs steps 2 and 3 without the lock and records
// and sends nothing.
//
// # Portfolios
//
// Each connection that became active owns one portfolio; a plan's
// portfolio count bounds the active connections. [Value] values positions
// at Tradekit's latest stored close of the symbol's asset; a symbol that
// is no Tradekit asset, or has no stored price, keeps the broker's
// market value.
package connect
