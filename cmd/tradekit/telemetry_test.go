package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestServeMetricsAddr runs serve with --metrics-addr and an OTLP
// endpoint: the metrics answer on their own listener with no key (and
// not on the API's), and the spans of the requests reach the endpoint
// by the time serve has stopped.
func TestServeMetricsAddr(t *testing.T) {
	var traces atomic.Int32
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" && r.URL.Path == "/v1/traces" {
			traces.Add(1)
		}
		io.Copy(io.Discard, r.Body)
	}))
	defer collector.Close()
	// The exporter reads the standard variables from the process.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	env := map[string]string{"TRADEKIT_DB": filepath.Join(t.TempDir(), "t.db"), "OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL}
	addr, metricsAddr := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var log bytes.Buffer
	go func() {
		done <- run(ctx, []string{"serve", "--no-seed", "--addr", addr, "--metrics-addr", metricsAddr},
			func(k string) string { return env[k] }, strings.NewReader(""), &bytes.Buffer{}, &log)
	}()
	waitHealthy(t, "http://"+addr+"/healthz")
	body := func(url string) (int, string) {
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, b := body("http://" + metricsAddr + "/metrics"); code != 200 || !strings.Contains(b, `tradekit_http_requests_total{method="GET",route="/healthz",status="200"}`) {
		t.Errorf("GET /metrics on --metrics-addr: %d\n%s", code, b)
	}
	if code, _ := body("http://" + addr + "/metrics"); code != 404 {
		t.Errorf("GET /metrics on the API's listener with --metrics-addr: %d, want 404", code)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v\n%s", err, log.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	if traces.Load() == 0 {
		t.Errorf("no spans reached the OTLP endpoint; log:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "trace_id=") {
		t.Errorf("the request log names no trace id:\n%s", log.String())
	}
}

// TestServeMetricsFlags: --metrics and --metrics-addr exclude each other.
func TestServeMetricsFlags(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TRADEKIT_DB": filepath.Join(t.TempDir(), "t.db")}
	_, err := cli(t, env, "serve", "--metrics", "--metrics-addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("serve --metrics --metrics-addr: %v", err)
	}
}
