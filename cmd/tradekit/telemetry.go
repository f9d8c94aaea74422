package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/extra/bunotel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// tracing starts OpenTelemetry tracing when OTEL_EXPORTER_OTLP_ENDPOINT
// is set: spans go in batches to that OTLP/HTTP endpoint (its /v1/traces).
// The exporter and the SDK read the standard OTEL_* variables themselves
// (OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, …);
// the service name defaults to "tradekit". It returns nil and a no-op
// stop when the variable is unset; stop flushes the spans still queued.
func (e *env) tracing(ctx context.Context, log *slog.Logger) (tp trace.TracerProvider, stop func(), err error) {
	endpoint := e.getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	if endpoint == "" {
		return nil, func() {}, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("serve: OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "tradekit")), resource.WithFromEnv())
	if err != nil {
		return nil, nil, fmt.Errorf("serve: OpenTelemetry resource: %w", err)
	}
	sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	log.Info("tracing to OTLP", "endpoint", endpoint)
	return sdk, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sdk.Shutdown(ctx); err != nil {
			log.Warn("flushing traces failed", "err", err)
		}
	}, nil
}

// traceQueries adds a span per query of db, a child of the request's
// span, when tp is set. Spans carry the statement with its placeholders,
// never the values bound to them.
func traceQueries(db *bun.DB, tp trace.TracerProvider) {
	if tp == nil {
		return
	}
	db.AddQueryHook(bunotel.NewQueryHook(bunotel.WithTracerProvider(tp),
		bunotel.WithMeterProvider(noop.NewMeterProvider()), bunotel.WithDBName("tradekit")))
}

// serveMetrics serves h, the metrics, on l until ctx is done: the
// listener of `serve --metrics-addr`.
func serveMetrics(ctx context.Context, l net.Listener, h http.Handler, log *slog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	log.Info("serving metrics", "addr", "http://"+l.Addr().String()+"/metrics")
	select {
	case err := <-errc:
		return fmt.Errorf("serve: metrics: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("serve: metrics: shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: metrics: %w", err)
	}
	return nil
}
