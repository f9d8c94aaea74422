package server

import (
	"net/http"

	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit/billing"
)

// planJSON is a Plan as the API shows it.
type planJSON struct {
	ID       string       `json:"id"`
	Name     string       `json:"name"`
	Slug     string       `json:"slug"`
	Price    number       `json:"price"`
	Currency string       `json:"currency"`
	Interval string       `json:"interval"`
	Features featuresJSON `json:"features"`
}

type featuresJSON struct {
	APIRequestsPerDay    int `json:"apiRequestsPerDay"`
	APIRequestsPerMinute int `json:"apiRequestsPerMinute"`
	Watchlists           int `json:"watchlists"`
	Portfolios           int `json:"portfolios"`
	Alerts               int `json:"alerts"`
	FormulaCost          int `json:"formulaCost"`
	Backtests            int `json:"backtests"`
	BacktestRuns         int `json:"backtestRuns"`
}

func newPlanJSON(p billing.Plan) planJSON {
	f := p.Features
	return planJSON{
		ID: p.ID.String(), Name: p.Name, Slug: p.Slug, Price: number(p.Price),
		Currency: p.Currency, Interval: p.Interval,
		Features: featuresJSON{
			APIRequestsPerDay: f.APIRequestsPerDay, APIRequestsPerMinute: f.APIRequestsPerMinute,
			Watchlists: f.Watchlists, Portfolios: f.Portfolios, Alerts: f.Alerts, FormulaCost: f.FormulaCost,
			Backtests: f.Backtests, BacktestRuns: f.BacktestRuns,
		},
	}
}

// handlePlanList serves GET /api/v1/billing/plans.
func (s *Server) handlePlanList(w http.ResponseWriter, req bunrouter.Request) error {
	plans, err := s.billing.Plans(req.Context())
	if err != nil {
		return err
	}
	out := make([]planJSON, len(plans))
	for i, p := range plans {
		out[i] = newPlanJSON(p)
	}
	return s.writeData(w, out)
}
