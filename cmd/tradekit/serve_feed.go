package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata/feed"
)

// feedFlags are serve's flags of the daily market-data feed.
type feedFlags struct {
	provider *string
	at       *string
	backfill *int
}

// addFeedFlags adds --feed, --feed-at and --feed-backfill to serve's flags.
func addFeedFlags(fs *flagSet) *feedFlags {
	return &feedFlags{
		provider: fs.String("feed", "", "keep market data current from `PROVIDER`, massive or alpaca: a run daily after the close\n"+
			"(--feed-at) by the NYSE calendar and a backfill at start; one instance at a time runs it\n"+
			"(keys from the environment, see docs/feeds.md). An empty database gets no demo data set"),
		at: fs.String("feed-at", "18:00", "the time of the daily feed run, `HH:MM` in America/New_York"),
		backfill: fs.Int("feed-backfill", 30, "on start, fetch the trading days missed since the last stored bar, at most `DAYS`\n"+
			"calendar days back"),
	}
}

// feedService is the feed that serve runs: its scheduler and metrics.
type feedService struct {
	sched   *feed.Scheduler
	metrics []prometheus.Collector
}

// feedService checks the flags and returns the feed to run, or nil
// without --feed.
func (e *env) feedService(f *feedFlags, db *bun.DB, log *slog.Logger) (*feedService, error) {
	if *f.provider == "" {
		return nil, nil
	}
	at, err := parseClock(*f.at)
	if err != nil {
		return nil, fmt.Errorf("serve: --feed-at %w", err)
	}
	if *f.backfill < 1 || *f.backfill > 3660 {
		return nil, fmt.Errorf("serve: --feed-backfill must be from 1 to 3660 days, got %d", *f.backfill)
	}
	runs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tradekit_feed_runs_total",
		Help: "Market-data feed runs that had days to fetch, by provider and outcome (ok, partial, failed).",
	}, []string{"provider", "outcome"})
	rows := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tradekit_feed_rows_total",
		Help: "Daily bars stored by the market-data feed, by provider.",
	}, []string{"provider"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "tradekit_feed_provider_request_duration_seconds",
		Help:    "Time of the market-data provider's answers, by provider and status class (2xx, 4xx, 5xx, error).",
		Buckets: prometheus.DefBuckets,
	}, []string{"provider", "status"})
	name := *f.provider
	p, err := e.feedProvider(name, 0, func(d time.Duration, status int) {
		class := "error"
		if status > 0 {
			class = strconv.Itoa(status/100) + "xx"
		}
		latency.WithLabelValues(name, class).Observe(d.Seconds())
	})
	if err != nil {
		return nil, fmt.Errorf("serve: --feed: %w", err)
	}
	cal, _ := calendar.Lookup("XNYS")
	sched := &feed.Scheduler{Runner: &feed.Runner{DB: db, Provider: p, Calendar: cal, Instance: instanceName()},
		At: at, Backfill: *f.backfill,
		Ran: func(res feed.Result, err error, d time.Duration) {
			if res.RunID == [16]byte{} {
				log.Error("market-data feed", "provider", name, "err", err)
				return
			}
			outcome := feed.OutcomeOK
			switch {
			case len(res.Failed) > 0 && res.Fetched > 0:
				outcome = feed.OutcomePartial
			case len(res.Failed) > 0 || err != nil:
				outcome = feed.OutcomeFailed
			}
			runs.WithLabelValues(name, outcome).Inc()
			rows.WithLabelValues(name).Add(float64(res.Rows))
			if err == nil {
				err = res.Err()
			}
			if err != nil {
				log.Warn("market-data feed run", "provider", name, "summary", res.String(), "duration", d.Round(time.Millisecond), "err", err)
				return
			}
			log.Info("market-data feed run", "provider", name, "summary", res.String(), "duration", d.Round(time.Millisecond))
		}}
	if err := sched.Validate(); err != nil {
		return nil, fmt.Errorf("serve: --feed: %w", err)
	}
	return &feedService{sched: sched, metrics: []prometheus.Collector{runs, rows, latency}}, nil
}

// start runs the feed in the background until ctx is done or the
// returned stop is called; stop waits for it. A nil feed does nothing.
func (f *feedService) start(ctx context.Context) (stop func()) {
	if f == nil {
		return func() {}
	}
	return runInBackground(ctx, func(ctx context.Context) { f.sched.Run(ctx) })
}

// collectors returns the feed's metrics, none for a nil feed.
func (f *feedService) collectors() []prometheus.Collector {
	if f == nil {
		return nil
	}
	return f.metrics
}

// parseClock parses HH:MM into the time since midnight.
func parseClock(s string) (time.Duration, error) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		return 0, fmt.Errorf("must be HH:MM, 00:00 to 23:59, got %q", s)
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute, nil
}

// instanceName names this process as a lease holder: the host name, the
// process id and a random suffix, unique across instances.
func instanceName() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	rand.Read(b)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))
}
