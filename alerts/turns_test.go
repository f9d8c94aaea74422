package alerts_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestEvaluationTurns checks that a pass evaluates in turns across
// accounts: with a SliceWork that one condition exhausts, the heavy
// account's five alerts fire in five turns, and the other account's alert
// in the first, in the first recorded transaction. The clock moves a
// second at each reading, so each transaction stamps its notifications
// with a time of its own.
func TestEvaluationTurns(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, 30)
		clock := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
		f.svc = newService(db, alerts.Config{SliceWork: 1, Now: func() time.Time {
			clock = clock.Add(time.Second)
			return clock
		}})
		heavy := f.user
		p, err := billing.NewStore(db).Plan(ctx, "pro")
		if err != nil {
			t.Fatal(err)
		}
		light := billing.User{Email: "light@example.com", Name: "Light", PlanID: p.ID}
		if err := billing.NewStore(db).CreateUser(ctx, &light, time.Now()); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			f.mustAlert(t, alerts.AlertInput{Name: "heavy", Condition: fmt.Sprintf("close > %d", i)})
		}
		other, err := f.svc.CreateAlert(ctx, light.ID, alerts.AlertInput{AssetID: f.asset, Name: "light", Condition: "close > 50"})
		if err != nil {
			t.Fatal(err)
		}

		for round := range 2 {
			f.save(t, float64(200+round))
			if n := evaluate(t, f.svc); n != 6 {
				t.Fatalf("round %d: %d firings, want 6", round, n)
			}
			var rows []struct {
				UserID    uuid.UUID `bun:"user_id"`
				CreatedAt time.Time `bun:"created_at"`
			}
			err := db.NewSelect().Table("notifications").Column("user_id", "created_at").
				Where("kind = ? AND created_at > ?", alerts.KindAlert, clock.Add(-time.Minute)).OrderExpr("created_at").Scan(ctx, &rows)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 6 {
				t.Fatalf("round %d: %d notifications, want 6", round, len(rows))
			}
			heavyTimes := map[time.Time]bool{}
			for _, r := range rows {
				if r.UserID == heavy {
					heavyTimes[r.CreatedAt] = true
				}
			}
			var lightAt time.Time
			for _, r := range rows {
				if r.UserID == light.ID {
					lightAt = r.CreatedAt
				}
			}
			if !lightAt.Equal(rows[0].CreatedAt) {
				t.Errorf("round %d: the light account's alert was recorded at %v, after the first turn's %v", round, lightAt, rows[0].CreatedAt)
			}
			if len(heavyTimes) != 5 {
				t.Errorf("round %d: the heavy account's 5 alerts were recorded in %d transactions, want 5 (one a turn)", round, len(heavyTimes))
			}
			clock = clock.Add(time.Hour) // the next round's notifications come after these
		}
		if n := countRows(t, db, "alert_firings", "alert_id = ?", other.ID); n != 2 {
			t.Errorf("the light alert fired %d times, want 2", n)
		}
		if n := evaluate(t, f.svc); n != 0 {
			t.Errorf("a pass with no new bars fired %d times", n)
		}
	})
}
