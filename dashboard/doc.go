// Package dashboard is the account dashboard that `tradekit serve` serves
// under /dashboard/:
//
//   - sign-in with an email and password, sign-out, and invitations with
//     which a new member of an account sets a password;
//   - Usage: the plan's limits beside this minute's and today's use, read
//     from the rate limiter's counters;
//   - Settings → API keys: the account's keys, which administrators create
//     (the key shown once) and delete, and other members see;
//   - Settings → Members: the account's users; administrators invite more;
//   - Brokers: connect a broker (OAuth, returning here), sync, disconnect,
//     the portfolio's positions and the sync log; for a paper account, a
//     button that signs the user in to the paper broker's account page,
//     where they create and revoke the account's Alpaca-style API keys;
//   - Orders: the orders placed through the user's connections, newest
//     first, 20 a page, with their status, prices, fill and reject
//     reason; a pending one can be cancelled at its broker;
//   - Guardrails: the limits every order is checked against, to view and
//     edit, with the API's rules (brokers.GuardrailsPatch.Check);
//   - Copy trading: the leaderboard, follows with their controls, and
//     notifications.
//   - Watchlists, Alerts and Webhooks: watchlists with each asset's latest
//     close, change and indicator summary; alerts with their firings;
//     webhooks (the signing secret shown once) with their deliveries.
//
// It is server-rendered HTML (html/template, embedded), usable without
// JavaScript and on a phone; every form reports errors beside its fields.
// Sessions are billing sessions: the cookie tk_session holds a random
// token (HttpOnly, SameSite=Lax, Secure when the request came over TLS),
// the database its hash, so any instance serves any session. Every form
// carries a CSRF token: the session's own once signed in, and before that
// a random token also set in the cookie tk_csrf (double submit), so that a
// form posted from another site is refused with 403. Failed sign-ins are
// throttled per (email, client address) pair and per address
// (billing.SignInThrottle), so that nobody can lock a user out from
// another address; while the password-hashing slots stay taken
// (billing.ErrPasswordBusy) sign-in answers 503 with Retry-After. Forms
// are read only as application/x-www-form-urlencoded, up to
// [MaxFormBytes], never as multipart; a page runs only the inline script
// and style that carry its response's Content-Security-Policy nonce.
package dashboard
