package backtestdb

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/jsonnum"
)

// Run runs the strategy c over the loaded universe u, and its buy-and-hold
// benchmark, from cfg (whose Days it sets to l's), and returns the result
// as a [Record] of the user created at now, not yet saved: its Document is
// the result as GET /api/v1/backtests/:hash serves it, and its TotalReturn
// and SharpeRatio are the strategy's (nil when not finite). Run's errors
// are [backtest.Run]'s.
// The server's POST /api/v1/backtests stores and serves what Run returns.
//
// The document is bounded whatever the run: its equity curves list at
// most [MaxEquityPoints] days (a longer curve is sampled evenly, its
// first and last days kept; equityDays counts them all) and its trades
// the last [MaxTrades] (tradesTruncated counts the earlier ones left
// out). The stats are computed on every day and every trade.
func Run(ctx context.Context, c *backtest.Compiled, u Universe, l *Loaded, cfg backtest.Config, userID uuid.UUID, now time.Time) (Record, error) {
	cfg.Days = l.Days
	res, err := backtest.Run(ctx, c, l.Assets, cfg)
	if err != nil {
		return Record{}, err
	}
	hold, err := backtest.BuyAndHold(ctx, c, l.Assets, cfg)
	if err != nil {
		return Record{}, err
	}
	rec := Record{ID: uuid.New(), UserID: userID, StrategyHash: c.Hash(), CreatedAt: now.UTC().Truncate(time.Microsecond),
		TotalReturn: finite(res.Stats.TotalReturn), SharpeRatio: finite(res.Stats.Sharpe)}
	doc := document{ID: rec.ID.String(), StrategyHash: rec.StrategyHash, Strategy: c.Strategy, Symbols: []string{},
		Adjusted: l.Adjusted, Cash: figure(cfg.Cash), Stats: newStats(res.Stats), Benchmark: newStats(hold.Stats),
		EquityDays: len(res.Dates), CreatedAt: timestamp(rec.CreatedAt)}
	for _, a := range l.Assets {
		doc.Symbols = append(doc.Symbols, a.Symbol)
	}
	if u.Index != "" {
		doc.Index = &u.Index
	}
	if l.Calendar != "" {
		doc.Calendar = &l.Calendar
	}
	days := sample(len(res.Dates), MaxEquityPoints)
	doc.Equity = make([]equityDay, len(days))
	for k, i := range days {
		doc.Equity[k] = equityDay{Date: res.Dates[i], Equity: figure(res.Equity[i]), Benchmark: figure(hold.Equity[i])}
	}
	trades := res.Trades
	if len(trades) > MaxTrades {
		doc.TradesTruncated = len(trades) - MaxTrades
		trades = trades[doc.TradesTruncated:]
	}
	doc.Trades = make([]trade, len(trades))
	for i, t := range trades {
		doc.Trades[i] = trade{Symbol: t.Symbol, EntryDate: t.EntryDate, ExitDate: t.ExitDate, EntryPrice: figure(t.EntryPrice),
			ExitPrice: figure(t.ExitPrice), Quantity: figure(t.Quantity), Commission: figure(t.Commission), PnL: figure(t.PnL),
			Return: figure(t.Return), Days: t.Bars, ExitReason: t.ExitReason}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return Record{}, fmt.Errorf("backtestdb: encode the result: %w", err)
	}
	rec.Document = string(b)
	return rec, nil
}

// MaxEquityPoints is the most days a result's equity curves list: 20
// years of daily closes, about 400 kB of JSON.
const MaxEquityPoints = 5000

// MaxTrades is the most trades a result lists, the last ones: about
// 300 kB of JSON.
const MaxTrades = 1000

// sample returns the indexes of at most max of n days, spread evenly
// over them, the first and the last included: every index when n <= max.
// It panics if max < 2.
//
//	k * (n − 1) / (max − 1)   for k = 0 … max − 1, rounded to the nearest
func sample(n, max int) []int {
	if max < 2 {
		panic("backtestdb: sample needs at least 2 points")
	}
	m := min(n, max)
	out := make([]int, m)
	for k := range out {
		if n <= max {
			out[k] = k
			continue
		}
		out[k] = int((int64(k)*int64(n-1)*2 + int64(max-1)) / (int64(max-1) * 2))
	}
	return out
}

// finite returns &f, or nil when f is not finite.
func finite(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// figure is a backtest figure in a document, with at most 15
// significant digits ([jsonnum.AppendFloat]): null when it is not finite
// (a ratio over zero).
type figure float64

// MarshalJSON implements [json.Marshaler].
func (f figure) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return jsonnum.AppendFloat(nil, float64(f)), nil
}

// timestamp is a time in a document: UTC, to the millisecond, as the API
// writes every time.
type timestamp time.Time

// MarshalJSON implements [json.Marshaler].
func (t timestamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z") + `"`), nil
}

// stats is a tearsheet in a document.
type stats struct {
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

func newStats(s backtest.Stats) stats {
	return stats{Start: s.Start, End: s.End, Years: figure(s.Years), FinalEquity: figure(s.FinalEquity),
		TotalReturn: figure(s.TotalReturn), CAGR: figure(s.CAGR), Volatility: figure(s.Volatility),
		SharpeRatio: figure(s.Sharpe), SortinoRatio: figure(s.Sortino), CalmarRatio: figure(s.Calmar),
		MaxDrawdown: figure(s.MaxDrawdown), MaxDrawdownDays: s.MaxDrawdownDays, Trades: s.Trades,
		WinRate: figure(s.WinRate), ProfitFactor: figure(s.ProfitFactor), Expectancy: figure(s.Expectancy),
		AvgTradeReturn: figure(s.AvgTradeReturn), Exposure: figure(s.Exposure), Turnover: figure(s.Turnover)}
}

// trade is a backtest's trade in a document.
type trade struct {
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

// equityDay is a day of a document's equity curves.
type equityDay struct {
	Date      calendar.Date `json:"date"`
	Equity    figure        `json:"equity"`
	Benchmark figure        `json:"benchmark"`
}

// document is a backtest result as the API shows and stores it.
type document struct {
	ID           string            `json:"id"`
	StrategyHash string            `json:"strategyHash"`
	Strategy     backtest.Strategy `json:"strategy"`
	Symbols      []string          `json:"symbols"`
	Index        *string           `json:"index"`
	Calendar     *string           `json:"calendar"`
	Adjusted     bool              `json:"adjusted"`
	Cash         figure            `json:"cash"`
	Stats        stats             `json:"stats"`
	Benchmark    stats             `json:"benchmark"`
	Equity       []equityDay       `json:"equity"`
	// EquityDays is the number of days of the curves; Equity lists them
	// all unless there are more than [MaxEquityPoints].
	EquityDays int     `json:"equityDays"`
	Trades     []trade `json:"trades"`
	// TradesTruncated is the number of the first trades Trades leaves
	// out: it lists the last [MaxTrades].
	TradesTruncated int       `json:"tradesTruncated"`
	CreatedAt       timestamp `json:"createdAt"`
}
