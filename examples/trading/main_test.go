package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
	"github.com/tradekit/tradekit/server"
)

// TestWalkthrough runs the walkthrough, as docs/api.md documents it, against
// a server with the demo data set and its paper broker.
func TestWalkthrough(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("generates the demo data set")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := dbtest.SQLite(t)
	set, err := demo.Generate(demo.Config{Start: calendar.DateOf(time.Now().UTC()).AddDays(-400)})
	if err != nil {
		t.Fatal(err)
	}
	if err := marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
		return demo.Load(ctx, st, set)
	}); err != nil {
		t.Fatal(err)
	}
	st := billing.NewStore(db)
	plan, err := st.Plan(ctx, "pro")
	if err != nil {
		t.Fatal(err)
	}
	u := billing.User{Email: "you@example.com", Name: "You", PlanID: plan.ID}
	if err := st.CreateUser(ctx, &u, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, key, err := st.CreateKey(ctx, u.ID, "walkthrough", time.Now())
	if err != nil {
		t.Fatal(err)
	}

	ts := httptest.NewUnstartedServer(nil)
	secret := make([]byte, 32)
	rand.Read(secret)
	srv := server.New(server.Config{Logger: slog.New(slog.DiscardHandler),
		Brokers: server.BrokersConfig{PublicURL: "http://" + ts.Listener.Addr().String(), SecretKey: secret}}, db)
	ts.Config.Handler = srv.Handler()
	ts.Start()
	defer ts.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Maintain(ctx) // the paper broker's matching engine, the order tracker
	}()
	defer func() { cancel(); <-done }()

	var out bytes.Buffer
	if err := run(ctx, []string{"-url", ts.URL, "-key", key}, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	t.Log("\n" + out.String())
	for _, want := range []string{
		": active", "synced: completed", "guardrails: at most 25% of equity", "preview: accepted true",
		"market buy ", "limit buy ", ": pending, then cancelled", ": disconnected",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the walkthrough's output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestNoKey(t *testing.T) {
	t.Setenv("TRADEKIT_KEY", "")
	if err := run(context.Background(), nil, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "-key is required") {
		t.Errorf("run without a key: %v", err)
	}
}
