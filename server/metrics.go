package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/connect"
)

// The fixed route labels of the requests that no API route matched.
const (
	routeUnmatched = "unmatched"    // no route: a 404 or 405
	routeMetrics   = "/metrics"     // the metrics themselves
	routeDashboard = "/dashboard/*" // the dashboard's pages and assets
	routePaper     = "/paper/*"     // the built-in paper broker
)

// metrics are the server's Prometheus collectors, on a registry of its
// own: several Servers in one process (tests) never share a series. Every
// label takes its values from a small fixed set: route patterns (never
// raw paths), methods, statuses, guardrail rules, outcomes and plan slugs.
type metrics struct {
	reg *prometheus.Registry

	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	inFlight    prometheus.Gauge
	cache       *prometheus.CounterVec
	placement   *prometheus.HistogramVec
	guardrails  *prometheus.CounterVec
	copyLag     prometheus.Histogram
	syncs       *prometheus.CounterVec
	syncTime    prometheus.Histogram
	rateLimited *prometheus.CounterVec
	alertPasses prometheus.Histogram
	alertFires  prometheus.Counter
	deliveries  *prometheus.HistogramVec
}

// newMetrics returns the collectors, registered with the Go runtime's,
// the process's and db's connection pool's.
func newMetrics(db *bun.DB) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tradekit_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tradekit_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern, method and status.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method", "status"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tradekit_http_requests_in_flight",
			Help: "HTTP requests being answered now.",
		}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tradekit_cache_requests_total",
			Help: "Look-ups of the encoded-answer cache, by cache (prices, indicators) and result (hit, miss).",
		}, []string{"cache", "result"}),
		placement: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tradekit_order_placement_duration_seconds",
			Help:    "Time to place an order (checks, recording, sending to the broker), by outcome.",
			Buckets: prometheus.DefBuckets,
		}, []string{"outcome"}),
		guardrails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tradekit_guardrail_rejections_total",
			Help: "Guardrail rules broken by orders placed, by rule.",
		}, []string{"rule"}),
		copyLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tradekit_copy_lag_seconds",
			Help:    "Time from a leader's fill to the placement of a follower's copy order.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900},
		}),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tradekit_broker_syncs_total",
			Help: "Broker connection syncs ended, by outcome (completed, failed).",
		}, []string{"outcome"}),
		syncTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tradekit_broker_sync_duration_seconds",
			Help:    "Time a broker connection sync ran.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120},
		}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tradekit_rate_limit_rejections_total",
			Help: "Requests refused with 429 because the key owner's plan limit was spent, by plan.",
		}, []string{"plan"}),
		alertPasses: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tradekit_alert_evaluation_duration_seconds",
			Help:    "Time an alert evaluation pass ran (every alert whose asset's prices changed).",
			Buckets: []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}),
		alertFires: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tradekit_alert_firings_total",
			Help: "Alert firings made by this instance's evaluation passes.",
		}),
		deliveries: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tradekit_webhook_delivery_duration_seconds",
			Help:    "Time a webhook receiver took to answer a delivery attempt, by outcome (succeeded, retry, failed).",
			Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}, []string{"outcome"}),
	}
	m.reg.MustRegister(m.requests, m.duration, m.inFlight, m.cache, m.placement, m.guardrails,
		m.copyLag, m.syncs, m.syncTime, m.rateLimited, m.alertPasses, m.alertFires, m.deliveries,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(db.DB, "tradekit"))
	// The label values known in advance start at zero, so that rates and
	// ratios exist before the first event.
	for _, c := range []string{cachePrices, cacheIndicators} {
		m.cache.WithLabelValues(c, "hit")
		m.cache.WithLabelValues(c, "miss")
	}
	for _, r := range []string{brokers.RuleMaxDailyTrades, brokers.RuleMaxPositionSizePct,
		brokers.RuleMaxPortfolioRiskPct, brokers.RuleStopLossRequired, brokers.RuleAllowedAssetTypes} {
		m.guardrails.WithLabelValues(r)
	}
	m.syncs.WithLabelValues(connect.OutcomeCompleted)
	m.syncs.WithLabelValues(connect.OutcomeFailed)
	for _, o := range []string{alerts.DeliverySucceeded, alerts.DeliveryRetry, alerts.DeliveryFailed} {
		m.deliveries.WithLabelValues(o)
	}
	return m
}

// handler serves the metrics in Prometheus's text format (or
// OpenMetrics, when the scraper asks for it).
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// The methods below that record requests do nothing on a nil *metrics:
// the bare Servers of the package's own tests have none.

// started counts a request in flight until finished.
func (m *metrics) started() {
	if m != nil {
		m.inFlight.Inc()
	}
}

// finished ends a request that started.
func (m *metrics) finished() {
	if m != nil {
		m.inFlight.Dec()
	}
}

// limited counts a request refused by the rate limit of the plan.
func (m *metrics) limited(plan string) {
	if m != nil {
		m.rateLimited.WithLabelValues(plan).Inc()
	}
}

// request records an answered request.
func (m *metrics) request(route, method string, status int, d time.Duration) {
	if m == nil {
		return
	}
	code := strconv.Itoa(status)
	method = methodLabel(method)
	m.requests.WithLabelValues(route, method, code).Inc()
	m.duration.WithLabelValues(route, method, code).Observe(d.Seconds())
}

// methodLabel returns method, or "OTHER" for a method no route serves,
// so that a client cannot grow the label's values.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return method
	}
	return "OTHER"
}

// The caches whose hits are counted.
const (
	cachePrices     = "prices"
	cacheIndicators = "indicators"
)

// cacheLookup records a look-up of the named cache.
func (m *metrics) cacheLookup(cache string, hit bool) {
	result := "miss"
	if hit {
		result = "hit"
	}
	m.cache.WithLabelValues(cache, result).Inc()
}

// connectObserver returns the hooks of the connection service.
func (m *metrics) connectObserver() connect.Observer {
	return connect.Observer{
		OrderPlaced: func(d time.Duration, outcome string) {
			m.placement.WithLabelValues(outcome).Observe(d.Seconds())
		},
		GuardrailRejected: func(rule string) { m.guardrails.WithLabelValues(rule).Inc() },
		SyncDone: func(outcome string, d time.Duration) {
			m.syncs.WithLabelValues(outcome).Inc()
			m.syncTime.Observe(d.Seconds())
		},
	}
}

// alertsObserver returns the hooks of the alert service.
func (m *metrics) alertsObserver() alerts.Observer {
	return alerts.Observer{
		Evaluated: func(fired int, d time.Duration) {
			m.alertPasses.Observe(d.Seconds())
			m.alertFires.Add(float64(fired))
		},
		Delivered: func(outcome string, latency time.Duration) {
			m.deliveries.WithLabelValues(outcome).Observe(latency.Seconds())
		},
	}
}

// copyPlaced records the lag of a copy order.
func (m *metrics) copyPlaced(lag time.Duration) { m.copyLag.Observe(lag.Seconds()) }

// MetricsHandler returns the handler of GET /metrics: the server's
// metrics in the Prometheus text format, with no API key. [Config.Metrics]
// serves it on [Server.Handler] too; `tradekit serve --metrics-addr`
// serves it alone on a listener of its own.
func (s *Server) MetricsHandler() http.Handler {
	return s.metrics.handler()
}
