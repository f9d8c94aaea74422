package paper

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// lookback is how many days of closes before a range are read with it, so
// that the close on or before the range's first day is nearly always found
// in the same query (weekends and holidays are shorter than that).
const lookback = 10

// pricer values symbols at Tradekit's stored daily closes. It lives for one
// request and reads each symbol's closes once.
type pricer struct {
	md       *marketdata.Store
	bySymbol map[string]*closes
}

// closes are the stored closes of the asset with a symbol, oldest first,
// from the last one on or before a range's first day to its last day.
type closes struct {
	asset *marketdata.Asset // nil when no stored asset has the symbol
	bars  []marketdata.Price
}

func newPricer(md *marketdata.Store) *pricer {
	return &pricer{md: md, bySymbol: map[string]*closes{}}
}

// load reads the closes of symbol that value it on the days from from to
// to (from <= to).
func (p *pricer) load(ctx context.Context, symbol string, from, to calendar.Date) (*closes, error) {
	if c, ok := p.bySymbol[symbol]; ok {
		return c, nil
	}
	c := &closes{}
	a, err := p.md.AssetBySymbol(ctx, symbol)
	if errors.Is(err, tradekit.ErrNotFound) {
		p.bySymbol[symbol] = c
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("paper: %w", err)
	}
	c.asset = &a
	lo := from.AddDays(-lookback)
	bars, err := p.md.Prices(ctx, a.ID, lo, to)
	if err != nil {
		return nil, fmt.Errorf("paper: %w", err)
	}
	if len(bars) == 0 || bars[0].Date.After(from) {
		// No close in the lookback: the last one before it, if any.
		older, err := p.md.Prices(ctx, a.ID, calendar.Date{}, lo.AddDays(-1))
		if err != nil {
			return nil, fmt.Errorf("paper: %w", err)
		}
		if len(older) > 0 {
			bars = append([]marketdata.Price{older[len(older)-1]}, bars...)
		}
	}
	c.bars = bars
	p.bySymbol[symbol] = c
	return c, nil
}

// on returns the close on or before d, and whether there is one.
func (c *closes) on(d calendar.Date) (decimal.Decimal, bool) {
	i := sort.Search(len(c.bars), func(i int) bool { return c.bars[i].Date.After(d) })
	if i == 0 {
		return decimal.Decimal{}, false
	}
	return c.bars[i-1].Close, true
}

// priceOn returns the price at which a holding is valued on day d: the
// close on or before d, or the average entry price when none is stored.
func (c *closes) priceOn(d calendar.Date, h holding) decimal.Decimal {
	if p, ok := c.on(d); ok {
		return p
	}
	return h.Avg
}

// valued is an open position with its valuation today.
type valued struct {
	position
	asset   *marketdata.Asset
	price   decimal.Decimal  // the close on or before today, or the average entry price
	lastday *decimal.Decimal // the close on or before yesterday, if any
	value   decimal.Decimal  // Qty × price
}

// valuePositions returns the account's open positions valued today, by
// symbol, and the sum of their values.
func (b *Broker) valuePositions(ctx context.Context, a account) ([]valued, decimal.Decimal, error) {
	ps, err := positions(ctx, b.db, a.ID)
	if err != nil {
		return nil, decimal.Decimal{}, err
	}
	today := b.today()
	pr := newPricer(b.md)
	out := make([]valued, 0, len(ps))
	total := decimal.Zero
	for _, p := range ps {
		c, err := pr.load(ctx, p.Symbol, today.AddDays(-1), today)
		if err != nil {
			return nil, decimal.Decimal{}, err
		}
		v := valued{position: p, asset: c.asset, price: c.priceOn(today, holding{Qty: p.Qty, Avg: p.AvgEntryPrice})}
		if last, ok := c.on(today.AddDays(-1)); ok {
			v.lastday = &last
		}
		v.value = p.Qty.Mul(v.price)
		total = total.Add(v.value)
		out = append(out, v)
	}
	return out, total, nil
}

// point is an account's equity at the end of a day.
type point struct {
	Date   calendar.Date
	Equity decimal.Decimal
}

// history returns the account's equity at the end of each day from start
// to end (UTC days, both included; start is moved up to the day the
// account was opened), and the base: the equity at the end of the day
// before the first point, or the starting cash when the first point is
// the account's first day. It replays the filled orders from the starting
// cash with [apply], and values each day's holdings at the close on or
// before that day, or at their average entry price when none is stored.
func (b *Broker) history(ctx context.Context, a account, start, end calendar.Date) (decimal.Decimal, []point, error) {
	opened := calendar.DateOf(a.CreatedAt)
	if start.Before(opened) {
		start = opened
	}
	if end.Before(start) {
		return a.StartingCash, []point{}, nil
	}
	fills, err := filledOrders(ctx, b.db, a.ID)
	if err != nil {
		return decimal.Decimal{}, nil, err
	}
	from := start
	if start.After(opened) {
		from = start.AddDays(-1)
	}
	pr := newPricer(b.md)
	for _, f := range fills {
		if _, err := pr.load(ctx, f.Symbol, from, end); err != nil {
			return decimal.Decimal{}, nil, err
		}
	}
	cash, held := a.StartingCash, map[string]holding{}
	next := 0
	// replayTo applies the fills made before the end of day d.
	replayTo := func(d calendar.Date) error {
		limit := d.AddDays(1).Time(time.UTC)
		for ; next < len(fills); next++ {
			f := fills[next]
			if f.FilledAt == nil || f.FilledAvgPrice == nil {
				return fmt.Errorf("paper: filled order %s of account %s has no fill time or price", f.ID, a.ID)
			}
			if !f.FilledAt.Before(limit) {
				break
			}
			var err error
			var h holding
			var commission decimal.Decimal
			if f.Commission != nil {
				commission = *f.Commission
			}
			cash, h, err = apply(cash, held[f.Symbol], f.Symbol, brokers.Side(f.Side), f.FilledQty, *f.FilledAvgPrice, commission)
			if err != nil {
				return fmt.Errorf("paper: replaying order %s of account %s: %w", f.ID, a.ID, err)
			}
			if h.Qty.IsZero() {
				delete(held, f.Symbol)
			} else {
				held[f.Symbol] = h
			}
		}
		return nil
	}
	equity := func(d calendar.Date) decimal.Decimal {
		e := cash
		for sym, h := range held {
			e = e.Add(h.Qty.Mul(pr.bySymbol[sym].priceOn(d, h)))
		}
		return e
	}
	base := a.StartingCash
	if start.After(opened) {
		if err := replayTo(from); err != nil {
			return decimal.Decimal{}, nil, err
		}
		base = equity(from)
	}
	pts := make([]point, 0, end.Sub(start)+1)
	for d := start; !d.After(end); d = d.AddDays(1) {
		if err := replayTo(d); err != nil {
			return decimal.Decimal{}, nil, err
		}
		pts = append(pts, point{Date: d, Equity: equity(d)})
	}
	return base, pts, nil
}

// lastEquity returns the account's equity at the end of yesterday, as
// [Broker.history] computes it, from its positions valued today (vs). It
// undoes today's fills from the cash and the quantities rather than
// replaying every fill since the account opened, so that reading the
// account costs the same however long its history. When a holding of
// yesterday has no close on or before yesterday and its average entry
// price of yesterday is not known (it was bought today, or sold out), it
// falls back to the replay.
func (b *Broker) lastEquity(ctx context.Context, a account, vs []valued) (decimal.Decimal, error) {
	today := b.today()
	if !calendar.DateOf(a.CreatedAt).Before(today) {
		return a.StartingCash, nil
	}
	var fills []order
	err := b.db.NewSelect().Model(&fills).Where("account_id = ? AND status = ? AND filled_at >= ?", a.ID, statusFilled, today.Time(time.UTC)).
		Scan(ctx)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("paper: today's fills of %s: %w", a.ID, err)
	}
	replay := func() (decimal.Decimal, error) {
		base, _, err := b.history(ctx, a, today, today)
		return base, err
	}
	type held struct {
		qty, avg  decimal.Decimal
		close     *decimal.Decimal // on or before yesterday
		avgKnown  bool             // avg is yesterday's
		closeRead bool
	}
	hs := make(map[string]*held, len(vs))
	for _, v := range vs {
		hs[v.Symbol] = &held{qty: v.Qty, avg: v.AvgEntryPrice, close: v.lastday, avgKnown: true, closeRead: true}
	}
	cash := a.Cash
	for _, f := range fills {
		if f.FilledAvgPrice == nil {
			return replay()
		}
		h := hs[f.Symbol]
		if h == nil {
			h = &held{}
			hs[f.Symbol] = h
		}
		notional := f.FilledQty.Mul(*f.FilledAvgPrice)
		var commission decimal.Decimal
		if f.Commission != nil {
			commission = *f.Commission
		}
		if f.Side == string(brokers.Buy) {
			cash, h.qty, h.avgKnown = cash.Add(notional).Add(commission), h.qty.Sub(f.FilledQty), false
		} else {
			cash, h.qty = cash.Sub(notional).Add(commission), h.qty.Add(f.FilledQty)
		}
	}
	equity := cash
	yesterday := today.AddDays(-1)
	pr := newPricer(b.md)
	for sym, h := range hs {
		if h.qty.IsZero() {
			continue
		}
		if !h.closeRead {
			c, err := pr.load(ctx, sym, yesterday, yesterday)
			if err != nil {
				return decimal.Decimal{}, err
			}
			if p, ok := c.on(yesterday); ok {
				h.close = &p
			}
		}
		switch {
		case h.close != nil:
			equity = equity.Add(h.qty.Mul(*h.close))
		case h.avgKnown:
			equity = equity.Add(h.qty.Mul(h.avg))
		default:
			return replay()
		}
	}
	return equity, nil
}
