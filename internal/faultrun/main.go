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

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// config is the run's command line.
type config struct {
	bin           string        // the tradekit binary
	seconds       int           // how long the leader trades
	workers       int           // concurrent order placers
	rate          float64       // leader requests a second, retries included
	settle        time.Duration // the most the run waits for quiescence
	strictLatency bool          // whether invariant 5 decides the exit status
	kill, restart bool          // which faults to inject: the SIGKILL, the PostgreSQL restart
	keep          bool          // keep the instances' logs
	pgbouncer     bool          // put PgBouncer between the instances and PostgreSQL
}

// main reads the command line, carries out the run and exits with its
// status.
func main() {
	var cfg config
	flag.StringVar(&cfg.bin, "bin", "", "the tradekit `binary` to run (required)")
	flag.IntVar(&cfg.seconds, "seconds", 40, "how long the leader trades, in `seconds` (at least 20)")
	flag.IntVar(&cfg.workers, "workers", 4, "concurrent workers placing the leader's orders")
	flag.Float64Var(&cfg.rate, "rate", 4, "the leader's requests a second across workers, retries included (at most 9)")
	flag.DurationVar(&cfg.settle, "settle", 90*time.Second, "the most to wait for quiescence after the load")
	flag.BoolVar(&cfg.strictLatency, "strict-latency", false, "fail the run when the copy latency misses its targets")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the instances' logs, and print where")
	flag.BoolVar(&cfg.pgbouncer, "pgbouncer", false, "serve through a PgBouncer in transaction pooling mode, with --db-listen the server's own DSN")
	faults := flag.String("faults", "kill,pg", "the `faults` to inject, comma-separated: kill (SIGKILL of B), pg (PostgreSQL restart); none for neither")
	flag.Parse()
	for _, f := range strings.Split(*faults, ",") {
		switch f {
		case "kill":
			cfg.kill = true
		case "pg":
			cfg.restart = true
		case "none":
		default:
			cfg.bin = "" // bad flag: print the usage
		}
	}
	if cfg.bin == "" || cfg.seconds < 20 || cfg.workers < 1 || cfg.rate <= 0 || cfg.rate > 9 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ok, err := run(ctx, cfg)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

// run carries out the whole run and reports whether the invariants that
// decide the exit status hold. An error means the run could not be
// carried out, or was interrupted. Everything it started is stopped and
// removed before it returns.
func run(ctx context.Context, cfg config) (bool, error) {
	start := time.Now()
	say := func(format string, args ...any) {
		fmt.Printf("[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}

	c, err := startCluster(ctx, cfg, say)
	if c != nil {
		defer c.close()
	}
	if err != nil {
		return false, err
	}
	a := newAPI(c)
	users, err := setup(ctx, a, c, say)
	if err != nil {
		c.dumpLogs()
		return false, err
	}

	say("load: %d s, %d workers, %g requests/s through A and B", cfg.seconds, cfg.workers, cfg.rate)
	l := newLoad(a, c, users, cfg)
	loadStart := time.Now()
	faultsDone := make(chan []window, 1)
	go func() { faultsDone <- runFaults(ctx, c, cfg, loadStart, say) }()
	l.run(ctx, loadStart.Add(time.Duration(cfg.seconds)*time.Second))
	windows := <-faultsDone
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	say("load done: %s", l.summary())

	db, err := c.openDB(ctx)
	if err != nil {
		return false, err
	}
	defer db.Close()
	ck := &checker{db: db, users: users, load: l, rec: a.rec, windows: windows, strictLatency: cfg.strictLatency}
	took, quiet, err := ck.settle(ctx, cfg.settle)
	if err != nil {
		return false, err
	}
	if quiet {
		say("quiescent %.1f s after the load", took.Seconds())
	} else {
		say("NOT quiescent after %.0f s: %s", took.Seconds(), ck.lastState)
	}
	ok, err := ck.report(ctx, os.Stdout, quiet)
	if err != nil {
		return false, err
	}
	if !ok {
		c.dumpLogs()
	}
	if ok {
		say("done: every invariant holds")
	} else {
		say("done: an invariant FAILED")
	}
	return ok, nil
}
