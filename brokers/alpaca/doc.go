// Package alpaca is the client of Alpaca's Trading API v2 dialect, which
// both Alpaca and Tradekit's paper broker (package brokers/paper) speak:
// OAuth 2.0 authorization code grant at /oauth/authorize and /oauth/token,
// and GET /v2/account, /v2/positions, /v2/orders and
// /v2/account/portfolio/history with Alpaca's field names and decimal
// strings. The wire types in this package are both the client's decoders
// and the paper broker's encoders.
package alpaca
