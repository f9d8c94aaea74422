package server

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
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
// and the strategy hash (replacing the user's result of that hash), and
// returns it. The plan bounds the strategies an account keeps (403) and
// the backtests it runs at once (429 with Retry-After).
func (s *Server) handleBacktestRun(w http.ResponseWriter, req bunrouter.Request, p *backtestParams) error {
	ctx, c := req.Context(), p.compiled
	for _, f := range []struct{ param, src string }{{"entry", c.Entry}, {"exit", c.Exit}} {
		if err := checkFormulaCost(ctx, f.param, f.src); err != nil {
			return err
		}
	}
	o, err := s.backtestOwner(ctx)
	if err != nil {
		return err
	}
	r := backtestdb.Request{Strategy: p.compiled, Universe: backtestdb.Universe{Index: p.Index},
		LoadConfig: backtestdb.LoadConfig{Unadjusted: !p.Adjusted}, Config: backtest.Config{Cash: p.Cash, From: p.From, To: p.To}}
	if p.Symbols != "" {
		r.Universe.Symbols = strings.Split(p.Symbols, ",")
	}
	rec, err := s.backtests.Run(ctx, o, r)
	var busy *backtestdb.BusyError
	if errors.As(err, &busy) {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(busy.RetryAfter.Seconds()))))
	}
	if err != nil {
		return err
	}
	return s.writeRawData(w, []byte(rec.Document))
}

// backtestOwner returns the key owner as a backtest's owner: their
// account, its members and their plan's bounds (members share the plan).
func (s *Server) backtestOwner(ctx context.Context) (backtestdb.Owner, error) {
	p := principal(ctx)
	u, err := s.billing.UserByID(ctx, p.UserID)
	if err != nil {
		return backtestdb.Owner{}, err
	}
	members, err := s.billing.Members(ctx, u.AccountID)
	if err != nil {
		return backtestdb.Owner{}, err
	}
	o := backtestdb.Owner{UserID: u.ID, AccountID: u.AccountID, MaxStored: p.Plan.Features.Backtests,
		MaxRunning: p.Plan.Features.BacktestRuns}
	for _, m := range members {
		o.Members = append(o.Members, m.ID)
	}
	return o, nil
}

// backtestHashParams are the parameters of GET and DELETE
// /api/v1/backtests/:hash.
type backtestHashParams struct {
	Hash string `path:"hash"`
}

// handleBacktestGet serves GET /api/v1/backtests/:hash (beyond the spec):
// the user's result of the strategy hash.
func (s *Server) handleBacktestGet(w http.ResponseWriter, req bunrouter.Request, p *backtestHashParams) error {
	rec, err := s.backtests.Result(req.Context(), principal(req.Context()).UserID, p.Hash)
	if err != nil {
		return err
	}
	return s.writeRawData(w, []byte(rec.Document))
}

// handleBacktestDelete serves DELETE /api/v1/backtests/:hash (beyond the
// spec): it deletes the user's result of the strategy hash, which then no
// longer counts against the plan's backtests. Another user's hash is a
// 404, as an unknown one is.
func (s *Server) handleBacktestDelete(w http.ResponseWriter, req bunrouter.Request, p *backtestHashParams) error {
	if err := s.backtests.Delete(req.Context(), principal(req.Context()).UserID, p.Hash); err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"strategyHash": p.Hash, "status": "deleted"})
}
