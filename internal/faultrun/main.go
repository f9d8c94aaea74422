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
