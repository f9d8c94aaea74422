package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-playground/validator/v10"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"
	"go.opentelemetry.io/otel/trace"

	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/alerts/webhook"
	"github.com/tradekit/tradekit/backtest/backtestdb"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/lru"
	"github.com/tradekit/tradekit/knowledge"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/feed"
	"github.com/tradekit/tradekit/profiles/profiledb"
	"github.com/tradekit/tradekit/studies"
)

// Config configures a [Server]. The zero value gives the defaults.
type Config struct {
	// Logger receives the request log and errors. Default slog.Default().
	Logger *slog.Logger
	// Auth tunes the API-key cache; see billing.AuthConfig.
	Auth billing.AuthConfig
	// ReadTimeout and WriteTimeout bound a request's reading and the
	// writing of its response. Defaults 15 s and 60 s.
	ReadTimeout, WriteTimeout time.Duration
	// ShutdownTimeout bounds how long in-flight requests may take to
	// finish once shutdown starts. Default 30 s.
	ShutdownTimeout time.Duration
	// Now is the clock of the times the server writes and of those it
	// compares data with: rate-limit windows, scheduled blog posts, keys'
	// last use and revocation, orders, connections and copy trading.
	// Timeouts, polls and cache lifetimes measure real time. Default
	// time.Now.
	Now func() time.Time
	// CacheBytes bounds the memory of the encoded answers the server
	// keeps per price version: price lists, indicator series and their
	// gzip forms (a full history of 2,770 days is about 750 KB as JSON,
	// 85 KB gzipped; 10 years of an indicator about 110 KB). Default 64 MiB.
	CacheBytes int
	// Studies tunes the indicator service and its cache.
	Studies studies.Config
	// Knowledge is the blog, glossary and roadmap content. Default: the
	// pack embedded in package knowledge.
	Knowledge *knowledge.Pack
	// Brokers configures broker connections and the paper broker.
	Brokers BrokersConfig
	// AllowPrivateWebhooks lets webhooks reach addresses outside the
	// public internet: loopback, private, link-local and the other IANA
	// special-purpose ranges (serve --allow-private-webhooks): for tests
	// and local use only.
	AllowPrivateWebhooks bool
	// Passwords are the Argon2id parameters of the dashboard's new and
	// upgraded password hashes. Default billing.DefaultPasswordParams();
	// tests that sign in many times may set cheaper ones.
	Passwords billing.PasswordParams
	// Alerts tunes alert evaluation and webhook deliveries; its Now,
	// Logger, Limits and Transport are set by New.
	Alerts alerts.Config
	// Metrics serves GET /metrics (Prometheus text format, no API key) on
	// [Server.Handler]. The metrics are collected either way; see
	// [Server.MetricsHandler] to serve them elsewhere.
	Metrics bool
	// TracerProvider, when set, receives a span for each HTTP request
	// (named by its route pattern) and for each call to a broker made
	// through the default broker HTTP client. Database spans come from a
	// query hook on the *bun.DB, which its opener adds. Nil: no spans.
	TracerProvider trace.TracerProvider
	// Replicas, when set, answers the read-only market-data queries
	// (assets, prices, indicators, summaries, profiles, exchanges,
	// indexes, industries) on streaming replicas that are current, and
	// the primary otherwise; its primary must be the database given to
	// New. The caller runs its Run. Writes, the trading path, billing,
	// keys and anything that reads its own writes stay on the primary.
	// Nil: every query goes to the database given to New.
	Replicas *database.Replicas
	// Collectors are more Prometheus collectors to serve with the
	// server's metrics, such as the market-data feed's of serve --feed.
	Collectors []prometheus.Collector
}

// Server is the Tradekit HTTP API over one database. It is stateless
// beyond bounded caches: several Servers on one PostgreSQL behave as one.
type Server struct {
	db        *bun.DB // handed to the services, the stores and the dashboard as New builds them; else only pinged (databaseAnswers)
	cfg       Config
	log       *slog.Logger
	now       func() time.Time
	validate  *validator.Validate // checks parameter structs (see params.go)
	auth      *billing.Authenticator
	limiter   *billing.Limiter
	handler   http.Handler
	routes    []route
	routeSet  map[routeKey]bool // the routes by method and pattern
	knowledge *knowledge.Pack
	studies   *studies.Service
	paper     *paper.Broker
	// paperPortal is the paper broker's OAuth server and account pages,
	// mounted at paperPrefix in front of its API.
	paperPortal *portal.Portal
	connect     *connect.Service
	copy        *copytrading.Service
	alerts      *alerts.Service
	sealer      *connect.Sealer // seals broker tokens and webhook secrets; nil without a SecretKey
	// The stores the handlers read and write through; built once by New,
	// as the services are. No handler builds a store or runs SQL of its
	// own (thin_test.go).
	market    *marketdata.Reads   // assets, prices, industries, indexes, exchanges: on a current replica if any
	marketdb  *marketdata.Store   // the same on the primary, for valuations and backtests
	billing   *billing.Store      // plans, users, rate counters, sessions
	feeds     *feed.Store         // the market-data feeds' runs, days and next runs
	trading   *connect.Store      // connections, sync logs, portfolios, orders
	custom    *studies.Store      // custom indicators
	backtests *backtestdb.Service // backtests run within the plans' bounds, and their results
	profiles  *profiledb.Reads    // asset profiles, on a current replica if any
	docs      *lru.Cache          // encoded answers: *priceDocument, *seriesDocument, gzipped bodies ([]byte)
	metrics   *metrics
	idPrefix  string
	seq       atomic.Uint64
}

// New returns a Server on db, which must be migrated.
func New(cfg Config, db *bun.DB) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 15 * time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 60 * time.Second
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Knowledge == nil {
		pack, err := knowledge.Load()
		if err != nil {
			// The embedded pack is validated by the knowledge tests: only
			// a broken build gets here.
			panic("server: the embedded knowledge pack is invalid: " + err.Error())
		}
		cfg.Knowledge = pack
	}
	if cfg.Auth.Logger == nil {
		cfg.Auth.Logger = cfg.Logger
	}
	if cfg.Auth.Now == nil {
		cfg.Auth.Now = cfg.Now
	}
	if cfg.Studies.Logger == nil {
		cfg.Studies.Logger = cfg.Logger
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = 64 << 20
	}
	if cfg.Replicas == nil {
		cfg.Replicas = database.NewReplicas(db, nil, database.ReplicasConfig{})
	}
	reads := marketdata.NewReads(cfg.Replicas.Read)
	if cfg.Studies.Reads == nil {
		cfg.Studies.Reads = reads
	}
	s := &Server{
		db:        db,
		cfg:       cfg,
		log:       cfg.Logger,
		now:       cfg.Now,
		validate:  newValidator(),
		auth:      billing.NewAuthenticator(db, cfg.Auth),
		limiter:   billing.NewLimiter(db),
		idPrefix:  newIDPrefix(),
		knowledge: cfg.Knowledge,
		studies:   studies.New(db, cfg.Studies),
		metrics:   newMetrics(db),
		market:    reads,
		marketdb:  marketdata.NewStore(db),
		feeds:     feed.NewStore(db),
		billing:   billing.NewStore(db),
		trading:   connect.NewStore(db),
		custom:    studies.NewStore(db),
		backtests: backtestdb.New(db, backtestdb.ServiceConfig{Now: cfg.Now}),
		profiles:  profiledb.NewReads(cfg.Replicas.Read),
	}
	s.metrics.reg.MustRegister(replicaCollector{cfg.Replicas})
	s.metrics.reg.MustRegister(cfg.Collectors...)
	s.newTrading()
	s.docs = lru.New(cfg.CacheBytes)
	s.copy = copytrading.New(db, copytrading.Config{Orders: s.connect, Now: s.now, Logger: s.log,
		CopyPlaced: s.metrics.copyPlaced})
	s.alerts = s.newAlerts(cfg.Alerts)
	s.routes = s.routeTable()
	s.routeSet = make(map[routeKey]bool, len(s.routes))
	for _, rt := range s.routes {
		s.routeSet[routeKey{rt.method, rt.path}] = true
	}
	s.handler = s.trace(s.logRequests(s.limitBodies(s.screen(s.mount(gzipJSON(s.router(s.routes)))))))
	return s
}

// newAlerts returns the alerts service: the plan's counts and formula
// cost and the users' accounts (whose alerts share a turn of evaluation)
// from billing,
// a webhook client that refuses private destinations unless the
// configuration allows them, and the sealer of broker tokens for webhook
// secrets (without a SecretKey, webhooks are refused).
func (s *Server) newAlerts(cfg alerts.Config) *alerts.Service {
	cfg.Now, cfg.Logger, cfg.Observe = s.now, s.log, s.metrics.alertsObserver()
	cfg.Limits = func(ctx context.Context, userID uuid.UUID) (int, int, error) {
		p, err := s.billing.PlanOf(ctx, userID)
		return p.Features.Watchlists, p.Features.Alerts, err
	}
	cfg.AccountOf = s.billing.AccountsOf
	cfg.FormulaCost = func(ctx context.Context, userID uuid.UUID) (int, error) {
		p, err := s.billing.PlanOf(ctx, userID)
		return p.Features.FormulaCost, err
	}
	cfg.Account = s.billing.AccountOf
	cfg.Transport = &webhook.Client{AllowPrivate: s.cfg.AllowPrivateWebhooks}
	cfg.Sealer = s.sealer
	return alerts.New(s.db, cfg)
}

// Handler returns the server's HTTP handler: every route, behind the
// request log and the request-body policy (see [MaxBodyBytes]).
func (s *Server) Handler() http.Handler {
	return s.handler
}

// Maintain runs the server's background work until ctx is done: the poll
// for keys revoked elsewhere, listening for price changes (see
// [studies.Service.Watch]), giving back the unused part of rate-limit
// leases when their minute ends, the pruning of old rate-limit
// counters and of expired dashboard sessions and invitations, scheduled
// broker syncs and the order tracker (see [connect.Service.Run]), the
// paper broker's matching engine (see [paper.Broker.Run]), the
// copy-trading engine (see [copytrading.Service.Run]) and alert
// evaluation with webhook deliveries (see [alerts.Service.Run]). It returns once
// that work has stopped, the last key-use times written, every lease
// given back and every sync it started finished. [Server.Serve] runs it; tests that use [Server.Handler]
// directly may.
func (s *Server) Maintain(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(6)
	go func() {
		defer wg.Done()
		s.alerts.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		s.auth.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		s.paper.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		s.copy.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		s.connect.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		s.studies.Watch(ctx)
	}()
	defer func() {
		// Unused leases would otherwise count against their users until
		// the day ends.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.limiter.Close(ctx); err != nil {
			s.log.Warn("giving back rate-limit leases failed", "err", err)
		}
	}()
	flush := time.NewTicker(5 * time.Second)
	defer flush.Stop()
	prune := time.NewTicker(10 * time.Minute)
	defer prune.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-flush.C:
			if err := s.limiter.Flush(ctx, s.now()); err != nil && ctx.Err() == nil {
				s.log.Warn("giving back rate-limit leases failed", "err", err)
			}
		case <-prune.C:
			// Keep yesterday's counters; nothing reads older ones.
			if err := s.billing.PruneCounters(ctx, s.now().Add(-48*time.Hour)); err != nil && ctx.Err() == nil {
				s.log.Warn("pruning rate counters failed", "err", err)
			}
			if _, err := s.billing.DeleteExpiredSessions(ctx, s.now()); err != nil && ctx.Err() == nil {
				s.log.Warn("deleting expired dashboard sessions failed", "err", err)
			}
		}
	}
}

// Serve accepts connections on l until ctx is done, then stops accepting,
// lets in-flight requests finish (up to Config.ShutdownTimeout) and
// returns. The paper broker's trade-update streams are cut at once (see
// [paper.Broker.EndStreams]). It logs one line with the address once it
// accepts connections.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// The paper broker's trade-update streams never finish of themselves:
	// cut them when shutdown starts, so that their clients reconnect and
	// shutdown need not wait them out.
	srv.RegisterOnShutdown(s.paper.EndStreams)
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	maintained := make(chan struct{})
	go func() {
		s.Maintain(bg)
		close(maintained)
	}()
	// On return, stop the background work and wait for it, so that the
	// caller may close the database.
	defer func() {
		stop()
		<-maintained
	}()

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	s.log.Info("listening", "addr", "http://"+l.Addr().String())
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("server: shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}
