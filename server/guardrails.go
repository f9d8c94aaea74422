package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bunrouter"

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
// repeated; both may be given. The rules tagged here are also
// [brokers.GuardrailsPatch.Check]'s, which words them the same way; the
// tags make the messages of values that do not parse say the range.
type guardrailsPatchParams struct {
	MaxDailyTrades        *int             `query:"maxDailyTrades" validate:"omitnil,min=1,max=100000"`
	MaxPositionSizePct    *decimal.Decimal `query:"maxPositionSizePct" validate:"omitnil,gt=0,lte=100"`
	MaxPortfolioRiskPct   *decimal.Decimal `query:"maxPortfolioRiskPct" validate:"omitnil,gt=0,lte=100"`
	StopLossRequired      *bool            `query:"stopLossRequired"`
	AllowedAssetTypes     *string          `query:"allowedAssetTypes"`
	AllowedAssetTypesList []string         `query:"allowedAssetTypes[]"`

	patch brokers.GuardrailsPatch // the changes; set by check
}

// check returns the changes the parameters ask for, or a 400 naming the
// first bad one.
func (p *guardrailsPatchParams) check() error {
	p.patch = brokers.GuardrailsPatch{MaxDailyTrades: p.MaxDailyTrades, MaxPositionSizePct: p.MaxPositionSizePct,
		MaxPortfolioRiskPct: p.MaxPortfolioRiskPct, StopLossRequired: p.StopLossRequired}
	if p.AllowedAssetTypes != nil || p.AllowedAssetTypesList != nil {
		values := p.AllowedAssetTypesList
		if p.AllowedAssetTypes != nil {
			values = append(values, *p.AllowedAssetTypes)
		}
		p.patch.AllowedAssetTypes = []string{}
		for _, v := range values {
			p.patch.AllowedAssetTypes = append(p.patch.AllowedAssetTypes, strings.Split(v, ",")...)
		}
	}
	if p.patch.IsEmpty() {
		return invalidParam("maxDailyTrades", "give at least one of maxDailyTrades, maxPositionSizePct, "+
			"maxPortfolioRiskPct, stopLossRequired and allowedAssetTypes")
	}
	return p.patch.Check()
}

// handleGuardrailsPatch serves PATCH /api/v1/brokers/guardrails: only the
// parameters given change.
func (s *Server) handleGuardrailsPatch(w http.ResponseWriter, req bunrouter.Request, p *guardrailsPatchParams) error {
	g, at, err := s.connect.PatchGuardrails(req.Context(), principal(req.Context()).UserID, p.patch.Apply)
	if err != nil {
		return err
	}
	return s.writeData(w, newGuardrailsJSON(g, at))
}
