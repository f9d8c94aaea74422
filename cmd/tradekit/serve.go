package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"golang.org/x/sync/errgroup"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
	"github.com/tradekit/tradekit/server"
)

func (e *env) serve(ctx context.Context, args []string) error {
	fs, dsn := e.flags("serve", "[--addr HOST:PORT] [--public-url URL] [--db DSN] [--db-listen DSN] [--no-seed] [--allow-private-webhooks]\n"+
		"               [--log-format text|json] [--sync-interval DURATION] [--paper-cash AMOUNT] [--paper-slippage-bps BPS]\n"+
		"               [--paper-commission AMOUNT] [--paper-signups-per-hour N] [--paper-requests-per-minute N]\n"+
		"               [--metrics | --metrics-addr HOST:PORT]\n"+
		"               [--exit-with-parent] [--db-replica DSN]... [--replica-max-lag DURATION]\n"+
		"               [--feed massive|alpaca] [--feed-at HH:MM] [--feed-backfill DAYS]",
		"Apply pending migrations, load the demo data set into a database that holds no assets (unless\n"+
			"--no-seed), and serve the API until SIGINT or SIGTERM. Under go run, it also stops when go run\n"+
			"exits (Linux); for a server in the background, build the binary: go build -o bin/tradekit ./cmd/tradekit.")
	addr := fs.String("addr", "127.0.0.1:8080", "the address to listen on, `HOST:PORT`")
	publicURL := fs.String("public-url", "", "the `URL` browsers reach this server at, the base of the paper broker's pages and\n"+
		"the OAuth callback (default http://ADDR)")
	dbListen := fs.String("db-listen", e.getenv("TRADEKIT_DB_LISTEN"), "a direct PostgreSQL `DSN` for LISTEN/NOTIFY when --db leads to a transaction pooler\n"+
		"(PgBouncer in transaction mode, say), which keeps no LISTEN; without it, copies and alerts\n"+
		"poll there (env TRADEKIT_DB_LISTEN)")
	noSeed := fs.Bool("no-seed", false, "do not load the demo data set into an empty database")
	allowPrivateWebhooks := fs.Bool("allow-private-webhooks", false, "let webhooks reach loopback, private, link-local and other special-purpose addresses (tests and local use only)")
	syncInterval := fs.Duration("sync-interval", 15*time.Minute, "how often active broker connections sync, a `DURATION` such as 15m; 0 never")
	paperCash := fs.String("paper-cash", "100000", "the cash a new paper account starts with, in `USD`")
	paperSlippage := fs.String("paper-slippage-bps", "0", "the paper broker's slippage on market orders, in `BPS` (basis points) of the latest close")
	paperCommission := fs.String("paper-commission", "0", "the paper broker's commission per filled order, in `USD`")
	paperSignups := fs.Int("paper-signups-per-hour", portal.DefaultSignupLimit, "how many paper accounts one client address (an IP, or an IPv6 /64) may open\n"+
		"in a UTC hour, `N`; 0 no limit (behind a reverse proxy every client is the proxy)")
	paperRequests := fs.Int("paper-requests-per-minute", paper.DefaultRateLimit, "how many requests one paper account may make to the paper broker's API in a UTC\n"+
		"minute, `N` (Alpaca's limit); 0 no limit")
	logFormat := fs.String("log-format", "text", "the log `FORMAT`: text or json")
	metrics := fs.Bool("metrics", false, "serve GET /metrics (Prometheus text format, no API key) on the API's listener")
	metricsAddr := fs.String("metrics-addr", "", "serve GET /metrics alone on its own listener at `HOST:PORT` instead, e.g. one\n"+
		"that only the scraper's network reaches")
	exitWithParent := fs.Bool("exit-with-parent", false, "stop, as on SIGTERM, when the process that started serve exits (Linux only). On by\n"+
		"default when that process is go run, so that stopping go run by its PID stops the server;\n"+
		"--exit-with-parent=false turns that off")
	replicaDSNs := &dsnList{}
	for _, d := range strings.Split(e.getenv("TRADEKIT_DB_REPLICAS"), ",") {
		if d = strings.TrimSpace(d); d != "" {
			replicaDSNs.dsns = append(replicaDSNs.dsns, d)
		}
	}
	fs.Var(replicaDSNs, "db-replica", "a PostgreSQL streaming replica of --db, a postgres:// `DSN`, to answer read-only\n"+
		"market-data queries while within --replica-max-lag of the primary; repeat for several\n"+
		"(env TRADEKIT_DB_REPLICAS, comma-separated, which the flags replace). Writes, trading,\n"+
		"billing and keys stay on --db")
	maxLag := fs.Duration("replica-max-lag", 5*time.Second, "how far behind the primary a replica may be and still answer reads, a `DURATION`;\n"+
		"measured by WAL position every second, so an idle replica of an idle primary counts as current")
	feedOpts := addFeedFlags(fs)
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *maxLag <= 0 {
		return fmt.Errorf("serve: --replica-max-lag must be positive, got %s", *maxLag)
	}
	if len(replicaDSNs.dsns) > 0 && !database.IsPostgres(*dsn) {
		return fmt.Errorf("serve: --db-replica needs a PostgreSQL --db (a postgres:// DSN)")
	}
	for _, d := range replicaDSNs.dsns {
		if !database.IsPostgres(d) {
			return fmt.Errorf("serve: --db-replica must be a postgres:// or postgresql:// DSN")
		}
	}
	cash, err := decimal.NewFromString(*paperCash)
	if err != nil || !cash.IsPositive() || cash.GreaterThan(decimal.New(1, 15)) || cash.Exponent() < -2 {
		return fmt.Errorf("serve: --paper-cash must be a positive amount of at most 10^15 with at most 2 decimals, got %q", *paperCash)
	}
	slippage, err := decimal.NewFromString(*paperSlippage)
	if err != nil || slippage.IsNegative() || slippage.GreaterThanOrEqual(decimal.New(10000, 0)) || !slippage.Equal(slippage.Truncate(2)) {
		return fmt.Errorf("serve: --paper-slippage-bps must be from 0 to below 10000 with at most 2 decimals, got %q", *paperSlippage)
	}
	commission, err := decimal.NewFromString(*paperCommission)
	if err != nil || commission.IsNegative() || commission.GreaterThan(decimal.New(1, 6)) || !commission.Equal(commission.Truncate(2)) {
		return fmt.Errorf("serve: --paper-commission must be from 0 to 10^6 with at most 2 decimals, got %q", *paperCommission)
	}
	if *metrics && *metricsAddr != "" {
		return fmt.Errorf("serve: give --metrics (on the API's listener) or --metrics-addr (on its own), not both")
	}
	if *dbListen != "" && (!database.IsPostgres(*dbListen) || !database.IsPostgres(*dsn)) {
		return fmt.Errorf("serve: --db-listen takes a PostgreSQL DSN (postgres://…), for a PostgreSQL --db")
	}
	if *paperSignups < 0 {
		return fmt.Errorf("serve: --paper-signups-per-hour must be 0 (no limit) or more, got %d", *paperSignups)
	}
	if *paperRequests < 0 {
		return fmt.Errorf("serve: --paper-requests-per-minute must be 0 (no limit) or more, got %d", *paperRequests)
	}
	var h slog.Handler
	switch *logFormat {
	case "text":
		h = slog.NewTextHandler(e.stderr, nil)
	case "json":
		h = slog.NewJSONHandler(e.stderr, nil)
	default:
		return fmt.Errorf("serve: --log-format must be text or json, got %q", *logFormat)
	}
	log := slog.New(h)
	// The last line of a server that served: deferred first, so that it
	// runs when everything deferred below has stopped and been waited for.
	served := false
	defer func() {
		if served {
			log.Info("stopped")
		}
	}()
	// What can be checked is checked before the database is migrated and
	// seeded, which takes seconds: the address, that its port is free,
	// the public URL and the secret key.
	if err := checkAddr("--addr", *addr); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if *metricsAddr != "" {
		if err := checkAddr("--metrics-addr", *metricsAddr); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
	}
	l, err := listen("--addr", *addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer l.Close()
	var ml net.Listener
	if *metricsAddr != "" {
		if ml, err = listen("--metrics-addr", *metricsAddr); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		defer ml.Close()
	}
	if err := watchParent(fs, *exitWithParent, log); err != nil {
		return err
	}
	db, err := database.Open(ctx, *dsn, database.Options{Timeout: apiTimeout, ListenDSN: *dbListen, Logger: log})
	if err != nil {
		return err
	}
	defer db.Close()
	brokers, err := e.brokersConfig(ctx, db, *dsn, *publicURL, l, log)
	if err != nil {
		return err
	}
	if _, err := database.Migrate(ctx, db); err != nil {
		return err
	}
	if !*noSeed && *feedOpts.provider == "" { // with --feed, the data comes from the provider
		if err := e.seedIfEmpty(ctx, *dsn, log); err != nil {
			return err
		}
	}
	tp, stopTracing, err := e.tracing(ctx, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	traceQueries(db, tp)
	if err := warnIfDemo(ctx, db, log); err != nil {
		return err
	}
	// Replicas open lazily: one that is down does not hold serve up.
	replicas := database.NewReplicas(db, replicaDSNs.dsns, database.ReplicasConfig{MaxLag: *maxLag,
		Options: database.Options{Timeout: apiTimeout}, Logger: log, Opened: func(r *bun.DB) { traceQueries(r, tp) }})
	// Not stopped by ctx: in-flight requests still read from the replicas
	// while shutdown lets them finish. Stopped, and waited for, once Serve
	// has returned and before db closes.
	defer runInBackground(context.WithoutCancel(ctx), replicas.Run)()
	// The profile build writes for long: it gets a handle of its own,
	// without the API's timeout.
	build, err := database.Open(ctx, *dsn, database.Options{})
	if err != nil {
		return err
	}
	defer build.Close()
	feeds, err := e.feedService(feedOpts, build, log)
	if err != nil {
		return err
	}
	defer buildProfilesInBackground(ctx, build, log)() // stopped and waited for before build closes
	brokers.PaperCash, brokers.PaperSlippageBps, brokers.PaperCommission = cash, slippage, commission
	brokers.PaperSignupsPerHour = *paperSignups
	if *paperSignups == 0 {
		brokers.PaperSignupsPerHour = -1 // server.BrokersConfig: negative is no limit
	}
	brokers.PaperRequestsPerMinute = *paperRequests
	if *paperRequests == 0 {
		brokers.PaperRequestsPerMinute = -1 // server.BrokersConfig: negative is no limit
	}
	brokers.SyncInterval = *syncInterval
	if *syncInterval <= 0 {
		brokers.SyncInterval = -1 // server.BrokersConfig: negative is never
	}
	srv := server.New(server.Config{Logger: log, Brokers: brokers, AllowPrivateWebhooks: *allowPrivateWebhooks,
		Metrics: *metrics, TracerProvider: tp, Replicas: replicas, Collectors: feeds.collectors()}, db)
	defer feeds.start(ctx)() // stopped and waited for before build closes
	log.Info("dashboard", "url", strings.TrimSuffix(brokers.PublicURL, "/")+"/dashboard/")
	served = true
	if ml == nil {
		return srv.Serve(ctx, l)
	}
	return serveBoth(ctx, func(ctx context.Context) error { return srv.Serve(ctx, l) },
		func(ctx context.Context) error { return serveMetrics(ctx, ml, srv.MetricsHandler(), log) })
}

// checkAddr checks that addr, the value of the flag name, is a listening
// address, host:port with an empty host for every interface: "8095" or
// "localhost" alone is the common slip, and Go's own error for it ("missing
// port in address") says nothing of what to give.
func checkAddr(name, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err == nil && port != "" {
		n, perr := strconv.Atoi(port)
		if perr != nil || n < 0 || n > 65535 {
			if _, lerr := net.LookupPort("tcp", port); lerr != nil {
				return fmt.Errorf("%s %s: the port %s is not a number from 0 to 65535", name, tradekit.Quote(addr), tradekit.Quote(port))
			}
		}
		if strings.ContainsAny(host, " /") {
			err = errors.New("bad host")
		}
	}
	if err != nil || port == "" {
		return fmt.Errorf("%s %s: give host:port, e.g. :8095 or 127.0.0.1:8095", name, tradekit.Quote(addr))
	}
	return nil
}

// listen listens on addr, the value of the flag name, saying so when
// another process holds its port.
func listen(name, addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("%s %s: the port is in use by another process (another tradekit serve?): stop it or give another port", name, tradekit.Quote(addr))
	case err != nil:
		return nil, fmt.Errorf("%s %s: %w", name, tradekit.Quote(addr), err)
	}
	return l, nil
}

// dsnList is the value of a repeatable DSN flag. Its first Set replaces
// the DSNs taken from the environment. It prints as nothing, so that help
// shows no password.
type dsnList struct {
	dsns []string
	set  bool
}

func (l *dsnList) String() string { return "" }

func (l *dsnList) Set(v string) error {
	if !l.set {
		l.dsns, l.set = nil, true
	}
	l.dsns = append(l.dsns, v)
	return nil
}

// runInBackground runs fn in a goroutine until ctx is done or the
// returned stop is called; stop waits for fn to return.
func runInBackground(ctx context.Context, fn func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// serveBoth runs api and metrics until ctx is done or either fails, and
// returns the first error.
func serveBoth(ctx context.Context, api, metrics func(context.Context) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return api(ctx) })
	g.Go(func() error { return metrics(ctx) })
	return g.Wait()
}

// brokersConfig returns the broker configuration: the public URL (by
// default that of the listener), the secret key and the alpaca provider.
// On PostgreSQL without TRADEKIT_SECRET_KEY it is an error when active
// connections hold tokens, or live webhooks signing secrets, sealed under
// a key; with none, the server starts and refuses new connections and
// webhooks saying what to set. db need not be migrated yet (see
// [env.secretKey]): serve calls it before it migrates and seeds.
func (e *env) brokersConfig(ctx context.Context, db *bun.DB, dsn, publicURL string, l net.Listener, log *slog.Logger) (server.BrokersConfig, error) {
	if publicURL == "" {
		publicURL = "http://" + l.Addr().String()
	}
	if u, err := url.Parse(publicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return server.BrokersConfig{}, fmt.Errorf("serve: --public-url must be an absolute http or https URL without query or fragment, got %q", publicURL)
	}
	key, err := e.secretKey(ctx, db, dsn, log)
	if err != nil {
		return server.BrokersConfig{}, err
	}
	if key == nil {
		// db may not be migrated yet: a table it lacks holds nothing.
		tables, err := existingTables(ctx, db)
		if err != nil {
			return server.BrokersConfig{}, fmt.Errorf("serve: %w", err)
		}
		var n int
		if tables["broker_connections"] {
			if n, err = connect.NewStore(db).CountAllActive(ctx); err != nil {
				return server.BrokersConfig{}, fmt.Errorf("serve: %w", err)
			}
		}
		if n > 0 {
			return server.BrokersConfig{}, fmt.Errorf("serve: the database holds active broker connections (%d) whose tokens are sealed with TRADEKIT_SECRET_KEY: set it", n)
		}
		if tables["webhooks"] {
			if n, err = alerts.CountSealedWebhooks(ctx, db); err != nil {
				return server.BrokersConfig{}, fmt.Errorf("serve: %w", err)
			}
		}
		if n > 0 {
			return server.BrokersConfig{}, fmt.Errorf("serve: the database holds webhooks (%d) whose signing secrets are sealed with TRADEKIT_SECRET_KEY: set it", n)
		}
		log.Warn("TRADEKIT_SECRET_KEY is not set: broker connections and webhooks are refused until it is (base64 of 32 random bytes, the same on every instance)")
	}
	alpaca, err := e.alpacaConfig()
	if err != nil {
		return server.BrokersConfig{}, err
	}
	return server.BrokersConfig{PublicURL: publicURL, SecretKey: key, Alpaca: alpaca}, nil
}

// apiTimeout bounds each wait of the server's PostgreSQL connections for a
// statement's reply (see [database.Options]): API queries take
// milliseconds, so a request fails within seconds when the database hangs
// or the network drops, instead of holding its connection.
const apiTimeout = 5 * time.Second

// warnIfDemo logs a warning when the database holds the demo data set:
// on every start that serves it, not only the one that loaded it.
func warnIfDemo(ctx context.Context, db *bun.DB, log *slog.Logger) error {
	ok, err := demo.IsLoaded(ctx, marketdata.NewStore(db))
	if err != nil || !ok {
		return err
	}
	log.Warn("the database holds the demo data set: its prices are SYNTHETIC and describe no real security, " +
		"its companies are fictional; import real data with 'tradekit import'")
	return nil
}
