package copytrading

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// DemoProvider is the provider of the connections of the demo leaders
// that Tradekit before 2026-11-27 stored: their histories were simulated
// and stored as they were, reported by no broker, so their profiles are
// not verified. [LoadDemoLeaders] now records the demo leaders' trades
// through the paper broker instead, and their connections' provider is
// "paper".
const DemoProvider = "demo"

// DemoLeader is a fictional leader of the demo data set: a trend
// follower over a basket of demo assets. Each day it holds, in equal
// shares of its equity, the assets whose close is above their average
// close of the last Lookback days, trading whole units at the close; it
// rebalances a holding only once it has drifted more than a tenth from
// its share.
type DemoLeader struct {
	Slug        string
	DisplayName string
	Bio         string
	Symbols     []string
	Lookback    int
}

// DemoLeaders are the demo data set's leaders.
var DemoLeaders = []DemoLeader{
	{"demo-trend-hunter", "Demo: Trend Hunter", "technology stocks above their 50-day average", []string{"QNTC", "NWSC", "CLDR", "PXLM"}, 50},
	{"demo-steady-income", "Demo: Steady Income", "defensive stocks above their 100-day average", []string{"VLTG", "PLNH", "MRDN", "BRKN"}, 100},
	{"demo-fast-rotator", "Demo: Fast Rotator", "industrials and energy above their 20-day average", []string{"HLXI", "CSTL", "GRNF", "AUXM"}, 20},
}

// demoCash is a demo leader's starting cash; demoDays how many days of
// history it trades, ending at the last stored close.
var demoCash = decimal.New(100000, 0)

const demoDays = 365

// demoBand is the inverse of the drift a demo leader lets a holding
// take from its share before rebalancing it: 10, a tenth of the share.
var demoBand = decimal.New(10, 0)

// demoNamespace derives the demo rows' ids, so that loading again finds
// them.
var demoNamespace = uuid.MustParse("5b0c3f4e-2f43-4d36-9a5c-00000000de00")

// LoadDemoLeaders simulates each of [DemoLeaders] over the stored prices
// and stores it for the user of the same index in users. Its trades go
// through the built-in paper broker: an account opened (see
// [paper.Broker.OpenAccount]) on the first day of the simulation, with
// the simulation's starting cash, and every trade recorded there with
// [paper.Broker.Fill], at the close it was decided on. What the broker
// reports is stored as a sync would store it: a disconnected connection
// of provider "paper" to that account (nobody holds its tokens), its
// portfolio with positions, the broker's fills (ids included) and daily
// equity; then the published profile, whose bio says the leader and its
// trades are SYNTHETIC. Their profiles are verified, as every paper
// account's are: the broker reported the trades. Each leader is stored
// in one transaction.
//
// Each leader also publishes its rule as a strategy
// ([DemoLeader.Strategy], named by [DemoLeader.StrategyName], its
// description SYNTHETIC too), with a backtest over the whole stored
// history of its symbols stored as the leader's, so that the strategies
// list shows its author, total return and Sharpe ratio.
//
// A leader or strategy already stored is left as it is (a leader stored
// by an older version gains its strategy); a leader whose assets are not
// stored is skipped. db must be safe for concurrent use: backtests read
// prices on a few goroutines.
func LoadDemoLeaders(ctx context.Context, db *bun.DB, users []uuid.UUID, now time.Time) error {
	md := marketdata.NewStore(db)
	now = now.UTC().Truncate(time.Microsecond)
	for i, l := range DemoLeaders {
		if i >= len(users) {
			break
		}
		connID := uuid.NewSHA1(demoNamespace, []byte("connection:"+l.Slug))
		owner, err := connect.NewStore(db).ConnectionOwner(ctx, connID)
		switch {
		case err == nil: // stored already
		case errors.Is(err, tradekit.ErrNotFound):
			sim, err := simulate(ctx, md, l)
			if errors.Is(err, tradekit.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if err := storeDemo(ctx, db, l, users[i], connID, sim, now); err != nil {
				return err
			}
			owner = users[i]
		default:
			return fmt.Errorf("copytrading: demo leader %s: %w", l.Slug, err)
		}
		if err := publishDemoStrategy(ctx, db, l, owner, now); err != nil {
			return err
		}
	}
	return nil
}

// simulation is a demo leader's simulated account.
type simulation struct {
	cash      decimal.Decimal
	held      map[string]decimal.Decimal
	assets    map[string]uuid.UUID
	avg       map[string]decimal.Decimal
	trades    []demoTrade
	equity    []connect.EquityPoint
	firstDate calendar.Date
	lastDate  calendar.Date
	tradeDay  calendar.Date // the day of the latest trade
	dayTrades int           // the trades of tradeDay so far
}

// demoTrade is a trade of the simulation, to be recorded at the paper
// broker.
type demoTrade struct {
	symbol        string
	side          brokers.Side
	qty, price    decimal.Decimal
	at            time.Time
	positionAfter decimal.Decimal
}

// simulate runs leader l over the stored closes of its symbols.
func simulate(ctx context.Context, md *marketdata.Store, l DemoLeader) (*simulation, error) {
	closes := map[string]map[calendar.Date]decimal.Decimal{}
	sim := &simulation{cash: demoCash, held: map[string]decimal.Decimal{}, assets: map[string]uuid.UUID{}, avg: map[string]decimal.Decimal{}}
	var dates []calendar.Date
	seen := map[calendar.Date]bool{}
	series := map[string][]marketdata.Price{}
	for _, sym := range l.Symbols {
		a, err := md.AssetBySymbol(ctx, sym)
		if err != nil {
			return nil, err
		}
		bars, err := md.Prices(ctx, a.ID, calendar.Date{}, calendar.Date{})
		if err != nil {
			return nil, err
		}
		if len(bars) <= l.Lookback {
			return nil, fmt.Errorf("copytrading: %w", tradekit.Errorf(tradekit.ErrNotFound, "%s has too few prices", sym))
		}
		sim.assets[sym], series[sym], closes[sym] = a.ID, bars, map[calendar.Date]decimal.Decimal{}
		for _, b := range bars {
			closes[sym][b.Date] = b.Close
			if !seen[b.Date] {
				seen[b.Date] = true
				dates = append(dates, b.Date)
			}
		}
	}
	sort.Slice(dates, func(i, j int) bool { return dates[i].Before(dates[j]) })
	last := dates[len(dates)-1]
	first := last.AddDays(-demoDays)
	lastClose := map[string]decimal.Decimal{}
	sum := map[string]decimal.Decimal{} // the sum of the last Lookback closes
	idx := map[string]int{}
	for _, d := range dates {
		above := map[string]bool{}
		for _, sym := range l.Symbols {
			bars := series[sym]
			for idx[sym] < len(bars) && !bars[idx[sym]].Date.After(d) {
				b := bars[idx[sym]]
				sum[sym] = sum[sym].Add(b.Close)
				if idx[sym] >= l.Lookback {
					sum[sym] = sum[sym].Sub(bars[idx[sym]-l.Lookback].Close)
				}
				lastClose[sym] = b.Close
				idx[sym]++
			}
			if idx[sym] >= l.Lookback {
				above[sym] = lastClose[sym].Mul(decimal.NewFromInt(int64(l.Lookback))).GreaterThan(sum[sym])
			}
		}
		if d.Before(first) {
			continue
		}
		if sim.firstDate == (calendar.Date{}) {
			sim.firstDate = d
		}
		equity := sim.value(lastClose)
		target := decimal.Zero
		if n := len(above); n > 0 {
			k := 0
			for _, on := range above {
				if on {
					k++
				}
			}
			if k > 0 {
				target = equity.Div(decimal.NewFromInt(int64(len(l.Symbols))))
			}
		}
		// Sells first, so that the buys have the cash.
		for pass := 0; pass < 2; pass++ {
			for _, sym := range l.Symbols {
				c, ok := closes[sym][d]
				if !ok {
					continue
				}
				want := decimal.Zero
				if above[sym] {
					want = target.Div(c).Floor()
				}
				delta := want.Sub(sim.held[sym])
				if held := sim.held[sym]; want.IsPositive() && held.IsPositive() && delta.Abs().Mul(demoBand).LessThanOrEqual(want) {
					delta = decimal.Zero // within the band: no rebalancing
				}
				if pass == 0 && delta.IsNegative() || pass == 1 && delta.IsPositive() {
					if pass == 1 {
						delta = decimal.Min(delta, sim.cash.Div(c).Floor())
					}
					if !delta.IsZero() {
						sim.trade(sym, delta, c, d)
					}
				}
			}
		}
		sim.equity = append(sim.equity, connect.EquityPoint{Date: marketdata.SQLDate(d), Equity: sim.value(lastClose)})
		sim.lastDate = d
	}
	return sim, nil
}

// value returns the cash plus the holdings at the closes.
func (s *simulation) value(closes map[string]decimal.Decimal) decimal.Decimal {
	v := s.cash
	for sym, q := range s.held {
		v = v.Add(q.Mul(closes[sym]))
	}
	return v
}

// trade buys (delta > 0) or sells delta units of sym at price c on d.
func (s *simulation) trade(sym string, delta, c decimal.Decimal, d calendar.Date) {
	side, q := brokers.Buy, delta
	if delta.IsNegative() {
		side, q = brokers.Sell, delta.Neg()
	}
	if side == brokers.Buy {
		held := s.held[sym]
		s.avg[sym] = held.Mul(s.avg[sym]).Add(q.Mul(c)).DivRound(held.Add(q), 18)
	}
	s.cash = s.cash.Sub(delta.Mul(c))
	s.held[sym] = s.held[sym].Add(delta)
	// After the close in New York, a second apart within the day, so
	// that the broker records them in order.
	if d != s.tradeDay {
		s.tradeDay, s.dayTrades = d, 0
	}
	at := d.Time(time.UTC).Add(20*time.Hour + time.Duration(s.dayTrades)*time.Second)
	s.dayTrades++
	s.trades = append(s.trades, demoTrade{symbol: sym, side: side, qty: q, price: c, at: at, positionAfter: s.held[sym]})
}

// storeDemo records the simulated leader's trades at the paper broker
// and stores what it reports, in one transaction.
func storeDemo(ctx context.Context, db bun.IDB, l DemoLeader, userID, connID uuid.UUID, sim *simulation, now time.Time) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		broker := paper.New(tx, paper.Config{StartingCash: demoCash, Now: func() time.Time { return now }})
		accountID, number, err := broker.OpenAccount(ctx, uuid.NewSHA1(demoNamespace, []byte("paper-account:"+l.Slug)),
			sim.firstDate.Time(time.UTC))
		if err != nil {
			return fmt.Errorf("copytrading: demo leader %s: %w", l.Slug, err)
		}
		fills, err := demoFills(ctx, broker, accountID, sim.trades)
		if err != nil {
			return fmt.Errorf("copytrading: demo leader %s: %w", l.Slug, err)
		}
		h := connect.AccountHistory{
			Connection: connect.Connection{ID: connID, UserID: userID, Provider: "paper", Status: connect.Disconnected,
				RedirectURL: "https://demo.tradekit.example/", AccountID: accountID.String(), AccountName: number, CreatedAt: now, UpdatedAt: now},
			Portfolio: connect.Portfolio{ID: uuid.NewSHA1(demoNamespace, []byte("portfolio:"+l.Slug)),
				Currency: "USD", Cash: sim.cash, Equity: sim.equity[len(sim.equity)-1].Equity, UpdatedAt: now},
			Fills:  fills,
			Equity: sim.equity,
		}
		for _, sym := range l.Symbols {
			if q := sim.held[sym]; q.IsPositive() {
				id := sim.assets[sym]
				h.Portfolio.Positions = append(h.Portfolio.Positions,
					connect.Position{Symbol: sym, AssetID: &id, Quantity: q, AverageCost: sim.avg[sym]})
			}
		}
		if err := connect.NewStore(tx).InsertAccountHistory(ctx, &h); err != nil {
			return fmt.Errorf("copytrading: demo leader %s: %w", l.Slug, err)
		}
		p := Profile{ID: uuid.NewSHA1(demoNamespace, []byte("profile:"+l.Slug)), UserID: userID, PortfolioID: h.Portfolio.ID, Slug: l.Slug,
			DisplayName: l.DisplayName, PublishedAt: now, MonthlyReturns: "[]",
			Bio: "SYNTHETIC demo leader: a fictional trader of the synthetic demo prices, holding " + l.Bio +
				", traded by a deterministic simulation through a paper-broker account; not a real person, not real performance."}
		if _, err := tx.NewInsert().Model(&p).Exec(ctx); err != nil {
			return fmt.Errorf("copytrading: demo profile: %w", err)
		}
		return nil
	})
}

// demoFills records the trades in the paper account, in order, and
// returns the fills as the broker reported them.
func demoFills(ctx context.Context, broker *paper.Broker, accountID uuid.UUID, trades []demoTrade) ([]connect.Fill, error) {
	fills := make([]connect.Fill, len(trades))
	for i, t := range trades {
		o, err := broker.Fill(ctx, accountID.String(), t.symbol, t.side, t.qty, t.price, t.at)
		if err != nil {
			return nil, err
		}
		after := t.positionAfter
		fills[i] = connect.Fill{BrokerID: o.ID, Symbol: o.Symbol, Side: o.Side, Quantity: o.FilledQty, Price: *o.FilledAvgPrice,
			FilledAt: o.FilledAt.UTC(), PositionAfter: &after}
	}
	return fills, nil
}
