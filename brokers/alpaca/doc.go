// Package alpaca is the client of Alpaca's Trading API v2 dialect, which
// both Alpaca and Tradekit's paper broker (package brokers/paper) speak:
// OAuth 2.0 authorization code grant at /oauth/authorize and /oauth/token,
// and GET /v2/account, /v2/positions, /v2/orders and
// /v2/account/portfolio/history with Alpaca's field names and decimal
// strings. The wire types in this package are both the client's decoders
// and the paper broker's encoders.
//
//	conf := alpaca.OAuthConfig(id, secret, alpaca.AuthorizeURL, alpaca.TokenURL, redirect, "trading")
//	tok, err := conf.Exchange(ctx, code) // in the OAuth callback
//	c := alpaca.New(alpaca.Config{
//		BaseURL: alpaca.PaperURL,
//		OAuth:   conf,
//		Token:   tok,
//		OnToken: func(ctx context.Context, t *oauth2.Token) error { return save(ctx, t) },
//	})
//	acct, err := c.Account(ctx)
//	fills, err := c.Fills(ctx, lastSync)
//
// # Endpoints
//
// Alpaca authorises at [AuthorizeURL] (https://app.alpaca.markets/oauth/authorize)
// and issues tokens at [TokenURL] (https://api.alpaca.markets/oauth/token).
// Its trading API is at [LiveURL] (https://api.alpaca.markets) for live
// accounts and [PaperURL] (https://paper-api.alpaca.markets) for paper
// accounts. Tradekit's paper broker serves both the OAuth and the trading
// paths under one base URL of its own.
//
// # Conventions
//
// A [Client] sends "Authorization: Bearer <access token>". It refreshes
// the token, through the refresh-token grant of [Config.OAuth], before a
// call when the token expires within 10 seconds, and once when the API
// answers 401, then retries that request once. Each refreshed token goes
// to [Config.OnToken] before it is used. One Client runs one refresh at a
// time, and is safe for concurrent use. Alpaca's own access tokens carry
// no expiry and no refresh token: they are used until the API refuses
// them, and then the call fails with the API's 401.
//
// Every error message starts with "alpaca: ". An answer with an error
// status is an [*APIError], which unwraps to the Tradekit kind of its
// status: [tradekit.ErrUnauthorized] (401, 403), [tradekit.ErrNotFound]
// (404), [tradekit.ErrRejected] (422) or [tradekit.ErrUnavailable] (429,
// 5xx); a 429 also says how long to wait ([APIError.Wait], which
// [brokers.RetryAfter] reads). A network failure, or a body that cannot be decoded, wraps
// [tradekit.ErrUnavailable]. A token that must be refreshed and cannot be,
// because it has no refresh token or the token endpoint answers
// invalid_grant, gives an error wrapping [tradekit.ErrUnauthorized]; any
// other failure of the token endpoint wraps [tradekit.ErrUnavailable].
//
// # What the paper broker simulates
//
// Tradekit's paper broker fills in every field of [AccountJSON],
// [PositionJSON], [OrderJSON] and [TradeUpdateJSON], Alpaca's models, as
// follows.
//
// Account. A paper account is a cash account: cash, buying_power,
// regt_buying_power, effective_buying_power and
// non_marginable_buying_power are all the cash; multiplier is 1;
// daytrading_buying_power, bod_dtbp, options_buying_power, accrued_fees,
// pending_transfer_in, initial_margin, maintenance_margin,
// last_maintenance_margin, sma, short_market_value and daytrade_count are
// 0 (nothing is borrowed, shorted, day-trade counted or charged beyond
// the configured commission, which comes out of the cash at each fill);
// shorting_enabled, pattern_day_trader and every *_blocked flag are
// false; status and crypto_status are ACTIVE; balance_asof is yesterday
// (UTC). equity and portfolio_value are the cash plus the positions
// valued at Tradekit's latest stored daily closes; last_equity is the
// equity at the end of yesterday.
//
// Position. Always long. current_price is the latest stored close (the
// average entry price when none is stored), lastday_price the close on or
// before yesterday; unrealized_plpc is unrealized_pl / cost_basis;
// unrealized_intraday_pl is (current_price − lastday_price) × qty,
// unrealized_intraday_plpc that over lastday_price × qty, and change_today
// (current_price − lastday_price) / lastday_price, each measured from the
// average entry price when there is no previous close; ratios are
// rounded to 8 places. qty_available is qty less the open sell orders.
// asset_marginable is false.
//
// Order. Orders fill whole at a stored daily close (with the configured
// slippage and commission), so filled_qty is 0 or qty and
// partially_filled never happens. Simulated: market, limit, stop (it
// triggers when the close reaches its stop price, then fills at that
// close), stop_limit (it triggers the same way, is stored as triggered,
// and from then on fills as a limit order, at later closes too) and
// trailing_stop orders (trail_price or trail_percent; hwm is the highest
// close since placement for a sell, the lowest for a buy, starting at
// the close at placement, and stop_price is hwm − trail_price or
// hwm × (1 − trail_percent/100) for a sell, hwm + … for a buy, rounded
// to 9 places; it fills as a stop order at that stop). Time in force
// day and gtc (paper orders never expire, so expired_at and expires_at
// are null), and ioc and fok on market and limit orders: the matching
// pass run at once after placement fills them at the close or cancels
// them (one and the same, since fills are whole). Time in force opg and
// cls on whole-share market and limit orders of class simple: they are
// accepted and refused at Alpaca's hours, on NYSE's calendar in New York
// time (opg refused from 09:28, cls from 15:50, or ten minutes before an
// early close, until 19:00; from 19:00 and on days without a session
// they join the next session's auction, and in the two or ten minutes
// before the auction they cannot be cancelled or replaced); an opg order
// fills at the open of its session's daily bar and a cls order at its
// close, once the clock has passed that open or close and the bar is
// stored, without slippage; a limit not met, or a session without a
// stored bar once a later bar is stored, cancels the order. Notional market day
// orders fill notional / price, truncated to 9 places, and show qty
// null. extended_hours is stored and echoed; it changes nothing, since
// fills are at daily closes. replaced_by, replaces and replaced_at come
// from PATCH /v2/orders/{id}.
//
// order_class simple, bracket, oto and oco. A bracket order is its entry
// plus two legs, a take-profit limit order at take_profit.limit_price
// and a stop-loss stop order at stop_loss.stop_price (stop_limit with
// stop_loss.limit_price), on the other side, of the entry's qty and time
// in force; an oto order has one of the two legs. The legs are held
// (status held, client_order_id their id) until the entry fills, then
// open and meet the same close; when one exit fills the other is
// cancelled in the same transaction. An oco order (type limit) is a
// limit order at take_profit.limit_price with one leg, the stop loss, on
// the same side, both open: when one fills the other is cancelled.
// Cancelling any order of a class cancels its open and held orders; a
// rejected entry cancels its legs. legs lists an order's legs on
// placement, on GET /v2/orders/{id} and :by_client_order_id, and on GET
// /v2/orders with nested=true (which then leaves the legs out of the
// list itself); without nested the legs are listed as orders of their
// own and legs is null. The legs of one order, and an oco order with its
// leg, count once against qty_available. Orders of a class cannot be
// replaced (422); bracket and oto orders need qty, day or gtc, regular
// hours, and exits on either side of each other (a sell's take profit
// above its stop, a buy's below).
//
// Trade updates (GET /v2/events/trades, [TradeUpdateJSON]). Derived from
// the orders' stored times: new at submitted_at (a held leg's when its
// entry fills), fill at filled_at, canceled at canceled_at, replaced at
// replaced_at (the replacement has its own new event), rejected when
// the order was rejected; partial_fill and expired never happen, nor
// Alpaca's rarer events (pending_new, accepted, done_for_day,
// pending_cancel, pending_replace, order_replace_rejected, …). order is
// the order as of the event: for a new event status new, filled_qty 0,
// and no fill, cancel or replace fields, with updated_at the event's
// time; a trailing stop's hwm and stop_price are their latest values,
// and legs is null (each leg has its own events). A fill's price, qty
// and timestamp are filled_avg_price, filled_qty and filled_at (one
// execution per order); execution_id is a UUID derived from the order's
// id; position_qty is the position in the symbol after the fill,
// replaying the account's fills in the order they filled. event_id is a
// ULID whose time is the event's millisecond and whose other bits are
// the microsecond, the order's number and the kind of event: stable,
// and ordered as the events.
//
// Answering 422 with Alpaca's JSON error, as does anything else not
// simulated, so that nothing is silently dropped: time in force gtx and
// gtd (and ioc or fok on stop orders), order class mleg and option legs,
// and short sales. failed_at and position_intent stay null or empty.
//
// Money and quantities are [decimal.Decimal], decoded from the JSON text
// exactly, whether Alpaca sends a string ("99872.93", as in most bodies)
// or a number (as in portfolio history); they never pass through float64.
// The package never sets shopspring/decimal's package variables.
package alpaca
