package alerts_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/alerts/webhook"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/seal"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/marketdata"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// nyse is the id of the NYSE row every migrated database holds.
var nyse = uuid.MustParse("d30d4255-6f11-5d39-a7d1-bbef5fbe2ec8")

// day0 is the date of the first bar of the test series.
var day0 = calendar.NewDate(2026, time.January, 5)

// fixture is a database with a user, an asset with prices and a Service.
type fixture struct {
	db    *bun.DB
	svc   *alerts.Service
	user  uuid.UUID
	asset uuid.UUID
	days  int // bars saved so far
}

// newFixture returns a fixture on db with an asset whose first n closes
// are 100, 101, … and a user on the pro plan (10 watchlists, 50 alerts).
func newFixture(t *testing.T, db *bun.DB, n int) *fixture {
	t.Helper()
	ctx := context.Background()
	bs := billing.NewStore(db)
	p, err := bs.Plan(ctx, "pro")
	if err != nil {
		t.Fatal(err)
	}
	u := billing.User{Email: uuid.NewString() + "@example.com", Name: "Test", PlanID: p.ID}
	if err := bs.CreateUser(ctx, &u, time.Now()); err != nil {
		t.Fatal(err)
	}
	a := marketdata.Asset{Symbol: "ALRT", Name: "Alert Corp", Type: marketdata.Stock, ExchangeID: nyse, Currency: "USD", IsActive: true}
	if err := marketdata.NewStore(db).SaveAsset(ctx, &a); err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: db, user: u.ID, asset: a.ID}
	f.svc = newService(db, alerts.Config{})
	f.save(t, closes(100, n)...)
	return f
}

// testSealer seals the webhook secrets of the tests' Services.
var testSealer, _ = seal.New([]byte("0123456789abcdef0123456789abcdef"))

// newService returns a Service on db with the plan's limits read from
// billing, a webhook client that reaches loopback, and testSealer unless
// cfg names a Sealer.
func newService(db *bun.DB, cfg alerts.Config) *alerts.Service {
	if cfg.Sealer == nil {
		cfg.Sealer = testSealer
	}
	cfg.Limits = func(ctx context.Context, userID uuid.UUID) (int, int, error) {
		p, err := billing.NewStore(db).PlanOf(ctx, userID)
		return p.Features.Watchlists, p.Features.Alerts, err
	}
	if cfg.Transport == nil {
		cfg.Transport = &webhook.Client{AllowPrivate: true, Timeout: 2 * time.Second}
	}
	return alerts.New(db, cfg)
}

// mustAlert creates the alert in for the fixture's user, on the
// fixture's asset unless in names one.
func (f *fixture) mustAlert(t *testing.T, in alerts.AlertInput) alerts.Alert {
	t.Helper()
	if in.AssetID == uuid.Nil {
		in.AssetID = f.asset
	}
	a, err := f.svc.CreateAlert(context.Background(), f.user, in)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// closes returns n closes from first up by 1.
func closes(first float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = first + float64(i)
	}
	return out
}

// save appends bars with the closes to the asset's history through
// marketdata's SavePrices, one trading day each.
func (f *fixture) save(t *testing.T, cs ...float64) {
	t.Helper()
	var ps []marketdata.Price
	for _, c := range cs {
		d := decimal.NewFromFloat(c)
		ps = append(ps, marketdata.Price{AssetID: f.asset, Date: day0.AddDays(f.days), Open: d, High: d.Add(decimal.New(1, 0)),
			Low: d.Sub(decimal.New(1, 0)), Close: d, Volume: 1000})
		f.days++
	}
	if len(ps) == 0 {
		return
	}
	if err := marketdata.NewStore(f.db).SavePrices(context.Background(), ps); err != nil {
		t.Fatal(err)
	}
}

// evaluate runs one pass of svc and returns its firings.
func evaluate(t *testing.T, svc *alerts.Service) int {
	t.Helper()
	n, err := svc.Evaluate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// countRows returns the rows of table matching where.
func countRows(t *testing.T, db bun.IDB, table, where string, args ...any) int {
	t.Helper()
	n, err := db.NewSelect().Table(table).Where(where, args...).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWatchlists(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 3)
		w, err := f.svc.CreateWatchlist(ctx, f.user, "Tech")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.AddAsset(ctx, f.user, w.ID, f.asset); err != nil {
			t.Fatal(err)
		}
		got, err := f.svc.AddAsset(ctx, f.user, w.ID, f.asset) // again: no change
		if err != nil || got.AssetCount != 1 {
			t.Fatalf("AddAsset twice: count %d, %v; want 1, nil", got.AssetCount, err)
		}
		if _, err := f.svc.AddAsset(ctx, f.user, w.ID, uuid.New()); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("AddAsset(unknown asset) = %v, want ErrNotFound", err)
		}
		if _, err := f.svc.RenameWatchlist(ctx, f.user, w.ID, "Semis"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.svc.Watchlist(ctx, uuid.New(), w.ID); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("another user's Watchlist = %v, want ErrNotFound", err)
		}
		w2, items, err := f.svc.Watchlist(ctx, f.user, w.ID)
		if err != nil || w2.Name != "Semis" || len(items) != 1 || items[0].Symbol != "ALRT" {
			t.Fatalf("Watchlist = %+v, %+v, %v", w2, items, err)
		}
		if err := f.svc.RemoveAsset(ctx, f.user, w.ID, f.asset); err != nil {
			t.Fatal(err)
		}
		if err := f.svc.RemoveAsset(ctx, f.user, w.ID, f.asset); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("RemoveAsset twice = %v, want ErrNotFound", err)
		}
		if err := f.svc.DeleteWatchlist(ctx, f.user, w.ID); err != nil {
			t.Fatal(err)
		}
		list, err := f.svc.Watchlists(ctx, f.user)
		if err != nil || len(list) != 0 {
			t.Fatalf("Watchlists after delete = %v, %v", list, err)
		}
	})
}

// TestPlanLimitSingular checks the free plan's refusal of a second
// watchlist: it says "1 watchlist", not "1 watchlists" (issue 40).
func TestPlanLimitSingular(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		svc, user := newService(db, alerts.Config{}), mustUser(t, db, "free")
		if _, err := svc.CreateWatchlist(ctx, user, "first"); err != nil {
			t.Fatal(err)
		}
		_, err := svc.CreateWatchlist(ctx, user, "second")
		const want = "your plan allows 1 watchlist; delete one or move to a larger plan"
		var te *tradekit.Error
		if !errors.As(err, &te) || te.Msg != want {
			t.Errorf("second watchlist on the free plan: %v, want %q", err, want)
		}
	})
}

func TestPlanLimits(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 3)
		for i := range 10 { // pro: 10 watchlists
			if _, err := f.svc.CreateWatchlist(ctx, f.user, "list"); err != nil {
				t.Fatalf("watchlist %d: %v", i+1, err)
			}
		}
		_, err := f.svc.CreateWatchlist(ctx, f.user, "one too many")
		var te *tradekit.Error
		if !errors.As(err, &te) || !errors.Is(err, tradekit.ErrForbidden) || te.Details["limit"] != "watchlists" {
			t.Fatalf("11th watchlist: %v, want ErrForbidden with limit watchlists", err)
		}
		in := alerts.AlertInput{AssetID: f.asset, Name: "a", Condition: "close > 1000", Once: true}
		for i := range 50 { // pro: 50 alerts
			if _, err := f.svc.CreateAlert(ctx, f.user, in); err != nil {
				t.Fatalf("alert %d: %v", i+1, err)
			}
		}
		_, err = f.svc.CreateAlert(ctx, f.user, in)
		if !errors.As(err, &te) || !errors.Is(err, tradekit.ErrForbidden) || te.Details["limit"] != "alerts" {
			t.Fatalf("51st alert: %v, want ErrForbidden with limit alerts", err)
		}
		list, _ := f.svc.Alerts(ctx, f.user)
		if err := f.svc.DeleteAlert(ctx, f.user, list[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.CreateAlert(ctx, f.user, in); err != nil {
			t.Errorf("an alert after deleting one: %v", err)
		}
	})
}

func TestCreateAlertValidation(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	f := newFixture(t, db, 3)
	ctx := context.Background()
	tests := []struct {
		name    string
		in      alerts.AlertInput
		param   string
		wantErr error
	}{
		{"no name", alerts.AlertInput{AssetID: f.asset, Condition: "close > 1"}, "name", tradekit.ErrInvalid},
		{"no condition", alerts.AlertInput{AssetID: f.asset, Name: "x"}, "condition", tradekit.ErrInvalid},
		{"bad condition", alerts.AlertInput{AssetID: f.asset, Name: "x", Condition: "sma(close) > 1"}, "condition", tradekit.ErrInvalid},
		{"unknown asset", alerts.AlertInput{AssetID: uuid.New(), Name: "x", Condition: "close > 1"}, "", tradekit.ErrNotFound},
		{"unknown webhook", alerts.AlertInput{AssetID: f.asset, Name: "x", Condition: "close > 1", WebhookID: ptr(uuid.New())}, "", tradekit.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.CreateAlert(ctx, f.user, tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("CreateAlert = %v, want %v", err, tt.wantErr)
			}
			var pe *tradekit.ParamError
			if tt.param != "" && (!errors.As(err, &pe) || pe.Param != tt.param) {
				t.Errorf("CreateAlert = %v, want a ParamError naming %s", err, tt.param)
			}
		})
	}
}

func TestAlertFiresOncePerBar(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 30) // closes 100 … 129
		once, err := f.svc.CreateAlert(ctx, f.user, alerts.AlertInput{AssetID: f.asset, Name: "above 130", Condition: "close > 130", Once: true})
		if err != nil {
			t.Fatal(err)
		}
		every, err := f.svc.CreateAlert(ctx, f.user, alerts.AlertInput{AssetID: f.asset, Name: "up", Condition: "close > close[1]", Once: false})
		if err != nil {
			t.Fatal(err)
		}
		// The history at creation is not evaluated.
		if n := evaluate(t, f.svc); n != 0 {
			t.Fatalf("a pass with no new bars fired %d times", n)
		}
		f.save(t, 129.5) // below 130, but up from 129: "up" fires
		if n := evaluate(t, f.svc); n != 1 {
			t.Fatalf("after one new bar: %d firings, want 1", n)
		}
		if n := evaluate(t, f.svc); n != 0 {
			t.Fatalf("a second pass on the same bar fired %d times", n)
		}
		// Re-saving the same bar with other prices is no new bar.
		f.days--
		f.save(t, 140)
		if n := evaluate(t, f.svc); n != 0 {
			t.Fatalf("a revised bar fired %d times", n)
		}
		f.save(t, 141, 142) // both alerts hold on both bars: once fires on the first only
		if n := evaluate(t, f.svc); n != 3 {
			t.Fatalf("after two new bars: %d firings, want 3 (once: 1, every bar: 2)", n)
		}
		f.save(t, 143)
		if n := evaluate(t, f.svc); n != 1 {
			t.Fatalf("after the once alert triggered: %d firings, want 1", n)
		}
		a, fs, err := f.svc.Alert(ctx, f.user, once.ID, 10)
		if err != nil || a.Status != alerts.Triggered || a.FiredCount != 1 || len(fs) != 1 || fs[0].BarDate != day0.AddDays(31).String() {
			t.Fatalf("once alert = %+v, firings %+v, %v", a, fs, err)
		}
		if n := countRows(t, db, "notifications", "user_id = ? AND kind = ?", f.user, alerts.KindAlert); n != 5 {
			t.Errorf("%d alert notifications, want 5", n)
		}
		if n := countRows(t, db, "alert_firings", "alert_id = ?", every.ID); n != 4 {
			t.Errorf("%d firings of the every-bar alert, want 4", n)
		}
		// A deleted alert is not evaluated.
		if err := f.svc.DeleteAlert(ctx, f.user, every.ID); err != nil {
			t.Fatal(err)
		}
		f.save(t, 144)
		if n := evaluate(t, f.svc); n != 0 {
			t.Errorf("a deleted alert fired %d times", n)
		}
	})
}

// TestAlertWatermarks evaluates an alert made while its asset had bars
// no pass had evaluated yet: it starts at its own watermark, the older
// alert at the asset's.
func TestAlertWatermarks(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, 30)
		older := f.mustAlert(t, alerts.AlertInput{Name: "older", Condition: "close > 0"})
		f.save(t, 130)
		if n := evaluate(t, f.svc); n != 1 {
			t.Fatalf("first pass: %d firings, want 1", n)
		}
		f.save(t, 131, 132) // not evaluated before the next alert is made
		newer := f.mustAlert(t, alerts.AlertInput{Name: "newer", Condition: "close > 0"})
		f.save(t, 133)
		if n := evaluate(t, f.svc); n != 4 {
			t.Fatalf("second pass: %d firings, want 4 (older: 3 new bars, newer: 1)", n)
		}
		for _, tt := range []struct {
			id   uuid.UUID
			want int
		}{{older.ID, 4}, {newer.ID, 1}} {
			if n := countRows(t, db, "alert_firings", "alert_id = ?", tt.id); n != tt.want {
				t.Errorf("alert %s: %d firings, want %d", tt.id, n, tt.want)
			}
		}
		if n := evaluate(t, f.svc); n != 0 {
			t.Errorf("a pass with no new bars fired %d times", n)
		}
	})
}

func TestAlertCrossover(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	ctx := context.Background()
	f := newFixture(t, db, 0)
	// 10 falling closes, then rising ones: sma(close, 3) crosses sma(close, 6) once.
	f.save(t, 120, 118, 116, 114, 112, 110, 108, 106, 104, 102)
	_, err := f.svc.CreateAlert(ctx, f.user, alerts.AlertInput{AssetID: f.asset, Name: "golden cross",
		Condition: "crossover(sma(close, 3), sma(close, 6))", Once: false})
	if err != nil {
		t.Fatal(err)
	}
	fired := 0
	for _, c := range []float64{104, 108, 112, 116, 120, 124} {
		f.save(t, c)
		fired += evaluate(t, f.svc)
	}
	if fired != 1 {
		t.Errorf("the crossover fired %d times, want 1", fired)
	}
}

func TestFiresExactlyOnceAcrossInstances(t *testing.T) {
	t.Parallel()
	db := dbtest.Postgres(t)
	ctx := context.Background()
	f := newFixture(t, db, 5)
	for i := range 20 {
		_, err := f.svc.CreateAlert(ctx, f.user, alerts.AlertInput{AssetID: f.asset, Name: "a", Condition: fmt.Sprintf("close > %d", i%5), Once: i%2 == 0})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Two of them evaluate one condition a turn: their alerts fire in
	// several transactions, racing the other's single one.
	services := []*alerts.Service{newService(db, alerts.Config{}), newService(db, alerts.Config{SliceWork: 1}), newService(db, alerts.Config{SliceWork: 1})}
	for round := range 5 {
		f.save(t, float64(200+round))
		done := make(chan int, len(services))
		for _, s := range services {
			go func() {
				n, err := s.Evaluate(ctx)
				if err != nil {
					t.Error(err)
				}
				done <- n
			}()
		}
		total := 0
		for range services {
			total += <-done
		}
		// 10 every-bar alerts fire each round; the 10 once alerts only in the first.
		want := 10
		if round == 0 {
			want = 20
		}
		if total != want {
			t.Fatalf("round %d: %d firings across instances, want %d", round, total, want)
		}
	}
	if n := countRows(t, db, "notifications", "kind = ?", alerts.KindAlert); n != 60 {
		t.Errorf("%d notifications, want 60", n)
	}
}

func TestRunWakesOnPriceNotification(t *testing.T) {
	t.Parallel()
	db := dbtest.Postgres(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFixture(t, db, 5)
	// No periodic pass within the test: only the notification wakes Run.
	svc := newService(db, alerts.Config{EvaluateEvery: time.Hour})
	done := make(chan struct{})
	go func() { svc.Run(ctx); close(done) }()
	if _, err := svc.CreateAlert(ctx, f.user, alerts.AlertInput{AssetID: f.asset, Name: "a", Condition: "close > 0", Once: true}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, func() error {
		// The test's database is its own: the only session there that
		// is idle after a LISTEN is the service's listener.
		var n int
		err := db.NewRaw("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle' AND query LIKE 'LISTEN %'").
			Scan(ctx, &n)
		if err == nil && n == 0 {
			err = errors.New("no session listening")
		}
		return err
	}, "the service's listener")
	f.save(t, 300)
	testkit.Eventually(t, 5*time.Second, func() bool { return countRows(t, db, "alert_firings", "1 = 1") > 0 },
		"a firing after the prices were saved")
	cancel()
	<-done
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// TestTailsKeptPerPass checks that the bars each condition needs (see
// formula.Expr.Lookback), kept by condition, which is users' text, are
// kept for one evaluation pass only: after it none is.
func TestTailsKeptPerPass(t *testing.T) {
	t.Parallel()
	f := newFixture(t, dbtest.SQLite(t), 80)
	for _, cond := range []string{"close > sma(close, 5)", "crossover(sma(close, 3), sma(close, 9))", "rsi(close, 14) > 101"} {
		f.mustAlert(t, alerts.AlertInput{Name: cond, Condition: cond})
	}
	f.save(t, 200)
	if _, err := f.svc.Evaluate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := f.svc.TailsKept(); n != 0 {
		t.Errorf("%d conditions' tails kept after the pass, want 0", n)
	}
}
