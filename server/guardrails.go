package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/connect"
)

// guardrailsJSON is a user's guardrails as the API shows them.
type guardrailsJSON struct {
	MaxDailyTrades      int        `json:"maxDailyTrades"`
	MaxPositionSizePct  number     `json:"maxPositionSizePct"`
	MaxPortfolioRiskPct number     `json:"maxPortfolioRiskPct"`
	StopLossRequired    bool       `json:"stopLossRequired"`
	AllowedAssetTypes   []string   `json:"allowedAssetTypes"`
	UpdatedAt           *timestamp `json:"updatedAt"` // null until the user sets any
}

func newGuardrailsJSON(g brokers.Guardrails, at *time.Time) guardrailsJSON {
	out := guardrailsJSON{MaxDailyTrades: g.MaxDailyTrades, MaxPositionSizePct: number(g.MaxPositionSizePct),
		MaxPortfolioRiskPct: number(g.MaxPortfolioRiskPct), StopLossRequired: g.StopLossRequired, AllowedAssetTypes: g.AllowedAssetTypes}
	if at != nil {
		t := timestamp(*at)
		out.UpdatedAt = &t
	}
	return out
}

// handleGuardrailsGet serves GET /api/v1/brokers/guardrails.
func (s *Server) handleGuardrailsGet(w http.ResponseWriter, req bunrouter.Request) error {
	g, at, err := connect.NewStore(s.db).Guardrails(req.Context(), principal(req.Context()).UserID)
	if err != nil {
		return err
	}
	return s.writeData(w, newGuardrailsJSON(g, at))
}

// maxDailyTradesLimit is the largest maxDailyTrades a user may set.
const maxDailyTradesLimit = 100_000

// handleGuardrailsPatch serves PATCH /api/v1/brokers/guardrails: only the
// parameters given change.
func (s *Server) handleGuardrailsPatch(w http.ResponseWriter, req bunrouter.Request) error {
	patch, err := parseGuardrailsPatch(req)
	if err != nil {
		return err
	}
	if len(patch) == 0 {
		return invalidParam("maxDailyTrades", "give at least one of maxDailyTrades, maxPositionSizePct, "+
			"maxPortfolioRiskPct, stopLossRequired and allowedAssetTypes")
	}
	userID := principal(req.Context()).UserID
	var g brokers.Guardrails
	var at time.Time
	err = s.db.RunInTx(req.Context(), nil, func(ctx context.Context, tx bun.Tx) error {
		// Serialise one user's changes (SQLite transactions already are),
		// so two PATCHes of different fields both hold.
		if tx.Dialect().Name() == dialect.PG {
			if _, err := tx.NewRaw("SELECT id FROM users WHERE id = ? FOR UPDATE", userID).Exec(ctx); err != nil {
				return err
			}
		}
		st := connect.NewStore(tx)
		var err error
		if g, _, err = st.Guardrails(ctx, userID); err != nil {
			return err
		}
		for _, apply := range patch {
			apply(&g)
		}
		at = s.now().UTC()
		return st.SaveGuardrails(ctx, userID, g, at)
	})
	if err != nil {
		return err
	}
	return s.writeData(w, newGuardrailsJSON(g, &at))
}

// parseGuardrailsPatch returns the changes the query asks for, one per
// parameter given, or a 400 naming the first bad one.
func parseGuardrailsPatch(req bunrouter.Request) ([]func(*brokers.Guardrails), error) {
	q := req.URL.Query()
	for _, name := range []string{"maxDailyTrades", "stopLossRequired"} {
		// An empty value would read as the parameter's zero: no limit, no
		// stop required. Say so rather than guess.
		if q.Has(name) && q.Get(name) == "" {
			return nil, invalidParam(name, "is empty; give a value")
		}
	}
	var patch []func(*brokers.Guardrails)
	if q.Has("maxDailyTrades") {
		n, err := queryInt(req, "maxDailyTrades", 0, 1, maxDailyTradesLimit)
		if err != nil {
			return nil, err
		}
		patch = append(patch, func(g *brokers.Guardrails) { g.MaxDailyTrades = n })
	}
	for _, p := range []struct {
		name string
		set  func(*brokers.Guardrails, decimal.Decimal)
	}{
		{"maxPositionSizePct", func(g *brokers.Guardrails, v decimal.Decimal) { g.MaxPositionSizePct = v }},
		{"maxPortfolioRiskPct", func(g *brokers.Guardrails, v decimal.Decimal) { g.MaxPortfolioRiskPct = v }},
	} {
		if !q.Has(p.name) {
			continue
		}
		v, ok := percent(q.Get(p.name))
		if !ok {
			return nil, invalidParam(p.name, "must be a percentage above 0 and at most 100, with at most 4 decimals, got %s",
				tradekit.Quote(q.Get(p.name)))
		}
		set := p.set
		patch = append(patch, func(g *brokers.Guardrails) { set(g, v) })
	}
	if q.Has("stopLossRequired") {
		b, err := queryBool(req, "stopLossRequired", false)
		if err != nil {
			return nil, err
		}
		patch = append(patch, func(g *brokers.Guardrails) { g.StopLossRequired = b })
	}
	if q.Has("allowedAssetTypes") || q.Has("allowedAssetTypes[]") {
		types, err := assetTypes(append(q["allowedAssetTypes[]"], q["allowedAssetTypes"]...))
		if err != nil {
			return nil, err
		}
		patch = append(patch, func(g *brokers.Guardrails) { g.AllowedAssetTypes = types })
	}
	return patch, nil
}

// percent parses a percentage in (0, 100] with at most 4 decimals.
func percent(s string) (decimal.Decimal, bool) {
	v, err := decimal.NewFromString(s)
	return v, err == nil && v.IsPositive() && !v.GreaterThan(decimal.New(100, 0)) && v.Exponent() >= -4
}

// assetTypes parses the values of allowedAssetTypes[] (repeated) and
// allowedAssetTypes (comma-separated): known types, at least one, each
// once, in the order of [brokers.AssetTypes].
func assetTypes(values []string) ([]string, error) {
	var given []string
	for _, v := range values {
		given = append(given, strings.Split(v, ",")...)
	}
	known := brokers.AssetTypes()
	for _, t := range given {
		if !slices.Contains(known, t) {
			return nil, invalidParam("allowedAssetTypes", "unknown asset type %s; the types are %s", tradekit.Quote(t), strings.Join(known, ", "))
		}
	}
	out := slices.DeleteFunc(known, func(t string) bool { return !slices.Contains(given, t) })
	if len(out) == 0 {
		return nil, invalidParam("allowedAssetTypes", "give at least one asset type: %s", strings.Join(brokers.AssetTypes(), ", "))
	}
	return out, nil
}
