// Package server serves Tradekit as the /api/v1 HTTP JSON interface of the
// API specification, on uptrace/bunrouter.
//
// Every /api/v1 route is listed in one table, [Server.routeTable], with the
// struct that declares its parameters; one strict decoder (params.go)
// checks them before the handler runs. Handlers are thin: they call a
// domain service or store, which [New] builds once and keeps in the
// [Server], and write the envelope: {"data": …} for a resource or a list,
// {"data": […], "meta": {total, page, limit}} for a paginated list. No
// handler builds a store, opens a transaction or runs SQL, here or in
// package dashboard, to which New gives the stores and services its pages
// use and which keeps no database (thin_test.go fails when either
// package does). Handlers return errors and never write error statuses
// themselves: errors.go is the one place where the error codes of package
// tradekit ([tradekit.Code]) become HTTP statuses, for the API and for
// the dashboard's refusals alike, and errors the {"error": {"code",
// "message", "details"}} envelope, its message and details those of
// [tradekit.Message] and [tradekit.Details].
//
// Every request passes, outermost first, through the layers that
// [Server.Handler] stacks:
//
//   - tracing (trace.go): a span per request when a TracerProvider is set;
//   - the request log (middleware.go): an id (the caller's X-Request-Id
//     when it is sane, else a new one) returned in X-Request-Id and written
//     in the request's slog line with method, route, status, bytes and
//     duration, and the request's metrics; panics are recovered here as
//     500 INTERNAL without leaking anything;
//   - the body policy (body.go): multipart refused with 415, bodies over
//     64 KiB with 413, before anything else reads them;
//   - the screen (screen.go): oversized headers, control characters or
//     invalid UTF-8 in the path or query, malformed query strings and
//     bodies under /api/v1 are refused before routing, and the path is
//     given to the router escaped one way;
//   - the mounts (trading.go): /paper/ to the paper broker, /dashboard/ to
//     the dashboard, /metrics when enabled, the rest to the router;
//   - gzip (gzip.go) of the API's JSON answers for clients that take it;
//   - the router, and for each /api/v1 route: authentication
//     (Authorization: Bearer tk_…) but on the public ones (the roadmap),
//     through billing.Authenticator; the rate limit of the key owner's
//     plan, per minute and per day, shared by every instance on the same
//     database, reported in X-RateLimit-* and the IETF draft's
//     RateLimit-Policy and RateLimit headers, a spent window answering 429
//     RATE_LIMITED with Retry-After; then the parameters' decoder.
//
// When the database cannot be reached, requests that need it answer 503
// UNAVAILABLE with Retry-After, as does /readyz; the server keeps running
// and recovers by itself once the database is back.
package server
