// Package portal is the front of Tradekit's built-in paper broker: the
// OAuth 2.0 authorization server with its consent page, the sign-in links
// and the account page where an account's holder manages its API keys,
// and the registered third-party apps. The engine behind it, package
// brokers/paper, keeps the accounts, the orders and the Alpaca-dialect
// API; the portal reaches it only through its exported API (opening an
// account in the approval's transaction, issuing and revoking tokens with
// [paper.Tokens], reading an account, its API keys) and keeps its own
// tables: authorization codes, consent nonces, sign-up counts, sign-in
// links, sessions and apps. The engine never imports the portal.
//
// [Portal.Handler] serves the portal's routes and hands every other path
// to the engine's [paper.Broker.Handler], so one mount serves both:
//
//	b := paper.New(db, paper.Config{})
//	p := portal.New(db, b, portal.Config{
//		Clients: []portal.Client{{ID: "tradekit", Secret: secret, Name: "Tradekit",
//			RedirectURIs: []string{"https://tradekit.example/brokers/callback"}}},
//		Prefix: "/paper",
//	})
//	mux.Handle("/paper/", http.StripPrefix("/paper", p.Handler()))
//
// # Connecting
//
// The OAuth flow is the authorization code grant of RFC 6749 with PKCE
// required, S256 only, as OAuth 2.1 asks: a request without
// code_challenge, or with the plain method (the default when
// code_challenge_method is absent), is sent back with invalid_request,
// and the token endpoint exchanges a code only with the verifier of its
// challenge. A client sends the user to GET /oauth/authorize. The broker
// checks the client_id and the redirect_uri (an exact match with one the
// client registered) before anything else: when either is wrong it shows
// an error page and never redirects. Otherwise it shows a consent page,
// plain HTML with no script, naming the client by its registered name,
// the user the client names in login_hint (OpenID Connect's parameter,
// which the client asserts: the page says so, and asks the user to deny
// if it is not them), and what approving does.
//
// The form is protected against CSRF by a token the broker signs
// (HMAC-SHA256 with Config.SigningKey) over a random nonce, its expiry
// (one hour), the value of an HttpOnly, SameSite=Strict cookie that
// binds it to the browser, and every field of the request (client,
// redirect_uri, state, scope, challenge, login_hint). Nothing is stored
// when the page is shown; the nonce is recorded when the form is posted,
// so a token works once. A token the broker did not sign for this request
// and this cookie, or an expired one, answers 403 and opens nothing, as
// does a token posted a second time.
//
// Each approval opens an account, so approvals are limited per client
// address (Config.ClientAddress; Tradekit's server counts an IP address,
// or an IPv6 /64): [DefaultSignupLimit] (10) in each UTC clock hour, set
// by Config.SignupLimit. One more answers 429 with Retry-After, the
// seconds to the end of the hour, opens nothing and leaves its form
// usable. The count is one upsert in the database, exact across
// instances; denials are not counted.
//
// Approving opens a new paper account with the starting cash (the engine's [paper.Config],
// 100,000 USD by default) and sends the user back with a code of 256
// random bits, valid for [CodeTTL], single use, and bound to the client,
// the redirect_uri and the PKCE challenge. Denying sends back
// error=access_denied. Every approval opens a new account: an account is
// reached only through the tokens of the approval that opened it.
//
// POST /oauth/token authenticates the client (HTTP Basic or
// client_id and client_secret in the form) and exchanges a code or a
// refresh token for an access token (Config.AccessTTL, 1 h by default)
// and a refresh token. Refresh tokens do not expire but rotate: each use
// revokes the one presented. Presenting a used code or a rotated refresh
// token again answers invalid_grant and revokes every token descended
// from that approval, as RFC 6749 §4.1.2 and the OAuth security BCP ask.
// POST /oauth/revoke (RFC 7009) revokes an access token alone, or a
// refresh token with every token of its approval; it answers 200 for an
// unknown token. Codes and tokens are stored only as SHA-256 hashes.
//
// The scopes a client may ask for are Alpaca's ([paper.ScopeAccountWrite],
// [paper.ScopeTrading] and [paper.ScopeData]); the consent page says what
// each granted one allows, and the broker's API enforces them.
//
// # Third-party apps
//
// Besides the clients of Config.Clients (Tradekit itself), the broker
// accepts the apps registered in the database with [CreateApp] (the
// command `tradekit paper apps create --name NAME --redirect-uri URI`):
// each has a client_id "app_…" and a secret of 256 random bits, shown
// once and stored as its SHA-256. [DeleteApp] unregisters an app and
// revokes its tokens. An app connects accounts through the same consent
// flow, PKCE S256 and CSRF defences as Tradekit, so Alpaca's own SDKs,
// given the broker's base URL and the app's access token, work
// unchanged.
//
// # The account page
//
// Keys are created and revoked on the broker's account page, GET
// /account, by the account's holder. The broker has no users or passwords
// of its own: the holder signs in with a single-use link, valid for
// [SignInLinkTTL], that the application connected to the account asks
// for with one of its access tokens granted the account:write scope (POST
// /account/sign-in-links; never with an API key, so that a key cannot
// make keys), or that the server running the broker makes with
// [Portal.SignInLink] (Tradekit's dashboard does, from a paper
// connection's page) for the browser asking, which alone may use it: a
// cookie set with the link must come back with it, so that a link sent
// to someone else signs them in to nothing. Using the link starts a session of [SessionTTL] in
// an HttpOnly, SameSite=Lax cookie whose token is stored as its SHA-256;
// every form of the page carries a CSRF token, an HMAC of the session
// under Config.SigningKey. [paper.Broker.CreateAPIKey], [paper.Broker.APIKeys] and
// [paper.Broker.RevokeAPIKey] do the same from Go.
//
// # Errors
//
// The pages answer HTML, the token and revocation endpoints OAuth's JSON
// errors (RFC 6749 §5.2), and POST /account/sign-in-links Alpaca's JSON
// as the engine's API does. A refused form on the account page answers
// the status of its error's kind ([tradekit.Status]). Anything else
// answers 500 and is logged to the engine's Config.Logger.
package portal
