// Package alerts holds users' watchlists, their price alerts and the
// webhooks their notifications are delivered to.
//
// # Watchlists
//
// A watchlist is a named list of at most [MaxWatchlistAssets] assets. An
// account's members together hold as many as the plan's watchlists
// count (Config.Account names them); past it, [Service.CreateWatchlist]
// fails with tradekit.ErrForbidden and details {"limit": "watchlists"}.
// Alerts and webhooks are counted the same way. The count and the insert
// run in one transaction under a per-account lock, so concurrent requests
// of any members on any number of instances never pass it.
//
// # Alerts and their evaluation
//
// An alert is a condition on one asset written in the custom-indicator
// language (package indicators/formula), such as
//
//	close > 200
//	rsi(close, 14) < 30
//	crossover(sma(close, 50), sma(close, 200))
//
// The condition is evaluated over the asset's whole daily history, so
// that indicators warm up exactly as the indicator routes compute them,
// and it holds on a bar where its value is defined and not zero
// (comparisons and crossover give 1 or 0).
//
// Alerts are evaluated against watermarks: the asset's price version
// (which every price change made by marketdata's SavePrices increments)
// and the date of the last bar evaluated. Each asset with alerts has one
// (table alert_watermarks), which evaluation passes move; each alert has
// its own, set when it is created (at the latest bar) and when it fires.
// An evaluation pass ([Service.Evaluate]) selects the assets whose price
// version is past their watermark and that have active alerts not yet at
// that version, and evaluates each such alert on the bars dated after the
// later of its own watermark and its asset's (the latest [MaxNewBars] of
// them at most). It fires on each such bar where the condition holds: at
// most once per bar, and only on the first for an alert made with once
// (the default in the API), which then becomes triggered. Bars revised in
// place (same date) are not new and are not evaluated again. The bars are
// back-adjusted for splits and dividends (marketdata.Adjust) unless the
// alert was made with Adjusted false: the series the charts show.
//
// A pass reads the alerts and bars of a hundred assets at once (the bars
// from the stored copies of the price columns, which marketdata brings up
// to date from the records an import wrote rather than rereading every
// record), parses each distinct condition once and evaluates it once per
// asset, however many alerts share it. It then records the outcomes of
// up to a thousand assets in one transaction. The transaction first
// claims the assets: it moves each one's watermark from the value the
// pass read to the new one (an UPDATE … WHERE version = old … RETURNING,
// or an INSERT … ON CONFLICT DO NOTHING RETURNING for the first, one
// statement per group of assets alike), which only one of several
// concurrent passes can win. Only the claimed assets' alerts fire: they
// are marked as fired (status triggered for once) if still active, and
// the notifications (kind "alert"), rows keyed by (alert, bar date) whose
// primary key refuses a second firing for the bar, and the deliveries to
// webhooks are inserted. Everything a firing writes is therefore written
// exactly once across any number of instances. Alerts that do not fire
// are not written at all.
//
// Passes run on every price change: on PostgreSQL [Service.Run] listens
// on marketdata.PricesChannel, the channel SavePrices notifies in its
// transaction; on SQLite a process that saves prices calls
// [Service.Wake]. A pass every Config.EvaluateEvery catches what no signal
// announced (an import by the CLI into SQLite, lost notifications).
//
// # Webhooks
//
// A webhook is a URL to which the user's notifications are POSTed as
// JSON: alert firings (to the alert's webhook when it names one, else to
// all of the user's webhooks) and every other kind the service writes
// (leader trades, copies rejected or stopped, unpublished leaders), which
// [Service.FanOut] picks up from the notifications table. Each
// (webhook, notification) pair is one [Delivery], unique in the database.
//
// A webhook's signing secret is shown once, by [Service.CreateWebhook].
// The database holds it sealed (AES-256-GCM, bound to the webhook's id)
// with the server's secret key, Config.Sealer; without one no webhook can
// be created. Secrets stored in plaintext before they were sealed are
// sealed by [Service.SealSecrets], which [Service.Run] calls when it
// starts, or by the first delivery that reads them, whichever comes
// first: a migration cannot, since the key is not in the database.
//
// Requests are signed as package webhook describes (HMAC-SHA256 over
// "<t>.<delivery id>.<body>", header Tradekit-Signature: t=…,d=…,v1=…)
// and carry the delivery's id in Tradekit-Delivery too, the same on every
// retry, for receivers to drop duplicates: delivery is at least once,
// since an instance that dies between sending and recording sends again
// once its lease lapses.
//
// # Delivery scheduling
//
// [Service.Run] keeps up to Config.DeliverConcurrency attempts running
// and claims the next due deliveries as soon as one ends, never waiting
// for a batch. A claim weighs the due deliveries against those in flight
// on every instance (pending with a live lease): at most 2 to one webhook
// (its row is locked for the count on PostgreSQL) and at most
// Config.DeliverPerAccount for one account, and the slots go round-robin
// to the accounts with the fewest in flight, oldest due delivery first.
// One account's hanging receivers therefore hold at most its own share.
// Each claim's lease runs a minute from the claim itself.
//
// An answer other than 2xx, or none, is retried with exponential backoff
// (Config.RetryBase doubling up to Config.RetryMax: 10 s, 20 s, 40 s, …,
// then hourly) until Config.RetryFor (a day) after the delivery was
// created; then it is marked failed. Every attempt records its response
// status, latency and error on the delivery, which [Service.Deliveries]
// lists. The receiver is backed off as a whole too: each failure pauses
// its webhook for the same schedule, over all its deliveries, and one 2xx
// answer clears it. A webhook that fails without a break for
// Config.DisableAfter (3 days) is disabled: its pending deliveries are
// cancelled and its owner gets a notification of kind
// [KindWebhookDisabled].
//
// Destinations outside the public internet (every IANA special-purpose
// address) are refused at every connection, and literal addresses at
// creation (see [webhook.Client]), unless the transport allows them.
package alerts
