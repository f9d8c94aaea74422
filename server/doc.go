// Package server serves Tradekit as the /api/v1 HTTP JSON interface of the
// API specification, on uptrace/bunrouter.
//
// Every route is listed in one function, [Server.Handler]. Handlers are thin:
// they parse and validate parameters, call a domain package and write the
// envelope: {"data": …} for a resource or a list, {"data": […], "meta":
// {total, page, limit}} for a paginated list. Handlers return errors and
// never write error statuses themselves: errors.go is the one place where
// the error kinds of package tradekit become HTTP statuses and the
// {"error": {"code", "message", "details"}} envelope.
//
// Every request passes, outermost first, through:
//
//   - the request log: an id (the caller's X-Request-Id when it is sane,
//     else a new one) returned in X-Request-Id and written in the request's
//     slog line with method, path, status, bytes and duration; panics are
//     recovered here as 500 INTERNAL without leaking anything;
//   - authentication (Authorization: Bearer tk_…) on every /api/v1 route
//     but the public ones (the roadmap), through billing.Authenticator;
//   - the rate limit of the key owner's plan, per minute and per day,
//     shared by every instance on the same database, reported on every
//     response in X-RateLimit-Limit, X-RateLimit-Remaining and
//     X-RateLimit-Reset (Unix seconds) for the tighter window; a spent
//     window answers 429 RATE_LIMITED with Retry-After.
//
// When the database cannot be reached, requests that need it answer 503
// UNAVAILABLE with Retry-After, as does /readyz; the server keeps running
// and recovers by itself once the database is back.
package server
