package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestServeReplicaFlags: replicas need a PostgreSQL --db, are PostgreSQL
// DSNs themselves, and the bound on lag is positive.
func TestServeReplicaFlags(t *testing.T) {
	t.Parallel()
	sqlite := filepath.Join(t.TempDir(), "t.db")
	for _, tt := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"TRADEKIT_DB": sqlite}, []string{"--db-replica", "postgres://r1/tk"}, "needs a PostgreSQL --db"},
		{map[string]string{"TRADEKIT_DB": sqlite, "TRADEKIT_DB_REPLICAS": "postgres://r1/tk, postgres://r2/tk"}, nil, "needs a PostgreSQL --db"},
		{map[string]string{"TRADEKIT_DB": "postgres://p/tk"}, []string{"--db-replica", "replica.db"}, "must be a postgres://"},
		{map[string]string{"TRADEKIT_DB": sqlite}, []string{"--replica-max-lag", "0s"}, "must be positive"},
	} {
		_, err := cli(t, tt.env, append([]string{"serve", "--no-seed"}, tt.args...)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("serve %v with %v: %v, want an error saying %q", tt.args, tt.env, err, tt.want)
		}
	}
}

// TestServeReplicaDown runs serve on PostgreSQL with a replica that
// nothing answers (from TRADEKIT_DB_REPLICAS): serve starts, answers from
// the primary, and reports the replica down in its metrics and its log.
func TestServeReplicaDown(t *testing.T) {
	dsn := dbtest.PostgresDSN(t)
	down := "postgres://postgres@" + freeAddr(t) + "/tk?sslmode=disable"
	env := map[string]string{"TRADEKIT_DB": dsn, "TRADEKIT_DB_REPLICAS": down}
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	var log bytes.Buffer
	go func() {
		done <- run(ctx, []string{"serve", "--no-seed", "--addr", addr, "--metrics", "--replica-max-lag", "2s"},
			func(k string) string { return env[k] }, strings.NewReader(""), &bytes.Buffer{}, &log)
	}()
	waitHealthy(t, "http://"+addr+"/healthz")
	res, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("GET /readyz with the replica down: %d, want 200", res.StatusCode)
	}
	res, err = http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if want := `tradekit_db_replica_up{replica="` + strings.TrimPrefix(strings.TrimSuffix(down, "?sslmode=disable"), "postgres://postgres@") + `"} 0`; !strings.Contains(string(b), want) {
		t.Errorf("GET /metrics lacks %s:\n%s", want, b)
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
	if !strings.Contains(log.String(), "read replica skipped") {
		t.Errorf("the log does not say the replica is skipped:\n%s", log.String())
	}
}
