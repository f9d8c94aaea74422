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
// 5xx). A network failure, or a body that cannot be decoded, wraps
// [tradekit.ErrUnavailable]. A token that must be refreshed and cannot be,
// because it has no refresh token or the token endpoint answers
// invalid_grant, gives an error wrapping [tradekit.ErrUnauthorized]; any
// other failure of the token endpoint wraps [tradekit.ErrUnavailable].
//
// Money and quantities are [decimal.Decimal], decoded from the JSON text
// exactly, whether Alpaca sends a string ("99872.93", as in most bodies)
// or a number (as in portfolio history); they never pass through float64.
// The package never sets shopspring/decimal's package variables.
package alpaca
