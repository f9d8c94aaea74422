// Package billing holds Tradekit's accounts, API keys, plans and rate limits.
//
// # Plans
//
// A [Plan] has a price (a decimal, exact in both databases) and feature
// limits: requests per minute and per day, watchlists, portfolios and
// alerts. The plans are part of the schema: free (30 requests a minute,
// 1,000 a day), pro (120 and 10,000, 29 USD a month) and business (600 and
// 100,000, 99 USD a month).
//
// # Dashboard sign-in
//
// A user may have a password for the account dashboard. [HashPassword]
// stores it as Argon2id (RFC 9106; 64 MiB, 3 passes, 2 lanes, a 16-byte
// salt, a 32-byte key) in the PHC string format, and [Store.SignIn] checks
// it in constant time, upgrading a hash made with older parameters. An
// unknown email, a user without a password and a wrong password give the
// same error in the same time.
//
// Each hash holds its memory (64 MiB) while it runs, so a process runs at
// most GOMAXPROCS lanes of hashing at once: GOMAXPROCS/2 hashes of 2
// lanes, which keep every CPU busy. The others wait up to [PasswordWait]
// (1 s) for their slots and then fail with [ErrPasswordBusy], which the
// server answers with 503 and Retry-After. An unknown email takes its
// slots too.
//
// A session ([Store.CreateSession]) is a random 256-bit token in the
// cookie, of which the database keeps only the SHA-256, with a second
// random token that every form of the session must return (CSRF). Failed
// sign-ins are counted in the database ([Store.SignInThrottled]), so the
// throttle holds across instances: per (email, client address) pair, which
// is what locks (5 in 15 minutes), so that nobody can lock a user out from
// another address; and per address (20 in 15 minutes), which bounds the
// guesses one address spreads over many emails ([SignInThrottle]).
//
// # API keys
//
// A key is the fixed prefix "tk_" followed by 40 base32 characters holding
// 200 random bits. Only the SHA-256 hash of the whole key is stored, with a
// short display prefix; the full key is shown once, when it is created.
// Keys are revoked, never deleted, so their history stays; revoking a
// revoked key is a conflict ([Store.RevokeKey]).
//
// [Authenticator] resolves a presented key to its owner and plan. It keeps
// what it learned in memory, so that in steady state authentication makes no
// database round trip. The staleness is bounded:
//
//   - a key revoked through this Authenticator stops working at once;
//   - a key revoked elsewhere (the CLI, another server instance) stops
//     working within [AuthConfig.PollInterval] plus the query time: every
//     instance asks the database for recently revoked keys once a second,
//     and stops trusting its cache if it could not ask for
//     [AuthConfig.MaxStaleness] (5 s);
//   - a plan change reaches a cached key within [AuthConfig.TTL] (60 s).
//
// A key that resolves to nothing is remembered as unknown for the same TTL
// (10,000 such keys at most, the oldest forgotten first), so a repeated bad
// key costs no lookup. A client, as the caller names it (the server uses
// the IP address, or the /64 network for IPv6), may cause
// [AuthConfig.FailuresPerMinute] (30) failed authentications in a UTC
// minute; past that, a key that is not cached is refused with a
// [*ThrottledError] until the minute ends, without a lookup, so a flood of
// random keys costs the database at most that many queries per client.
// One client's failures never throttle another: past 10,000 clients in a
// minute, new ones go uncounted rather than share a count.
//
// It also notes when each key was last used: the time of the last request
// it accepted with the key, written to the database every
// [AuthConfig.TouchInterval] (30 s) and when [Authenticator.Run] returns.
// A later time already stored, such as another instance's, is kept.
//
// # Rate limits
//
// Limits are counted per account, in two fixed windows aligned on UTC:
// the current minute and the current day. The members of an account
// share its allowance, so inviting members never multiplies the plan. The counters live in the database, so
// several server instances sharing one PostgreSQL enforce one limit. A
// request is counted by one atomic upsert of both windows; when either
// count passes its limit the request is refused and both increments are
// taken back, so refused requests do not use up the allowance.
//
// A server counts through a [Limiter], which leases: while an account has much
// of the minute left, one upsert counts up to 64 requests (never more than
// 1/16 of what is left) and the next ones pass from memory, so a busy account
// costs one round trip in dozens. Requests are counted before they are
// allowed, so no process ever lets more than the limit through; near the
// limit leases shrink to one request and counting is exact. Unused leased
// requests go back to the day's count when their minute ends.
package billing
