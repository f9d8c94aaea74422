package server

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
)

// guardrailsJSON is a user's guardrails as the API shows them.
type guardrailsJSON struct {
	MaxDailyTrades      int       `json:"maxDailyTrades"`
	MaxPositionSizePct  number    `json:"maxPositionSizePct"`
	MaxPortfolioRiskPct number    `json:"maxPortfolioRiskPct"`
	StopLossRequired    bool      `json:"stopLossRequired"`
	AllowedAssetTypes   []string  `json:"allowedAssetTypes"`
	UpdatedAt           timestamp `json:"updatedAt"` // when last set; for the defaults, when they were first read
}

func newGuardrailsJSON(g brokers.Guardrails, at time.Time) guardrailsJSON {
	return guardrailsJSON{MaxDailyTrades: g.MaxDailyTrades, MaxPositionSizePct: number(g.MaxPositionSizePct),
		MaxPortfolioRiskPct: number(g.MaxPortfolioRiskPct), StopLossRequired: g.StopLossRequired, AllowedAssetTypes: g.AllowedAssetTypes,
		UpdatedAt: timestamp(at)}
}

// handleGuardrailsGet serves GET /api/v1/brokers/guardrails.
func (s *Server) handleGuardrailsGet(w http.ResponseWriter, req bunrouter.Request) error {
	g, at, err := s.connect.Guardrails(req.Context(), principal(req.Context()).UserID)
	if err != nil {
		return err
	}
	return s.writeData(w, newGuardrailsJSON(g, at))
}

// guardrailsPatchParams are the parameters of PATCH
// /api/v1/brokers/guardrails: only those given change, at least one.
// allowedAssetTypes is comma-separated; allowedAssetTypes[] may be
// repeated; both may be given.
type guardrailsPatchParams struct {
	MaxDailyTrades        *int             `query:"maxDailyTrades" validate:"omitnil,min=1,max=100000"`
	MaxPositionSizePct    *decimal.Decimal `query:"maxPositionSizePct" validate:"omitnil,gt=0,lte=100"`
	MaxPortfolioRiskPct   *decimal.Decimal `query:"maxPortfolioRiskPct" validate:"omitnil,gt=0,lte=100"`
	StopLossRequired      *bool            `query:"stopLossRequired"`
	AllowedAssetTypes     *string          `query:"allowedAssetTypes"`
	AllowedAssetTypesList []string         `query:"allowedAssetTypes[]"`

	patch []func(*brokers.Guardrails) // the changes, one per parameter given; set by check
}

// pctPlaces is the most decimal places of a guardrail's percentage.
const pctPlaces = 4

// check returns the changes the parameters ask for, or a 400 naming the
// first bad one.
func (p *guardrailsPatchParams) check() error {
	if v := p.MaxDailyTrades; v != nil {
		p.patch = append(p.patch, func(g *brokers.Guardrails) { g.MaxDailyTrades = *v })
	}
	if v := p.MaxPositionSizePct; v != nil {
		if err := checkPlaces("maxPositionSizePct", v, pctPlaces); err != nil {
			return err
		}
		p.patch = append(p.patch, func(g *brokers.Guardrails) { g.MaxPositionSizePct = *v })
	}
	if v := p.MaxPortfolioRiskPct; v != nil {
		if err := checkPlaces("maxPortfolioRiskPct", v, pctPlaces); err != nil {
			return err
		}
		p.patch = append(p.patch, func(g *brokers.Guardrails) { g.MaxPortfolioRiskPct = *v })
	}
	if v := p.StopLossRequired; v != nil {
		p.patch = append(p.patch, func(g *brokers.Guardrails) { g.StopLossRequired = *v })
	}
	if p.AllowedAssetTypes != nil || p.AllowedAssetTypesList != nil {
		values := p.AllowedAssetTypesList
		if p.AllowedAssetTypes != nil {
			values = append(values, *p.AllowedAssetTypes)
		}
		types, err := assetTypes(values)
		if err != nil {
			return err
		}
		p.patch = append(p.patch, func(g *brokers.Guardrails) { g.AllowedAssetTypes = types })
	}
	if len(p.patch) == 0 {
		return invalidParam("maxDailyTrades", "give at least one of maxDailyTrades, maxPositionSizePct, "+
			"maxPortfolioRiskPct, stopLossRequired and allowedAssetTypes")
	}
	return nil
}

// handleGuardrailsPatch serves PATCH /api/v1/brokers/guardrails: only the
// parameters given change.
func (s *Server) handleGuardrailsPatch(w http.ResponseWriter, req bunrouter.Request, p *guardrailsPatchParams) error {
	g, at, err := s.connect.PatchGuardrails(req.Context(), principal(req.Context()).UserID, func(g *brokers.Guardrails) {
		for _, apply := range p.patch {
			apply(g)
		}
	})
	if err != nil {
		return err
	}
	return s.writeData(w, newGuardrailsJSON(g, at))
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
