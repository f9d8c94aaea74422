// Command faultrun is the trading fault run behind scripts/faults: it
// trades through two `tradekit serve` instances that share one
// PostgreSQL database while it SIGKILLs one instance and restarts the
// database, then checks from the database and the requests it made that
// nothing was lost, doubled or left half done.
//
// Usage (scripts/faults builds the binaries and passes -bin):
//
//	faultrun -bin PATH [-seconds 40] [-workers 4] [-rate 4] [-settle 90s] [-faults kill,pg] [-pgbouncer] [-strict-latency] [-keep]
//
// The run, all on loopback:
//
//  1. Setup: a throwaway PostgreSQL server started from the machine's
//     binaries (as internal/dbtest starts one for the tests), `tradekit
//     migrate`, `seed` and `profiles build` on it, three users with API
//     keys on the business plan (a leader and two followers), and two
//     `tradekit serve` instances, A and B, on the same database with the
//     same TRADEKIT_SECRET_KEY, each with --public-url of its own address.
//     Each user connects a paper account through the OAuth flow, driven
//     over HTTP as a browser would (the consent form with its paper_csrf
//     cookie, the redirect to the callback), and raises its guardrails so
//     that they refuse nothing. The leader publishes its portfolio; both
//     followers follow it with auto-sync on. With -pgbouncer, the
//     instances' --db goes through a PgBouncer in transaction pooling
//     mode in front of the server (started as internal/dbtest starts
//     one), and their --db-listen, when serve has it, is the server's
//     own DSN; the CLI and the checks go to the server directly.
//  2. Load: for -seconds, -workers goroutines place the leader's market
//     orders (buys, and partial sells of what it bought, on a few demo
//     stocks) through A and B alternately, each with a unique
//     clientOrderId, at -rate requests a second in all (at most 9: the
//     business plan allows 600 a minute). On a network error or a 5xx an order
//     is sent again with the same clientOrderId, on the other instance
//     when one is down, until it is answered.
//  3. Faults (-faults chooses them; "none" measures the load alone): at
//     30 % of the load instance B is killed with SIGKILL and started
//     again 4 s later ("kill"); at 65 % PostgreSQL is restarted, a fast
//     shutdown then a start ("pg"). Each fault's window runs from the
//     fault until the service answers /readyz again, plus 2 s.
//  4. Settle: the run waits, at most -settle, until no order is pending,
//     every leader fill reached the leader's portfolio and every (fill,
//     follow) pair has been taken up by the copy engine.
//  5. Invariants, each printed PASS or FAIL with its numbers:
//     (1) every order answered 200 exists exactly once in broker_orders,
//     none is left pending, and Tradekit and the paper broker agree on
//     each order; (2) every leader fill is taken up exactly once per
//     follow, none is left claimed, and every copy order exists once;
//     (3) every paper account's cash and positions equal the replay of
//     its fills; (4) no 5xx answer and no failed connection outside the
//     fault windows, over every API request the run made; (5) the copy
//     latency, from the leader's fill to the copy order, p50 ≤ 100 ms and
//     p99 ≤ 500 ms outside the fault windows: printed always, enforced
//     only with -strict-latency. The run also prints the longest time a
//     copy event stayed claimed, the takeover time after the SIGKILL when
//     an instance died holding a claim.
//
// The run fails, too, when it never became quiescent. The exit status is
// 0 when invariants 1–4 hold (and 5 with -strict-latency), 1 when one
// fails, 2 when the run could not be carried out. Every process and
// temporary directory is removed on exit, on SIGINT and SIGTERM too
// (with -keep, the instances' logs stay and their directory is printed).
package main
