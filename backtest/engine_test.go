package backtest_test

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
)

var day0 = calendar.NewDate(2024, 1, 1)

// bars makes a series of consecutive days from day0 with the given opens
// and closes; highs and lows are the larger and smaller of the two,
// unless hl gives them.
func bars(open, close []float64, hl ...[]float64) ohlcv.Series {
	s := ohlcv.Series{Open: open, Close: close, High: make([]float64, len(open)), Low: make([]float64, len(open)), Volume: make([]float64, len(open))}
	for i := range open {
		s.Dates = append(s.Dates, day0.AddDays(i))
		s.High[i], s.Low[i] = max(open[i], close[i]), min(open[i], close[i])
		if len(hl) == 2 {
			s.High[i], s.Low[i] = hl[0][i], hl[1][i]
		}
	}
	return s
}

func compile(t *testing.T, s backtest.Strategy) *backtest.Compiled {
	t.Helper()
	c, err := s.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

var (
	opens  = []float64{100, 105, 100, 95, 125}
	closes = []float64{100, 110, 90, 120, 130}
)

// TestBuyAndHold checks the benchmark on a constructed series against
// figures worked out by hand: bought at the second open (105), worth
// 130/105 of the cash at the end; the deepest fall is from the close of
// 110 to 90.
func TestBuyAndHold(t *testing.T) {
	u := []backtest.Asset{{Symbol: "A", Bars: bars(opens, closes)}}
	res, err := backtest.BuyAndHold(context.Background(), compile(t, backtest.Strategy{Entry: "1", Exit: "0"}), u, backtest.Config{Cash: 1000})
	if err != nil {
		t.Fatal(err)
	}
	q := 1000.0 / 105
	want := []float64{1000, q * 110, q * 90, q * 120, q * 130}
	for i := range want {
		if !near(res.Equity[i], want[i]) {
			t.Errorf("equity[%d] = %v, want %v", i, res.Equity[i], want[i])
		}
	}
	st := res.Stats
	years := 4 / 365.25
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"total return", st.TotalReturn, 130.0/105 - 1},
		{"CAGR", st.CAGR, math.Pow(130.0/105, 1/years) - 1},
		{"max drawdown", st.MaxDrawdown, 90.0/110 - 1},
		{"exposure", st.Exposure, 4.0 / 5},
		{"win rate", st.WinRate, 1},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if st.MaxDrawdownDays != 1 || st.Trades != 1 || res.Trades[0].ExitReason != backtest.ExitEnd || !math.IsInf(st.ProfitFactor, 1) {
		t.Errorf("drawdown days %d, trades %d (%+v), profit factor %v", st.MaxDrawdownDays, st.Trades, res.Trades, st.ProfitFactor)
	}
}

// TestCosts checks that commission and slippage cost exactly what they
// should on a round trip: entry at the open after close 100 (105), exit
// at the open after close 90 (95).
func TestCosts(t *testing.T) {
	u := []backtest.Asset{{Symbol: "A", Bars: bars(opens, closes)}}
	run := func(comm, slip float64) *backtest.Result {
		res, err := backtest.Run(context.Background(), compile(t, backtest.Strategy{Entry: "close == 100", Exit: "close == 90",
			CommissionBps: comm, SlippageBps: slip}), u, backtest.Config{Cash: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	free, costly := run(0, 0), run(10, 20)
	if got, want := free.Stats.FinalEquity, 1000*95.0/105; !near(got, want) {
		t.Errorf("without costs: %v, want %v", got, want)
	}
	c, s := 0.001, 0.002
	want := 1000 / (1 + c) / (105 * (1 + s)) * (95 * (1 - s)) * (1 - c)
	if got := costly.Stats.FinalEquity; !near(got, want) {
		t.Errorf("with costs: %v, want %v", got, want)
	}
	tr := costly.Trades[0]
	if tr.EntryDate != day0.AddDays(1) || tr.ExitDate != day0.AddDays(3) || tr.ExitReason != backtest.ExitSignal ||
		!near(tr.EntryPrice, 105*1.002) || !near(tr.ExitPrice, 95*0.998) || !near(tr.PnL, want-1000) || tr.Bars != 3 {
		t.Errorf("trade %+v", tr)
	}
	if !near(tr.Commission, 1000/(1+c)*c+tr.Quantity*tr.ExitPrice*c) {
		t.Errorf("commission %v", tr.Commission)
	}
}

// TestStops checks a stop-loss filled at its price, one filled at a
// lower open (a gap), and a take-profit.
func TestStops(t *testing.T) {
	// Bought at 100 on day 1. Stop 10 % below: 90.
	open := []float64{100, 100, 95, 80, 100}
	close := []float64{100, 98, 94, 85, 100}
	high := []float64{100, 101, 96, 86, 100}
	for _, c := range []struct {
		name   string
		low    []float64
		take   float64
		reason string
		day    int
		price  float64
	}{
		{"stop reached during the bar", []float64{100, 97, 89, 79, 100}, 0, backtest.ExitStopLoss, 2, 90},
		{"stop gapped through at the open", []float64{100, 97, 91, 79, 100}, 0, backtest.ExitStopLoss, 3, 80},
		{"take-profit", []float64{100, 97, 91, 79, 100}, 1, backtest.ExitTakeProfit, 1, 101},
	} {
		u := []backtest.Asset{{Symbol: "A", Bars: bars(open, close, high, c.low)}}
		res, err := backtest.Run(context.Background(), compile(t, backtest.Strategy{Entry: "close == 100", Exit: "0",
			StopLossPct: 10, TakeProfitPct: c.take}), u, backtest.Config{})
		if err != nil {
			t.Fatal(err)
		}
		tr := res.Trades[0]
		if tr.ExitReason != c.reason || tr.ExitDate != day0.AddDays(c.day) || !near(tr.ExitPrice, c.price) {
			t.Errorf("%s: %s on %s at %v, want %s on %s at %v", c.name, tr.ExitReason, tr.ExitDate, tr.ExitPrice, c.reason, day0.AddDays(c.day), c.price)
		}
	}
}

// TestSurvivorship checks that a delisted asset's trade and a removed
// member's trade stay in the results, and that an asset is not entered
// before it joins.
func TestSurvivorship(t *testing.T) {
	flat := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = 50 + float64(i)
		}
		return x
	}
	u := []backtest.Asset{
		{Symbol: "GONE", Bars: bars(flat(4), flat(4))},                                                  // delisted after day 3
		{Symbol: "OUT", Bars: bars(flat(10), flat(10)), Member: []backtest.Span{{To: day0.AddDays(5)}}}, // leaves on day 5
		{Symbol: "LATE", Bars: bars(flat(10), flat(10)), Member: []backtest.Span{{From: day0.AddDays(7)}}},
	}
	res, err := backtest.Run(context.Background(), compile(t, backtest.Strategy{Entry: "1", Exit: "0", MaxPositions: 3}), u, backtest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	type trade struct {
		Symbol, Reason string
		Entry, Exit    calendar.Date
	}
	var got []trade
	for _, tr := range res.Trades {
		got = append(got, trade{tr.Symbol, tr.ExitReason, tr.EntryDate, tr.ExitDate})
	}
	want := []trade{
		{"GONE", backtest.ExitDelisted, day0.AddDays(1), day0.AddDays(3)},
		{"OUT", backtest.ExitRemoved, day0.AddDays(1), day0.AddDays(6)}, // not a member on day 5's close: sold at day 6's open
		{"LATE", backtest.ExitEnd, day0.AddDays(8), day0.AddDays(9)},    // a member from day 7: bought at day 8's open
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("trades (-want +got):\n%s", diff)
	}
}

// TestMaxPositions checks that entries past MaxPositions wait, in the
// universe's order.
func TestMaxPositions(t *testing.T) {
	var u []backtest.Asset
	for _, s := range []string{"A", "B", "C"} {
		u = append(u, backtest.Asset{Symbol: s, Bars: bars(opens, closes)})
	}
	res, err := backtest.Run(context.Background(), compile(t, backtest.Strategy{Entry: "1", Exit: "0", MaxPositions: 2}), u, backtest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trades) != 2 || res.Trades[0].Symbol != "A" || res.Trades[1].Symbol != "B" {
		t.Errorf("trades %+v, want A and B", res.Trades)
	}
	if !near(res.Trades[0].Quantity*105, 50_000) {
		t.Errorf("A's position is worth %v at entry, want half the equity", res.Trades[0].Quantity*105)
	}
}

// randomWalk makes n bars of a seeded random walk.
func randomWalk(r *rand.Rand, n int) ohlcv.Series {
	s := ohlcv.Series{Dates: make([]calendar.Date, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	p := 50 + r.Float64()*100
	d := calendar.NewDate(2010, 1, 4)
	for i := range n {
		for d.Weekday() == 0 || d.Weekday() == 6 {
			d = d.AddDays(1)
		}
		s.Dates[i] = d
		d = d.AddDays(1)
		o := p * (1 + r.NormFloat64()*0.005)
		p = o * (1 + r.NormFloat64()*0.015)
		s.Open[i], s.Close[i] = o, p
		s.High[i] = max(o, p) * (1 + r.Float64()*0.01)
		s.Low[i] = min(o, p) * (1 - r.Float64()*0.01)
		s.Volume[i] = 1e6
	}
	return s
}

func universe(n, bars int) []backtest.Asset {
	r := rand.New(rand.NewPCG(1, 2))
	u := make([]backtest.Asset, n)
	for i := range u {
		u[i] = backtest.Asset{Symbol: "S" + string(rune('A'+i%26)) + string(rune('A'+i/26%26)), Bars: randomWalk(r, bars)}
	}
	return u
}

var crossover = backtest.Strategy{
	Entry: "crossover(sma(close, 10), sma(close, 30))", Exit: "crossunder(sma(close, 10), sma(close, 30))",
	MaxPositions: 3, StopLossPct: 8, TakeProfitPct: 20, CommissionBps: 5, SlippageBps: 5,
}

// TestNoLookAhead checks that nothing on a day depends on a later day,
// in two ways. Cut after day k, the bars give the same equity through day
// k and the same trades closed by then. And with day k+1's close, high and
// low changed (its open kept), the entries filled at day k+1's open are
// the same: a signal read one bar early would change them.
func TestNoLookAhead(t *testing.T) {
	u := universe(6, 400)
	s := compile(t, crossover)
	full, err := backtest.Run(context.Background(), s, u, backtest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Trades) < 20 {
		t.Fatalf("only %d trades: the test needs more", len(full.Trades))
	}
	until := func(ts []backtest.Trade, d calendar.Date, exited bool) []backtest.Trade {
		var out []backtest.Trade
		for _, tr := range ts {
			switch {
			case exited && !tr.ExitDate.After(d) && tr.ExitReason != backtest.ExitEnd:
				out = append(out, tr)
			case !exited && !tr.EntryDate.After(d):
				out = append(out, backtest.Trade{Symbol: tr.Symbol, EntryDate: tr.EntryDate, EntryPrice: tr.EntryPrice, Quantity: tr.Quantity})
			}
		}
		if !exited { // trades are listed as they close
			slices.SortFunc(out, func(a, b backtest.Trade) int {
				return cmp.Or(a.EntryDate.Compare(b.EntryDate), strings.Compare(a.Symbol, b.Symbol))
			})
		}
		return out
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{40, 123, 250, 398} {
		cut := make([]backtest.Asset, len(u))
		changed := make([]backtest.Asset, len(u))
		for i, a := range u {
			cut[i], changed[i] = a, a
			cut[i].Bars = a.Bars.Slice(0, k+1)
			b := a.Bars
			b.Close, b.High, b.Low = slices.Clone(b.Close), slices.Clone(b.High), slices.Clone(b.Low)
			b.Close[k+1] *= 1 + (r.Float64()-0.5)/5
			b.High[k+1], b.Low[k+1] = max(b.Open[k+1], b.Close[k+1])*1.01, min(b.Open[k+1], b.Close[k+1])*0.99
			changed[i].Bars = b
		}
		part, err := backtest.Run(context.Background(), s, cut, backtest.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(full.Equity[:k+1], part.Equity); diff != "" {
			t.Errorf("cut after day %d: equity (-full +cut):\n%s", k, diff)
		}
		if diff := gocmp.Diff(until(full.Trades, full.Dates[k], true), until(part.Trades, full.Dates[k], true)); diff != "" {
			t.Errorf("cut after day %d: trades (-full +cut):\n%s", k, diff)
		}
		other, err := backtest.Run(context.Background(), s, changed, backtest.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(until(full.Trades, full.Dates[k+1], false), until(other.Trades, full.Dates[k+1], false)); diff != "" {
			t.Errorf("day %d's close changed: entries (-before +after):\n%s", k+1, diff)
		}
	}
}

// TestCalendarDays checks that a run follows the given trading days: an
// asset without a bar on a day does not trade that day.
func TestCalendarDays(t *testing.T) {
	a := bars(opens, closes)
	// Day 1 is a holiday on the calendar: the asset's bar of it is off
	// the timeline, so the first open after the first close is day 2's.
	days := []calendar.Date{day0, day0.AddDays(2), day0.AddDays(3), day0.AddDays(4)}
	res, err := backtest.Run(context.Background(), compile(t, backtest.Strategy{Entry: "close == 100", Exit: "0"}),
		[]backtest.Asset{{Symbol: "A", Bars: a}}, backtest.Config{Days: days})
	if err != nil {
		t.Fatal(err)
	}
	if tr := res.Trades[0]; tr.EntryDate != day0.AddDays(2) || tr.EntryPrice != 100 || len(res.Equity) != 4 {
		t.Errorf("entry on %s at %v, %d days", tr.EntryDate, tr.EntryPrice, len(res.Equity))
	}
}

func TestStrategyErrors(t *testing.T) {
	for _, c := range []struct {
		s    backtest.Strategy
		want string
	}{
		{backtest.Strategy{Exit: "0"}, "entry: is required"},
		{backtest.Strategy{Entry: "sma(close)", Exit: "0"}, "entry: "},
		{backtest.Strategy{Entry: "1", Exit: "nope("}, "exit: "},
		{backtest.Strategy{Entry: "1", Exit: "0", MaxPositions: -1}, "maxPositions: must be from 1 to 1000"},
		{backtest.Strategy{Entry: "1", Exit: "0", PositionPct: 150}, "positionPct: must be from 0 to 100"},
		{backtest.Strategy{Entry: "1", Exit: "0", SlippageBps: math.NaN()}, "slippageBps: must be from 0 to 1000"},
	} {
		if _, err := c.s.Compile(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.s, err, c.want)
		}
	}
}

// TestHash checks the canonical form: the same rules written differently
// hash the same, and any change of a rule changes the hash.
func TestHash(t *testing.T) {
	a := compile(t, backtest.Strategy{Entry: "crossover( sma(close,10) , sma(close, 30) )", Exit: "(close < 5)"})
	b := compile(t, backtest.Strategy{Entry: "crossover(sma(close, 10), sma(close, 30))", Exit: "close < 5", MaxPositions: 1, PositionPct: 100})
	if a.Hash() != b.Hash() {
		t.Errorf("equal rules, different hashes:\n%s\n%s", a.Canonical(), b.Canonical())
	}
	want := `{"v":1,"entry":"crossover(sma(close,10),sma(close,30))","exit":"close<5","maxPositions":1,"positionPct":100,"stopLossPct":0,"takeProfitPct":0,"commissionBps":0,"slippageBps":0}`
	if got := string(b.Canonical()); got != want {
		t.Errorf("canonical form\n got %s\nwant %s", got, want)
	}
	if len(a.Hash()) != 64 {
		t.Errorf("hash %q", a.Hash())
	}
	c := compile(t, backtest.Strategy{Entry: "crossover(sma(close, 10), sma(close, 30))", Exit: "close < 5", SlippageBps: 1})
	if c.Hash() == b.Hash() {
		t.Error("a different slippage, the same hash")
	}
}

// TestDrawdown checks the deepest fall and the longest time under water
// on a curve worked out by hand.
func TestDrawdown(t *testing.T) {
	// Equity 100 → 120 → 90 → 100 → 130 → 117 → 117: the deepest fall is
	// 120 → 90 (−25 %), under water for 2 days; 130 → 117 lasts 2 days to
	// the end too.
	open := []float64{100, 100, 120, 90, 100, 130, 117}
	close := []float64{100, 120, 90, 100, 130, 117, 117}
	u := []backtest.Asset{{Symbol: "A", Bars: bars(open, close)}}
	res, err := backtest.Run(context.Background(), compile(t, backtest.Strategy{Entry: "close == 100", Exit: "0"}), u, backtest.Config{Cash: 100})
	if err != nil {
		t.Fatal(err)
	}
	if st := res.Stats; !near(st.MaxDrawdown, -0.25) || st.MaxDrawdownDays != 2 || !near(st.Calmar, st.CAGR/0.25) {
		t.Errorf("max drawdown %v over %d days, Calmar %v; want -0.25 over 2", st.MaxDrawdown, st.MaxDrawdownDays, st.Calmar)
	}
}
