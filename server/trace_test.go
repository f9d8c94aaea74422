package server_test

import (
	"testing"

	"github.com/uptrace/bun"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// TestTraceSpans checks that with a TracerProvider each request gets a
// span named by its method and route pattern, never its path.
func TestTraceSpans(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		spans := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
		t.Cleanup(func() { tp.Shutdown(t.Context()) })
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, TracerProvider: tp}, db).Handler()
		key := mustKey(t, db, "trace@example.com", "pro")
		sendUnchecked(t, h, "GET", "/api/v1/market-data/assets/00000000-0000-4000-8000-000000000001", key)
		got := spans.GetSpans()
		if len(got) != 1 {
			t.Fatalf("%d spans, want 1: %v", len(got), got)
		}
		s := got[0]
		if s.Name != "GET /api/v1/market-data/assets/:id" {
			t.Errorf("span name %q", s.Name)
		}
		want := attribute.String("http.route", "/api/v1/market-data/assets/:id")
		found := false
		for _, a := range s.Attributes {
			found = found || a == want
		}
		if !found {
			t.Errorf("span attributes %v lack %v", s.Attributes, want)
		}
	})
}
