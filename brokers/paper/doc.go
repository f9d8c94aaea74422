// Package paper is the engine of Tradekit's built-in paper broker: a
// brokerage of play-money accounts that speaks Alpaca's Trading API v2
// dialect, with its accounts, orders, matching engine, auctions and
// trade updates. Tradekit connects to it through package brokers/alpaca
// over real HTTP, exactly as it connects to Alpaca, so the built-in
// broker exercises the code path of a real one end to end, with nothing
// to install.
//
// The broker is two packages. This one is the engine and its API (the
// routes under /v2, see [Broker.Handler]) with the credentials the API
// checks: OAuth access tokens and their scopes ([Tokens]) and API keys.
// Package brokers/paper/portal is the front: the OAuth 2.0 authorization
// server with its consent page, the sign-in links and account page where
// a holder manages API keys, and the registered third-party apps. The
// portal calls this package's API ([Broker.OpenClientAccount],
// [Broker.Account], [Tokens], [Broker.CreateAPIKey],
// [Broker.AccountWriteRoute]) and keeps its own tables; this package
// never imports it.
//
//	b := paper.New(db, paper.Config{})
//	p := portal.New(db, b, portal.Config{
//		Clients: []portal.Client{{ID: "tradekit", Secret: secret, Name: "Tradekit",
//			RedirectURIs: []string{"https://tradekit.example/brokers/callback"}}},
//		Prefix: "/paper",
//	})
//	mux.Handle("/paper/", http.StripPrefix("/paper", p.Handler()))
//	…
//	o, err := b.Fill(ctx, accountID, "ACME", brokers.Buy, qty, price, time.Time{})
//
// # Credentials
//
// Every route under /v2 takes an OAuth access token (Authorization:
// Bearer), which package brokers/paper/portal issues, or an API key.
// The scopes a client may ask for are Alpaca's: [ScopeAccountWrite],
// [ScopeTrading] and [ScopeData]. Every access token reads its account
// whatever its scopes. Placing, replacing and cancelling orders and
// closing positions need trading; changing the account's configurations
// and asking for a sign-in link to its page need account:write; a token
// without the scope a route needs answers 403 (code 40310000). An API
// key, the owner's, holds every scope.
//
// Besides OAuth access tokens, the API takes Alpaca-style API keys, as
// Alpaca's SDKs send them when given a key id and a secret instead of a
// token: the headers APCA-API-KEY-ID (a key id, "PK" and 18 characters)
// and APCA-API-SECRET-KEY (a secret of 240 random bits, 40 characters).
// A key reaches its account on every route under /v2, as the account's
// access tokens do. A missing header, an unknown or revoked key, a wrong
// secret, or a key beside an Authorization header answers Alpaca's 401
// {"code":40110000,"message":"request is not authorized"}. Secrets are
// shown once and stored as their SHA-256 only; a revoked key keeps its
// row. An account holds at most [MaxAPIKeys] keys at once. Keys are
// created and revoked on the portal's account page, or from Go with
// [Broker.CreateAPIKey], [Broker.APIKeys] and [Broker.RevokeAPIKey].
//
// # The account
//
// The API speaks Alpaca's Trading API v2 (see [Broker.Handler] for the
// routes) with the types of package brokers/alpaca, decimals as JSON
// strings, and Alpaca's JSON errors {"code", "message"} on every path
// under /v2: 401 (code 40110000, "request is not authorized") for a
// missing, unknown, expired or revoked access token or API key; 404 (40410000) for
// an unknown path or object; 405 (40510000) for a known path with another
// method; 422 (42210000) for invalid input and for what the paper broker
// does not simulate (watchlists, options, corporate actions, time in
// force gtx and gtd, order class mleg, short sales, changing the account
// configurations). Package brokers/alpaca's doc lists how each field of
// the account, positions and orders is simulated.
//
// An account holds cash and long positions; there is no margin and no
// short selling, so buying power is the cash. The clock and the calendar
// are NYSE's, from Tradekit's exchange calendars (package
// calendar); the assets are Tradekit's asset table; the
// activities are the fills (FILL).
//
// # Orders
//
// POST /v2/orders takes Alpaca's body for market, limit, stop,
// stop_limit and trailing_stop orders, by qty or, for market day orders,
// by notional, on the symbols of Tradekit assets that have a stored
// close, of order class simple, bracket, oto or oco (see [Broker.Place]
// and [Broker.Match]); time in force day or gtc is kept, and paper
// orders never expire; ioc and fok orders fill at once or are cancelled;
// opg and cls orders join an auction (see Auctions below). An order is
// open (status new) until the matching engine fills it or the owner cancels it (DELETE
// /v2/orders/{id}: 204, or 422 "order is not cancelable"), cancels all
// (DELETE /v2/orders: 207) or replaces it (PATCH /v2/orders/{id}: the old
// order becomes replaced, the new one replaces it). With the account
// locked, placement refuses with 403 and Alpaca's code 40310000 a buy
// whose cost, added to that of the account's open buys, exceeds the cash
// ("insufficient buying power"), and a sell of more than the position
// less the open sells ("insufficient qty available for order"). An
// order's cost is its notional, or its quantity at its limit price, or at
// the fill price of the latest close (or of its stop price, when higher)
// for a market or stop order, plus the commission. A client_order_id is
// unique per account (422, code 40010001, for a second order with it);
// GET /v2/orders:by_client_order_id finds an order by it. DELETE
// /v2/positions/{symbol} places a market sell of the position, or of its
// qty or percentage; DELETE /v2/positions closes them all (207),
// cancelling the open orders first with cancel_orders=true.
//
// The matching engine ([Broker.Match], run by [Broker.Run] every
// Config.MatchInterval and at once after a placement) fills each open
// order that can fill at its asset's latest stored close c, with s the
// slippage (Config.SlippageBps / 10⁴):
//
//	market buy:  at c × (1 + s)
//	market sell: at c × (1 − s)
//	stop buy:    when c ≥ stop, at c × (1 + s)
//	stop sell:   when c ≤ stop, at c × (1 − s)
//	limit buy:   when c ≤ limit, at min(limit, c × (1 + s))
//	limit sell:  when c ≥ limit, at max(limit, c × (1 − s))
//	stop_limit:  once c has reached stop (stored: triggered), as a limit order
//	trailing:    as a stop order, its stop trailing the best close since placement
//
// A bracket or OTO order's legs are held until it fills, then open and
// meet the same close in a second pass; when one exit of a bracket, or
// one order of an OCO pair, fills, the rest of its group is cancelled in
// the transaction of the fill. An ioc or fok order that cannot fill at
// the close is cancelled.
//
// A notional order fills a quantity of notional / price, truncated to 9
// places (it is rejected when that is 0). Prices are rounded half away from zero to 9 places, charging Config.Commission to
// the cash. A fill moves the order from open to filled in the transaction
// that changes the cash and the position, with the account locked, and
// only if the order is still open: an order fills once however many
// Brokers run on the database, and a cancel racing a fill wins or loses
// as a whole. A fill the account can no longer pay for, or a sell of
// more than it holds, rejects the order instead. With static prices, a
// limit far from the close stays open.
//
// [Broker.Fill] records an order filled at once, at a given price and
// without commission, and updates the cash and the position in one
// transaction: a way to build an account's history directly.
//
// Positions are valued at Tradekit's stored daily closes (package
// marketdata): a position's market value is its quantity times the latest
// close, up to today, of the stored asset with its symbol, or times its
// average entry price when no such close is stored (an unknown symbol, or
// an asset without prices). Equity is the cash plus the market values.
// Nothing is rounded but the average entry price (18 places) and the
// profit and loss percentages (8 places): quantities and prices carry at
// most 9 decimal places, so every amount is exact.
//
// The portfolio history has one point per calendar day (UTC), from the
// day the account was opened, or the start of the requested period if
// later, to today. It replays the filled orders in the order they filled,
// with their commissions, from the starting cash, and values each day's holdings at the
// close on or before that day, or at their average entry price on that
// day when none is stored. Weekends and holidays therefore repeat the
// previous close. last_equity of /v2/account is the equity at the end of
// yesterday, or the starting cash for an account opened today.
//
// # Auctions
//
// Time in force opg (market or limit on open) and cls (market or limit on
// close) are simulated on daily bars, with NYSE's sessions from
// Tradekit's exchange calendar in New York time, as the clock. They take
// whole-share market and limit orders of class simple in regular hours,
// and follow Alpaca's acceptance rules: on a trading day an opg order is
// refused (422) from 09:28 (two minutes before the open) to 19:00, and a
// cls order from 15:50 (ten minutes before the close, 12:50 on an early
// close) to 19:00. Placed before the cutoff, an order joins that day's
// auction; from 19:00, or on a day without a session, the next
// session's. From the cutoff to the auction it can be neither cancelled
// nor replaced.
//
// An opg order fills at the open of its session's daily bar, a cls order
// at its close: once the clock has passed the session's open (09:30) or
// close, and that bar is stored. Every order of an auction gets the
// auction's one price, so no slippage applies (the commission does). A
// limit on open or close fills only at a price at or better than its
// limit, and is cancelled otherwise, as Alpaca cancels what the auction
// leaves unfilled. An order whose session never gets a bar stays open
// (and may be cancelled) until a later session's bar is stored, and is
// then cancelled.
//
// # Trade updates
//
// GET /v2/events/trades streams the account's trade updates as Alpaca
// does, as Server-Sent Events: one "data: <JSON>" line per event, with
// Alpaca's fields (package brokers/alpaca's TradeUpdateJSON), so that
// Alpaca's SDKs' StreamTradeUpdates works unchanged. The events are not
// stored but derived from the times stored on the orders: new when an
// order is submitted (the legs of a bracket or OTO order when their entry
// fills and they open), then fill, canceled, replaced or rejected when it
// closes. Orders fill whole and never expire, so partial_fill and
// expired never happen. Each event carries the order as of the event (a
// new event's order open, nothing filled), and a fill its price, qty,
// timestamp, an execution_id and position_qty, the position in the
// symbol after it, replaying the fills in the order they filled, as the
// portfolio history does.
//
// An event's id is a ULID made of its time, its order's number and its
// kind, so ids are stable and ordered as the events. since and until
// (RFC 3339, inclusive) and since_id (exclusive) and until_id (inclusive)
// select a range. With until or until_id the stream sends the stored
// events and ends. Without, it stays open: every Config.StreamPoll
// (100 ms) it reads the orders updated since the latest event it sent,
// so that it sees the changes made through any Broker on the database,
// and sends an event once two reads have seen it, with every unsent
// event of a smaller id, in the order of ids: an event whose transaction
// commits up to a poll interval after that of an event of a greater id
// still goes out first, so that a client that resumes from the last id
// it got (since_id) gets no duplicates and no gaps. An event that
// commits later still, by up to ten seconds of event time, reaches the
// open stream when seen, after events of greater ids (a client resuming
// from one of those would miss it). After
// Config.StreamKeepAlive (15 s) of silence the stream sends a comment.
// It ends when the client goes away; [Broker.EndStreams], which a
// server calls when it shuts down, cuts it short, as a broken connection
// would, so that Alpaca's SDKs reconnect and resume (they stop for good
// on a stream that ends cleanly). Each write moves the connection's
// write deadline ahead, so that a server's WriteTimeout does not cut a
// long stream.
//
// # Limits
//
// As at Alpaca, an account may make Config.RateLimit requests to the API
// in a UTC clock minute ([DefaultRateLimit], 200), counted in the
// database so that every Broker on it counts together; every answer
// carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset,
// and one more answers 429 {"code":42910000,"message":"rate limit
// exceeded"} with Retry-After, uncounted. An account holds at most
// Config.MaxOpenOrders open orders ([DefaultMaxOpenOrders], 1,000): one
// more answers 403 with code 40310000. An API key or access token holds
// at most Config.MaxStreams trade-update streams open at once on a
// Broker ([DefaultMaxStreams], 10): one more answers 429. Errors quote at
// most 64 characters of a value sent ([tradekit.Quote]), and a NUL in a
// parameter, the path or a string of a JSON body answers 422 naming it.
//
// # Errors
//
// [Broker.Fill] returns errors prefixed "paper: " that wrap
// [tradekit.ErrNotFound], [tradekit.ErrInvalid] or [tradekit.ErrRejected].
// The handler answers 500 for anything else, in the dialect of the
// endpoint, and logs it to Config.Logger.
package paper
