package server

import (
	"net/http"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
)

// trace wraps next in a span per request when [Config.TracerProvider] is
// set: named "HTTP <method>" until the router names it by its route (see
// [setRoute]), and the child of the caller's span when the request
// carries a W3C traceparent header.
func (s *Server) trace(next http.Handler) http.Handler {
	tp := s.cfg.TracerProvider
	if tp == nil {
		return next
	}
	return otelhttp.NewHandler(next, "HTTP",
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return "HTTP " + r.Method }))
}

// brokerClient returns the HTTP client that reaches the brokers:
// BrokersConfig.HTTPClient (nil leaves the choice to package connect),
// and with [Config.TracerProvider] set, that client (or connect's
// default) with a span around each call, whose context travels to the
// broker in a traceparent header.
func (s *Server) brokerClient() *http.Client {
	c := s.cfg.Brokers.HTTPClient
	tp := s.cfg.TracerProvider
	if tp == nil {
		return c
	}
	var traced http.Client
	if c != nil {
		traced = *c
	} else {
		// connect's default: see connect.Config.HTTPClient.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		traced = http.Client{Timeout: 30 * time.Second, Transport: t}
	}
	traced.Transport = otelhttp.NewTransport(traced.Transport,
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return "broker " + r.Method + " " + r.URL.Host }))
	return &traced
}
