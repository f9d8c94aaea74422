package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"flag"
	"log/slog"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/examples/internal/docblock"
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
	set, err := demo.Generate(demo.Config{}) // the set tradekit serve seeds, so the figures are the documented ones
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
	got := shortIDs(out.String())
	if *update {
		if err := docblock.Replace(apiDoc, walkthroughCmd, got); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := docblock.After(apiDoc, walkthroughCmd)
	if err != nil {
		t.Fatal(err)
	}
	if normalIDs(got) != normalIDs(want) {
		t.Errorf("%s shows an output the walkthrough does not print (go test ./examples/trading -run Walkthrough -update rewrites it):\n%s",
			apiDoc, docblock.Diff(normalIDs(want), normalIDs(got)))
	}
}

// update rewrites the documented output with what the code prints.
var update = flag.Bool("update", false, "rewrite the walkthrough's output in docs/api.md")

const (
	// apiDoc shows the walkthrough's output in the fenced block that
	// follows the one running it (walkthroughCmd).
	apiDoc         = "../../docs/api.md"
	walkthroughCmd = "go run ./examples/trading"
)

// uuidPattern matches a UUID.
var uuidPattern = regexp.MustCompile(`\b([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)

// shortIDs shortens every UUID in s to its first 8 digits and "-…", as
// the documentation shows ids that change on every run.
func shortIDs(s string) string { return uuidPattern.ReplaceAllString(s, "$1-…") }

// shortID matches an id as shortIDs writes it.
var shortID = regexp.MustCompile(`\b[0-9a-f]{8}-…`)

// normalIDs replaces every shortened id in s with "…", for comparing
// outputs of runs whose ids differ.
func normalIDs(s string) string { return shortID.ReplaceAllString(s, "…") }

// TestNoKey checks the hint given without a key: a keys create command
// that runs as written, with the --name it requires.
func TestNoKey(t *testing.T) {
	t.Setenv("TRADEKIT_KEY", "")
	err := run(context.Background(), nil, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "-key is required") || !strings.Contains(err.Error(), "keys create --email you@example.com --name ") {
		t.Errorf("run without a key: %v", err)
	}
}

// TestDocCommands checks the package comment's keys create command: it
// carries the --name that keys create requires.
func TestDocCommands(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(src), "\n") {
		if strings.Contains(line, "keys create") && !strings.Contains(line, "--name ") {
			t.Errorf("a keys create command without --name: %s", strings.TrimSpace(line))
		}
	}
}

// TestGuardrailTightened checks that the walkthrough's guardrail is
// tighter than the default it says it tightens.
func TestGuardrailTightened(t *testing.T) {
	if def := brokers.DefaultGuardrails().MaxPositionSizePct; !decimal.RequireFromString(maxPositionPct).LessThan(def) {
		t.Errorf("the walkthrough sets maxPositionSizePct %s, not below the default %s", maxPositionPct, def)
	}
}
