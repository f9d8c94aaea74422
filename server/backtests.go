package server

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/backtest/backtestdb"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/calendar"
)

// figure is a backtest figure: null when it is not finite (a ratio over
// zero).
type figure float64

// MarshalJSON implements [json.Marshaler].
func (f figure) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
}

// finite returns f, or nil when it is not finite.
func finite(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// statsJSON is a tearsheet as the API shows it.
type statsJSON struct {
	Start           string `json:"start"`
	End             string `json:"end"`
	Years           figure `json:"years"`
	FinalEquity     figure `json:"finalEquity"`
	TotalReturn     figure `json:"totalReturn"`
	CAGR            figure `json:"cagr"`
	Volatility      figure `json:"volatility"`
	SharpeRatio     figure `json:"sharpeRatio"`
	SortinoRatio    figure `json:"sortinoRatio"`
	CalmarRatio     figure `json:"calmarRatio"`
	MaxDrawdown     figure `json:"maxDrawdown"`
	MaxDrawdownDays int    `json:"maxDrawdownDays"`
	Trades          int    `json:"trades"`
	WinRate         figure `json:"winRate"`
	ProfitFactor    figure `json:"profitFactor"`
	Expectancy      figure `json:"expectancy"`
	AvgTradeReturn  figure `json:"avgTradeReturn"`
	Exposure        figure `json:"exposure"`
	Turnover        figure `json:"turnover"`
}

func newStatsJSON(s backtest.Stats) statsJSON {
	return statsJSON{Start: s.Start, End: s.End, Years: figure(s.Years), FinalEquity: figure(s.FinalEquity),
		TotalReturn: figure(s.TotalReturn), CAGR: figure(s.CAGR), Volatility: figure(s.Volatility),
		SharpeRatio: figure(s.Sharpe), SortinoRatio: figure(s.Sortino), CalmarRatio: figure(s.Calmar),
		MaxDrawdown: figure(s.MaxDrawdown), MaxDrawdownDays: s.MaxDrawdownDays, Trades: s.Trades,
		WinRate: figure(s.WinRate), ProfitFactor: figure(s.ProfitFactor), Expectancy: figure(s.Expectancy),
		AvgTradeReturn: figure(s.AvgTradeReturn), Exposure: figure(s.Exposure), Turnover: figure(s.Turnover)}
}

// tradeJSON is a backtest's trade as the API shows it.
type tradeJSON struct {
	Symbol     string        `json:"symbol"`
	EntryDate  calendar.Date `json:"entryDate"`
	ExitDate   calendar.Date `json:"exitDate"`
	EntryPrice figure        `json:"entryPrice"`
	ExitPrice  figure        `json:"exitPrice"`
	Quantity   figure        `json:"quantity"`
	Commission figure        `json:"commission"`
	PnL        figure        `json:"pnl"`
	Return     figure        `json:"return"`
	Days       int           `json:"days"`
	ExitReason string        `json:"exitReason"`
}

// equityJSON is a day of the equity curves.
type equityJSON struct {
	Date      calendar.Date `json:"date"`
	Equity    figure        `json:"equity"`
	Benchmark figure        `json:"benchmark"`
}

// backtestJSON is a backtest result as the API shows and stores it.
type backtestJSON struct {
	ID           string            `json:"id"`
	StrategyHash string            `json:"strategyHash"`
	Strategy     backtest.Strategy `json:"strategy"`
	Symbols      []string          `json:"symbols"`
	Index        *string           `json:"index"`
	Calendar     *string           `json:"calendar"`
	Cash         figure            `json:"cash"`
	Stats        statsJSON         `json:"stats"`
	Benchmark    statsJSON         `json:"benchmark"`
	Equity       []equityJSON      `json:"equity"`
	Trades       []tradeJSON       `json:"trades"`
	CreatedAt    timestamp         `json:"createdAt"`
}

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
	u := backtestdb.Universe{Index: p.Index}
	if p.Symbols != "" {
		u.Symbols = strings.Split(p.Symbols, ",")
	}
	cfg := backtest.Config{Cash: p.Cash, From: p.From, To: p.To}
	loaded, err := backtestdb.Load(ctx, marketdata.NewStore(s.db), u)
	if err != nil {
		return err
	}
	cfg.Days = loaded.Days
	res, err := backtest.Run(ctx, c, loaded.Assets, cfg)
	if err != nil {
		return err
	}
	hold, err := backtest.BuyAndHold(ctx, c, loaded.Assets, cfg)
	if err != nil {
		return err
	}

	rec := backtestdb.Record{StrategyHash: c.Hash(), UserID: principal(ctx).UserID, CreatedAt: s.now().UTC().Truncate(time.Microsecond),
		TotalReturn: finite(res.Stats.TotalReturn), SharpeRatio: finite(res.Stats.Sharpe)}
	rec.ID = uuid.New()
	doc := backtestJSON{ID: rec.ID.String(), StrategyHash: rec.StrategyHash, Strategy: c.Strategy, Symbols: []string{},
		Cash: figure(cfg.Cash), Stats: newStatsJSON(res.Stats), Benchmark: newStatsJSON(hold.Stats),
		Equity: make([]equityJSON, len(res.Dates)), Trades: make([]tradeJSON, len(res.Trades)), CreatedAt: timestamp(rec.CreatedAt)}
	for _, a := range loaded.Assets {
		doc.Symbols = append(doc.Symbols, a.Symbol)
	}
	if u.Index != "" {
		doc.Index = &u.Index
	}
	if loaded.Calendar != "" {
		doc.Calendar = &loaded.Calendar
	}
	for i, d := range res.Dates {
		doc.Equity[i] = equityJSON{Date: d, Equity: figure(res.Equity[i]), Benchmark: figure(hold.Equity[i])}
	}
	for i, t := range res.Trades {
		doc.Trades[i] = tradeJSON{Symbol: t.Symbol, EntryDate: t.EntryDate, ExitDate: t.ExitDate, EntryPrice: figure(t.EntryPrice),
			ExitPrice: figure(t.ExitPrice), Quantity: figure(t.Quantity), Commission: figure(t.Commission), PnL: figure(t.PnL),
			Return: figure(t.Return), Days: t.Bars, ExitReason: t.ExitReason}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	rec.Document = string(b)
	if err := backtestdb.NewStore(s.db).Save(ctx, &rec); err != nil {
		return err
	}
	return s.writeRawData(w, b)
}

// backtestGetParams are the parameters of GET /api/v1/backtests/:hash.
type backtestGetParams struct {
	Hash string `path:"hash"`
}

// handleBacktestGet serves GET /api/v1/backtests/:hash (beyond the spec):
// the user's latest result of the strategy hash.
func (s *Server) handleBacktestGet(w http.ResponseWriter, req bunrouter.Request, p *backtestGetParams) error {
	rec, err := backtestdb.NewStore(s.db).Latest(req.Context(), principal(req.Context()).UserID, p.Hash)
	if err != nil {
		return err
	}
	return s.writeRawData(w, []byte(rec.Document))
}
