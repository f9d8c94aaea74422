package backtest

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
)

// Asset is a member of a backtest's universe: its daily bars, and when it
// was a member.
type Asset struct {
	Symbol string
	Bars   ohlcv.Series
	// Member lists the periods the asset belonged to the universe, as an
	// index's point-in-time constituents do; nil means always. An entry
	// needs the asset to be a member on the signal's day, and a position
	// is closed at the next open after the asset leaves.
	Member []Span
}

// Span is a period of membership, From inclusive to To exclusive; a zero
// To leaves it open.
type Span struct{ From, To calendar.Date }

func (s Span) contains(d calendar.Date) bool {
	return !d.Before(s.From) && (s.To == calendar.Date{} || d.Before(s.To))
}

func (a *Asset) member(d calendar.Date) bool {
	if a.Member == nil {
		return true
	}
	for _, s := range a.Member {
		if s.contains(d) {
			return true
		}
	}
	return false
}

// Config sets a run's money and time.
type Config struct {
	// Cash is the starting cash. Default 100,000.
	Cash float64
	// Days are the trading days, ascending: an exchange calendar's
	// sessions. Default the union of the assets' dates.
	Days []calendar.Date
	// From and To bound the days traded, inclusive; zero for no bound.
	// Bars before From still warm the formulas up.
	From, To calendar.Date
	// Workers evaluate the formulas, one asset each at a time. Default
	// GOMAXPROCS.
	Workers int
}

// Exit reasons of a [Trade].
const (
	ExitSignal     = "signal"      // the exit formula, filled at the next open
	ExitStopLoss   = "stop-loss"   // the stop-loss price was reached during a bar
	ExitTakeProfit = "take-profit" // the take-profit price was reached during a bar
	ExitRemoved    = "removed"     // the asset left the universe, filled at the next open
	ExitDelisted   = "delisted"    // the asset's bars ended before the test: closed at its last close
	ExitEnd        = "end"         // still open when the test ended: valued at the last close, no costs
)

// Trade is a round trip: one position from its entry to its exit.
type Trade struct {
	Symbol              string
	EntryDate, ExitDate calendar.Date
	EntryPrice          float64 // the fill, slippage included
	ExitPrice           float64
	Quantity            float64 // fractional units
	Commission          float64 // both fills'
	PnL                 float64 // exit value less entry value and commission
	Return              float64 // PnL over the entry's cost, commission included
	Bars                int     // trading days held, the entry's and the exit's included
	ExitReason          string
}

// Result is a run's outcome.
type Result struct {
	// Dates and Equity are the equity curve: cash plus positions at each
	// day's close.
	Dates  []calendar.Date
	Equity []float64
	// Exposure is, for each day, the share of equity held in positions
	// at the close.
	Exposure []float64
	Trades   []Trade
	Stats    Stats
	// Traded is the value of every fill, summed.
	Traded float64
}

// position is an open position.
type position struct {
	trade      Trade
	cost, comm float64 // the entry's cost, commission included, and its commission
	stop, take float64 // 0 for none
}

// assetState is one asset's progress through a run.
type assetState struct {
	*Asset
	entry, exit []float64
	next        int // the index of the first bar not yet reached
	today       int // the bar of the current day, -1 for none
	lastClose   float64
	pos         *position
	wantIn      bool   // enter at the next open
	wantOut     string // the reason to leave at the next open, "" for none
}

// Run tests the strategy over the universe.
//
// Each asset's entry and exit formulas are evaluated once over all its
// bars (on cfg.Workers goroutines); a value at a bar depends on that bar
// and the ones before only. A day is then processed in this order:
//
//  1. at the open, positions marked to leave are sold, then positions
//     marked to enter are bought, in the order of the universe, while
//     fewer than MaxPositions are held and cash lasts;
//  2. during the bar, a position whose stop-loss price is at or above the
//     low is sold at that price, or at the open when the bar opened below
//     it; then one whose take-profit price is at or below the high, at
//     that price or the open above it (a bar reaching both counts as a
//     loss);
//  3. at the close, positions are valued; a position in an asset whose
//     bars end before the test does is sold at that close (delisted);
//  4. the close's signals mark positions to leave (the exit formula, or
//     the asset left the universe) and members to enter (the entry
//     formula, while not held), for the next open.
//
// Fills move against the trader by SlippageBps and pay CommissionBps of
// their value. A new position is PositionPct of the equity at the
// previous close, or the cash left if that is less; quantities are
// fractional. Positions still open at the end are valued at the last
// close and reported with ExitEnd.
func Run(ctx context.Context, s *Compiled, universe []Asset, cfg Config) (*Result, error) {
	return run(ctx, s, universe, cfg, false)
}

// BuyAndHold is the benchmark of a universe: the assets that are members
// on the first day, bought in equal parts at the second day's open (as a
// signal at the first close would be) and held, with the strategy's
// costs. A delisted asset's proceeds stay in cash.
func BuyAndHold(ctx context.Context, costs *Compiled, universe []Asset, cfg Config) (*Result, error) {
	n := 0
	if first := firstDay(universe, cfg); first != (calendar.Date{}) {
		for i := range universe {
			if universe[i].member(first) && universe[i].Bars.Len() > 0 {
				n++
			}
		}
	}
	s, err := Strategy{Entry: "1", Exit: "0", MaxPositions: max(n, 1), PositionPct: 100 / float64(max(n, 1)),
		CommissionBps: costs.CommissionBps, SlippageBps: costs.SlippageBps}.Compile()
	if err != nil {
		return nil, err
	}
	return run(ctx, s, universe, cfg, true)
}

// firstDay returns the first day of the run, or the zero date.
func firstDay(universe []Asset, cfg Config) calendar.Date {
	days := timeline(universe, cfg)
	if len(days) == 0 {
		return calendar.Date{}
	}
	return days[0]
}

// timeline returns the days of a run.
func timeline(universe []Asset, cfg Config) []calendar.Date {
	days := cfg.Days
	if days == nil {
		seen := map[calendar.Date]bool{}
		for i := range universe {
			for _, d := range universe[i].Bars.Dates {
				if !seen[d] {
					seen[d] = true
					days = append(days, d)
				}
			}
		}
		slices.SortFunc(days, calendar.Date.Compare)
	}
	lo, hi := 0, len(days)
	if cfg.From != (calendar.Date{}) {
		lo, _ = slices.BinarySearchFunc(days, cfg.From, calendar.Date.Compare)
	}
	if cfg.To != (calendar.Date{}) {
		hi, _ = slices.BinarySearchFunc(days, cfg.To.AddDays(1), calendar.Date.Compare)
	}
	if lo >= hi {
		return nil
	}
	return days[lo:hi]
}

func run(ctx context.Context, s *Compiled, universe []Asset, cfg Config, firstDayOnly bool) (*Result, error) {
	if cfg.Cash == 0 {
		cfg.Cash = 100_000
	}
	if !(cfg.Cash > 0) || math.IsInf(cfg.Cash, 0) {
		return nil, &tradekit.ParamError{Param: "cash", Msg: fmt.Sprintf("must be more than 0, got %g", cfg.Cash)}
	}
	days := timeline(universe, cfg)
	if len(days) < 2 {
		return nil, tradekit.Errorf(tradekit.ErrInvalid, "a backtest needs at least 2 trading days, the universe has %d in the period", len(days))
	}
	assets, err := evaluate(ctx, s, universe, cfg.Workers)
	if err != nil {
		return nil, err
	}
	e := engine{s: s, assets: assets, cash: cfg.Cash, last: days[len(days)-1],
		slip: s.SlippageBps / 1e4, comm: s.CommissionBps / 1e4,
		res: &Result{Dates: days, Equity: make([]float64, len(days)), Exposure: make([]float64, len(days))}}
	equity := cfg.Cash
	for i, d := range days {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e.reach(d)
		e.open(d, equity)
		e.intraday(d)
		equity = e.close(i, d)
		if !firstDayOnly || i == 0 {
			e.signal(d)
		}
	}
	e.finish()
	e.res.Stats = computeStats(e.res, cfg.Cash)
	return e.res, nil
}

// evaluate computes every asset's signals on up to workers goroutines.
func evaluate(ctx context.Context, s *Compiled, universe []Asset, workers int) ([]*assetState, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	assets := make([]*assetState, len(universe))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i := range universe {
		a := &assetState{Asset: &universe[i], today: -1}
		assets[i] = a
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := a.Bars.Check(); err != nil {
				return fmt.Errorf("backtest: %s: %w", a.Symbol, err)
			}
			var err error
			if a.entry, err = s.entry.Eval(a.Bars); err != nil {
				return fmt.Errorf("backtest: %s: entry: %w", a.Symbol, err)
			}
			if a.exit, err = s.exit.Eval(a.Bars); err != nil {
				return fmt.Errorf("backtest: %s: exit: %w", a.Symbol, err)
			}
			return nil
		})
	}
	return assets, g.Wait()
}

// engine is a run in progress.
type engine struct {
	s          *Compiled
	assets     []*assetState
	cash       float64
	held       int           // open positions
	last       calendar.Date // the last day of the test
	slip, comm float64
	res        *Result
}

// reach moves every asset to day d: today is its bar of d, or -1.
func (e *engine) reach(d calendar.Date) {
	for _, a := range e.assets {
		a.today = -1
		dates := a.Bars.Dates
		for a.next < len(dates) && dates[a.next].Before(d) {
			a.lastClose = a.Bars.Close[a.next] // a bar off the timeline still sets the price
			a.next++
		}
		if a.next < len(dates) && dates[a.next] == d {
			a.today = a.next
			a.next++
		}
	}
}

// open fills the orders of the previous close at today's opens: sales
// first, then purchases sized on equity, the previous close's equity.
func (e *engine) open(d calendar.Date, equity float64) {
	for _, a := range e.assets {
		if a.today >= 0 && a.pos != nil && a.wantOut != "" {
			e.sell(a, d, a.Bars.Open[a.today]*(1-e.slip), a.wantOut)
		}
	}
	for _, a := range e.assets {
		if a.today < 0 || !a.wantIn {
			continue
		}
		a.wantIn = false
		if e.held >= e.s.MaxPositions || a.pos != nil {
			continue
		}
		price := a.Bars.Open[a.today] * (1 + e.slip)
		value := min(equity*e.s.PositionPct/100, e.cash/(1+e.comm))
		if !(price > 0) || !(value > 0) {
			continue
		}
		qty := value / price
		comm := value * e.comm
		e.cash -= value + comm
		e.res.Traded += value
		e.held++
		p := &position{trade: Trade{Symbol: a.Symbol, EntryDate: d, EntryPrice: price, Quantity: qty},
			cost: value + comm, comm: comm}
		if e.s.StopLossPct > 0 {
			p.stop = price * (1 - e.s.StopLossPct/100)
		}
		if e.s.TakeProfitPct > 0 {
			p.take = price * (1 + e.s.TakeProfitPct/100)
		}
		a.pos = p
	}
}

// intraday closes the positions whose stop-loss or take-profit price
// today's bar reached.
func (e *engine) intraday(d calendar.Date) {
	for _, a := range e.assets {
		p := a.pos
		if a.today < 0 || p == nil {
			continue
		}
		open, high, low := a.Bars.Open[a.today], a.Bars.High[a.today], a.Bars.Low[a.today]
		switch {
		case p.stop > 0 && low <= p.stop:
			e.sell(a, d, min(open, p.stop)*(1-e.slip), ExitStopLoss)
		case p.take > 0 && high >= p.take:
			e.sell(a, d, max(open, p.take)*(1-e.slip), ExitTakeProfit)
		}
	}
}

// close values the day's positions, sells those of delisted assets, and
// records the equity of day i.
func (e *engine) close(i int, d calendar.Date) float64 {
	invested := 0.0
	for _, a := range e.assets {
		if a.today >= 0 {
			a.lastClose = a.Bars.Close[a.today]
			if a.next == len(a.Bars.Dates) && d.Before(e.last) {
				a.wantIn = false
				if a.pos != nil {
					e.sell(a, d, a.lastClose*(1-e.slip), ExitDelisted)
				}
			}
		}
		if a.pos != nil {
			invested += a.pos.trade.Quantity * a.lastClose
		}
	}
	equity := e.cash + invested
	e.res.Equity[i] = equity
	if equity > 0 {
		e.res.Exposure[i] = invested / equity
	}
	return equity
}

// signal reads the close's signals for the next open.
func (e *engine) signal(d calendar.Date) {
	for _, a := range e.assets {
		if a.today < 0 {
			continue
		}
		switch {
		case a.pos != nil && a.wantOut == "":
			if !a.member(d) {
				a.wantOut = ExitRemoved
			} else if truthy(a.exit[a.today]) {
				a.wantOut = ExitSignal
			}
		case a.pos == nil:
			a.wantIn = a.next < len(a.Bars.Dates) && truthy(a.entry[a.today]) && a.member(d)
		}
	}
}

// finish reports the positions still open at the end.
func (e *engine) finish() {
	for _, a := range e.assets {
		if p := a.pos; p != nil {
			p.trade.ExitDate, p.trade.ExitPrice, p.trade.ExitReason = e.last, a.lastClose, ExitEnd
			e.record(p, p.trade.Quantity*a.lastClose, 0)
			a.pos = nil
		}
	}
}

// sell closes a's position at price on d.
func (e *engine) sell(a *assetState, d calendar.Date, price float64, reason string) {
	p := a.pos
	value := p.trade.Quantity * price
	comm := value * e.comm
	e.cash += value - comm
	e.res.Traded += value
	e.held--
	a.pos, a.wantOut = nil, ""
	p.trade.ExitDate, p.trade.ExitPrice, p.trade.ExitReason = d, price, reason
	e.record(p, value-comm, comm)
}

// record completes and keeps the trade of a closed position, whose exit
// brought proceeds and cost comm.
func (e *engine) record(p *position, proceeds, comm float64) {
	t := p.trade
	t.Commission = p.comm + comm
	t.PnL = proceeds - p.cost
	t.Return = t.PnL / p.cost
	t.Bars = daysBetween(e.res.Dates, t.EntryDate, t.ExitDate)
	e.res.Trades = append(e.res.Trades, t)
}

// daysBetween counts the days of the timeline from a to b, both included.
func daysBetween(days []calendar.Date, a, b calendar.Date) int {
	i, _ := slices.BinarySearchFunc(days, a, calendar.Date.Compare)
	j, _ := slices.BinarySearchFunc(days, b, calendar.Date.Compare)
	return j - i + 1
}

// truthy reports whether a signal value signals: defined and not zero.
func truthy(v float64) bool { return v != 0 && !math.IsNaN(v) }
