package alerts_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
)

// TestMeasureFairness measures how long after an import another
// account's alert is notified while one account has 25 alerts of 99
// cci(500) terms each (cost 49,798, within the pro plan's formulaCost) on
// the same asset, with ten years of daily bars: with the default
// SliceWork, and with a SliceWork no condition exhausts (one turn, as
// before the passes were sliced). It measures, so it runs only when
// TRADEKIT_MEASURE_FAIRNESS is set:
//
//	TRADEKIT_MEASURE_FAIRNESS=1 go test ./alerts -run TestMeasureFairness -v
func TestMeasureFairness(t *testing.T) {
	if os.Getenv("TRADEKIT_MEASURE_FAIRNESS") == "" {
		t.Skip("a measurement: set TRADEKIT_MEASURE_FAIRNESS=1 to run it")
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 2520)
		p, err := billing.NewStore(db).Plan(ctx, "pro")
		if err != nil {
			t.Fatal(err)
		}
		light := billing.User{Email: "light@example.com", Name: "Light", PlanID: p.ID}
		if err := billing.NewStore(db).CreateUser(ctx, &light, time.Now()); err != nil {
			t.Fatal(err)
		}
		for i := range 25 {
			cond := strings.Repeat("cci(500)+", 98) + fmt.Sprintf("cci(500) > %d", -1000000-i)
			f.mustAlert(t, alerts.AlertInput{Name: "heavy", Condition: cond})
		}
		if _, err := f.svc.CreateAlert(ctx, light.ID, alerts.AlertInput{AssetID: f.asset, Name: "light", Condition: "close > 0"}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name  string
			slice int64
		}{{"sliced (default SliceWork)", 0}, {"one turn", 1 << 62}} {
			svc := newService(db, alerts.Config{SliceWork: c.slice})
			f.save(t, 5000)
			start := time.Now()
			done := make(chan time.Duration, 1)
			go func() {
				if _, err := svc.Evaluate(ctx); err != nil {
					t.Error(err)
				}
				done <- time.Since(start)
			}()
			// To within the poll's back-off (50 ms).
			testkit.Eventually(t, 10*time.Minute, func() bool {
				n, err := db.NewSelect().Table("notifications").Where("user_id = ? AND created_at >= ?", light.ID, start.UTC().Add(-time.Millisecond)).Count(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return n > 0
			}, "the other account's notification")
			notified := time.Since(start)
			pass := <-done
			t.Logf("%s, %s: the other account's alert notified after %v; the pass took %v", db.Dialect().Name(), c.name,
				notified.Round(time.Millisecond), pass.Round(time.Millisecond))
		}
	})
}
