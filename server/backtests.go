package server

import (
	"net/http"
	"strings"

	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/backtest/backtestdb"
)

// backtestParams are the parameters of POST /api/v1/backtests. Package
// backtest checks the strategy's own rules.
type backtestParams struct {
	Entry         string   `query:"entry" validate:"required"`
	Exit          string   `query:"exit" validate:"required"`
	MaxPositions  int      `query:"maxPositions" default:"1" validate:"min=1,max=1000"` // backtest.MaxPositions
	PositionPct   *float64 `query:"positionPct"`
	StopLossPct   float64  `query:"stopLossPct" default:"0"`
	TakeProfitPct float64  `query:"takeProfitPct" default:"0"`
	CommissionBps float64  `query:"commissionBps" default:"0"`
	SlippageBps   float64  `query:"slippageBps" default:"0"`
	Symbols       string   `query:"symbols"` // comma-separated
	Index         string   `query:"index"`
	dateRange
	Cash float64 `query:"cash" default:"100000" validate:"gte=1,lte=1000000000000"`
	// Adjusted runs over prices back-adjusted for splits and dividends
	// (the default), or as traded.
	Adjusted bool `query:"adjusted" default:"true"`

	compiled *backtest.Compiled // the strategy, set by check
}

// check compiles the strategy, then checks the date range.
func (p *backtestParams) check() error {
	s := backtest.Strategy{Entry: p.Entry, Exit: p.Exit, MaxPositions: p.MaxPositions, StopLossPct: p.StopLossPct,
		TakeProfitPct: p.TakeProfitPct, CommissionBps: p.CommissionBps, SlippageBps: p.SlippageBps}
	if p.PositionPct != nil {
		s.PositionPct = *p.PositionPct
	}
	var err error
	if p.compiled, err = s.Compile(); err != nil {
		return err
	}
	return p.dateRange.check()
}

// handleBacktestRun serves POST /api/v1/backtests (beyond the spec): it
// runs a strategy over stored assets, stores the result under the user
// and the strategy hash, and returns it.
func (s *Server) handleBacktestRun(w http.ResponseWriter, req bunrouter.Request, p *backtestParams) error {
	ctx, c := req.Context(), p.compiled
	for _, f := range []struct{ param, src string }{{"entry", c.Entry}, {"exit", c.Exit}} {
		if err := checkFormulaCost(ctx, f.param, f.src); err != nil {
			return err
		}
	}
	u := backtestdb.Universe{Index: p.Index}
	if p.Symbols != "" {
		u.Symbols = strings.Split(p.Symbols, ",")
	}
	cfg := backtest.Config{Cash: p.Cash, From: p.From, To: p.To}
	loaded, err := backtestdb.Load(ctx, s.marketdb, u, backtestdb.LoadConfig{Unadjusted: !p.Adjusted})
	if err != nil {
		return err
	}
	rec, err := backtestdb.Run(ctx, c, u, loaded, cfg, principal(ctx).UserID, s.now())
	if err != nil {
		return err
	}
	if err := s.backtests.Save(ctx, &rec); err != nil {
		return err
	}
	return s.writeRawData(w, []byte(rec.Document))
}

// backtestGetParams are the parameters of GET /api/v1/backtests/:hash.
type backtestGetParams struct {
	Hash string `path:"hash"`
}

// handleBacktestGet serves GET /api/v1/backtests/:hash (beyond the spec):
// the user's latest result of the strategy hash.
func (s *Server) handleBacktestGet(w http.ResponseWriter, req bunrouter.Request, p *backtestGetParams) error {
	rec, err := s.backtests.Latest(req.Context(), principal(req.Context()).UserID, p.Hash)
	if err != nil {
		return err
	}
	return s.writeRawData(w, []byte(rec.Document))
}
