package server_test

import (
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// heavyFormula is 99 terms of cci(500): it costs 49,798 (see
// formula.Expr.Cost), over the free plan's formulaCost of 2,000 and
// within the pro plan's 50,000.
var heavyFormula = strings.Repeat("cci(500)+", 98) + "cci(500) > 0"

// TestFormulaCost checks that every route taking or evaluating a user's
// formula refuses one that costs more than the plan's formulaCost, with a
// 400 VALIDATION_ERROR naming the parameter, and accepts it on a plan that
// allows it.
func TestFormulaCost(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustWalkAsset(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		free := mustKey(t, db, "free@example.com", "free")
		pro := mustKey(t, db, "pro@example.com", "pro")
		asset := indAsset.String()

		refused := []struct {
			method, path, param string
		}{
			{"POST", "/api/v1/alerts?" + query("assetId", asset, "name", "heavy", "condition", heavyFormula), "condition"},
			{"POST", "/api/v1/indicators/custom?" + query("name", "heavy", "formula", heavyFormula), "formula"},
			{"POST", "/api/v1/backtests?" + query("entry", heavyFormula, "exit", "0", "symbols", "WALK"), "entry"},
			{"POST", "/api/v1/backtests?" + query("entry", "close > 1", "exit", heavyFormula, "symbols", "WALK"), "exit"},
		}
		for _, c := range refused {
			r := send(t, h, c.method, c.path, free)
			want := c.param + ": costs 49798, the plan allows 2000"
			if r.status != 400 || r.errorCode() != "VALIDATION_ERROR" || r.errorMessage() != want ||
				len(r.errorFields()) != 1 || r.errorFields()[0] != c.param {
				t.Errorf("%s %.60s… on free: %d %s; want 400 VALIDATION_ERROR %q", c.method, c.path, r.status, r.raw, want)
			}
		}

		// A custom indicator's formula changed to a heavy one.
		light := send(t, h, "POST", "/api/v1/indicators/custom?"+query("name", "light", "formula", "cci(20)"), free).object(t)
		id := light["id"].(string)
		if r := send(t, h, "PATCH", "/api/v1/indicators/custom/"+id+"?"+query("formula", heavyFormula), free); r.status != 400 ||
			r.errorMessage() != "formula: costs 49798, the plan allows 2000" {
			t.Errorf("PATCH to a heavy formula on free: %d %s", r.status, r.raw)
		}

		// Pro allows it: an alert and a custom indicator are created.
		if r := send(t, h, "POST", "/api/v1/alerts?"+query("assetId", asset, "name", "heavy", "condition", heavyFormula), pro); r.status != 200 {
			t.Errorf("heavy alert on pro: %d %s", r.status, r.raw)
		}
		c := send(t, h, "POST", "/api/v1/indicators/custom?"+query("name", "heavy", "formula", heavyFormula), pro).object(t)

		// Stored while on pro, evaluated after a move to free: refused.
		if _, err := db.NewRaw("UPDATE users SET plan_id = (SELECT id FROM plans WHERE slug = 'free') WHERE email = 'pro@example.com'").Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		h = server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler() // no cached plan
		if r := send(t, h, "POST", "/api/v1/indicators/custom/"+c["id"].(string)+"/evaluate?"+query("assetId", asset), pro); r.status != 400 ||
			r.errorMessage() != "formula: costs 49798, the plan allows 2000" {
			t.Errorf("evaluating a heavy formula after a move to free: %d %s", r.status, r.raw)
		}
	})
}
