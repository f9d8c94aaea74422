package brokers

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func ptr(s string) *decimal.Decimal { d := dec(s); return &d }

// buy and sell return a market order of qty units of AAPL, a stock.
func buy(qty string) Order {
	return Order{Symbol: "AAPL", AssetType: "stock", Side: Buy, Type: Market, Quantity: dec(qty)}
}

func sell(qty string) Order { o := buy(qty); o.Side = Sell; return o }

func withStop(o Order, stop string) Order { o.StopLossPrice = ptr(stop); return o }

func atLimit(o Order, price string) Order { o.Type, o.LimitPrice = Limit, ptr(price); return o }

// noLimits returns guardrails that limit nothing; each case sets the one
// it tests.
func noLimits() Guardrails { return Guardrails{AllowedAssetTypes: AssetTypes()} }

// ctx returns an account of 10,000 in equity and no position, with AAPL
// at 100.
func ctx(ps ...Held) Context {
	return Context{Price: dec("100"), Equity: dec("10000"), Cash: dec("10000"), Positions: ps}
}

// Four positions of 100 of risk in all (see maxPortfolioRiskPct below).
var mixed = []Held{
	{Symbol: "X", Quantity: dec("10"), Price: dec("50"), StopLossPrice: ptr("45")}, // 10 × (50 − 45) = 50
	{Symbol: "Y", Quantity: dec("10"), Price: dec("50"), ATR: dec("1")},            // 10 × min(50, 2 × 1) = 20
	{Symbol: "Z", Quantity: dec("-10"), Price: dec("20")},                          // 10 × 20 × 10 % = 20
	{Symbol: "W", Quantity: dec("1"), Price: dec("10"), ATR: dec("8")},             // 1 × min(10, 2 × 8) = 10
}

func TestCheckRules(t *testing.T) {
	trades := func(limit, today int) (Guardrails, Context) {
		g, c := noLimits(), ctx()
		g.MaxDailyTrades, c.TradesToday = limit, today
		return g, c
	}
	size := func(limit string, ps ...Held) (Guardrails, Context) {
		g := noLimits()
		g.MaxPositionSizePct = dec(limit)
		return g, ctx(ps...)
	}
	risk := func(limit string, ps ...Held) (Guardrails, Context) {
		g := noLimits()
		g.MaxPortfolioRiskPct = dec(limit)
		return g, ctx(ps...)
	}
	with := func(g Guardrails, c Context, f func(*Guardrails, *Context)) (Guardrails, Context) {
		f(&g, &c)
		return g, c
	}
	aapl := func(qty, stop string) Held {
		h := Held{Symbol: "AAPL", Quantity: dec(qty), Price: dec("100")}
		if stop != "" {
			h.StopLossPrice = ptr(stop)
		}
		return h
	}
	with2 := func(g Guardrails, c Context) func(func(*Guardrails, *Context)) (Guardrails, Context) {
		return func(f func(*Guardrails, *Context)) (Guardrails, Context) { return with(g, c, f) }
	}
	type setup = func() (Guardrails, Context)
	tests := []struct {
		name   string
		o      Order
		setup  setup
		rule   string
		actual string // the rule's Actual
		ok     bool
	}{
		// maxDailyTrades: TradesToday + 1 ≤ MaxDailyTrades.
		{"trades/under", buy("1"), func() (Guardrails, Context) { return trades(5, 3) }, RuleMaxDailyTrades, "4", true},
		{"trades/at", buy("1"), func() (Guardrails, Context) { return trades(5, 4) }, RuleMaxDailyTrades, "5", true},
		{"trades/over", buy("1"), func() (Guardrails, Context) { return trades(5, 5) }, RuleMaxDailyTrades, "6", false},
		{"trades/sell counts", sell("1"), func() (Guardrails, Context) { return trades(5, 5) }, RuleMaxDailyTrades, "6", false},
		{"trades/no limit", buy("1"), func() (Guardrails, Context) { return trades(0, 1000) }, RuleMaxDailyTrades, "1001", true},

		// maxPositionSizePct: |held + q| × price / equity × 100, equity 10,000.
		{"size/under", buy("19.99"), func() (Guardrails, Context) { return size("20") }, RuleMaxPositionSizePct, "19.99", true},
		{"size/at", buy("20"), func() (Guardrails, Context) { return size("20") }, RuleMaxPositionSizePct, "20", true},
		{"size/over", buy("20.01"), func() (Guardrails, Context) { return size("20") }, RuleMaxPositionSizePct, "20.01", false},
		{"size/over by less than the rounding", buy("20.0000000001"), func() (Guardrails, Context) { return size("20") }, RuleMaxPositionSizePct, "20", false}, // compared exactly, shown rounded
		{"size/adding at", buy("5"), func() (Guardrails, Context) { return size("20", aapl("15", "")) }, RuleMaxPositionSizePct, "20", true},
		{"size/adding over", buy("5.01"), func() (Guardrails, Context) { return size("20", aapl("15", "")) }, RuleMaxPositionSizePct, "20.01", false},
		{"size/limit price at", atLimit(buy("16"), "125"), func() (Guardrails, Context) { return size("20") }, RuleMaxPositionSizePct, "20", true},
		{"size/limit price over", atLimit(buy("16.01"), "125"), func() (Guardrails, Context) { return size("20") }, RuleMaxPositionSizePct, "20.0125", false},
		{"size/sell reducing an oversized position", sell("5"), func() (Guardrails, Context) { return size("20", aapl("30", "")) }, RuleMaxPositionSizePct, "25", true},
		{"size/sell turning short at", sell("30"), func() (Guardrails, Context) { return size("20", aapl("10", "")) }, RuleMaxPositionSizePct, "20", true},
		{"size/sell turning short over", sell("30.01"), func() (Guardrails, Context) { return size("20", aapl("10", "")) }, RuleMaxPositionSizePct, "20.01", false},
		{"size/no equity", buy("1"), func() (Guardrails, Context) {
			return with2(size("20"))(func(_ *Guardrails, c *Context) { c.Equity = dec("0") })
		}, RuleMaxPositionSizePct, "0", false},
		{"size/no equity, no limit", buy("1"), func() (Guardrails, Context) {
			return with2(size("0"))(func(_ *Guardrails, c *Context) { c.Equity = dec("-5") })
		}, RuleMaxPositionSizePct, "0", true},

		// maxPortfolioRiskPct: Σ risk / equity × 100; mixed holds 100 of risk.
		{"risk/under", withStop(buy("9.99"), "90"), func() (Guardrails, Context) { return risk("2", mixed...) }, RuleMaxPortfolioRiskPct, "1.999", true},
		{"risk/at", withStop(buy("10"), "90"), func() (Guardrails, Context) { return risk("2", mixed...) }, RuleMaxPortfolioRiskPct, "2", true},
		{"risk/over", withStop(buy("10.01"), "90"), func() (Guardrails, Context) { return risk("2", mixed...) }, RuleMaxPortfolioRiskPct, "2.001", false},
		{"risk/stop just under the price", withStop(buy("10"), "99.99"), func() (Guardrails, Context) { return risk("2", mixed...) }, RuleMaxPortfolioRiskPct, "1.001", true},
		{"risk/order at 2 ATR at", buy("10"), func() (Guardrails, Context) {
			return with2(risk("2", mixed...))(func(_ *Guardrails, c *Context) { c.ATR = dec("5") })
		}, RuleMaxPortfolioRiskPct, "2", true},
		{"risk/order at 2 ATR over", buy("10"), func() (Guardrails, Context) {
			return with2(risk("2", mixed...))(func(_ *Guardrails, c *Context) { c.ATR = dec("5.01") })
		}, RuleMaxPortfolioRiskPct, "2.002", false},
		{"risk/order at the fallback at", buy("10"), func() (Guardrails, Context) { return risk("2", mixed...) }, RuleMaxPortfolioRiskPct, "2", true},
		{"risk/order at the fallback over", buy("10.01"), func() (Guardrails, Context) { return risk("2", mixed...) }, RuleMaxPortfolioRiskPct, "2.001", false},
		{"risk/ATR capped at the price", buy("10"), func() (Guardrails, Context) {
			return with2(risk("10", mixed...))(func(_ *Guardrails, c *Context) { c.ATR = dec("500") })
		}, RuleMaxPortfolioRiskPct, "11", false},
		{"risk/sell reducing a long lowers risk", sell("50"), func() (Guardrails, Context) { return risk("2", aapl("100", "90")) }, RuleMaxPortfolioRiskPct, "5", true},
		{"risk/sell turning short at", withStop(sell("30"), "110"), func() (Guardrails, Context) { return risk("2", aapl("10", "90")) }, RuleMaxPortfolioRiskPct, "2", true},
		{"risk/sell turning short over", withStop(sell("30.01"), "110"), func() (Guardrails, Context) { return risk("2", aapl("10", "90")) }, RuleMaxPortfolioRiskPct, "2.001", false},
		{"risk/short stop below the price is no risk", withStop(buy("1"), "99.99"), func() (Guardrails, Context) {
			return risk("0.0001", Held{Symbol: "Q", Quantity: dec("-10"), Price: dec("50"), StopLossPrice: ptr("40")})
		}, RuleMaxPortfolioRiskPct, "0.0001", true}, // the order's 1 × 0.01 alone
		{"risk/no equity", withStop(buy("1"), "99"), func() (Guardrails, Context) {
			return with2(risk("2"))(func(_ *Guardrails, c *Context) { c.Equity = dec("-1") })
		}, RuleMaxPortfolioRiskPct, "0", false},

		// stopLossRequired: 1 (required of a buy) ≤ 1 (has a stop).
		{"stop/required and given", withStop(buy("1"), "95"), func() (Guardrails, Context) {
			return with(noLimits(), ctx(), func(g *Guardrails, _ *Context) { g.StopLossRequired = true })
		}, RuleStopLossRequired, "1", true},
		{"stop/required and missing", buy("1"), func() (Guardrails, Context) {
			return with(noLimits(), ctx(), func(g *Guardrails, _ *Context) { g.StopLossRequired = true })
		}, RuleStopLossRequired, "0", false},
		{"stop/not required of a sell", sell("1"), func() (Guardrails, Context) {
			return with(noLimits(), ctx(), func(g *Guardrails, _ *Context) { g.StopLossRequired = true })
		}, RuleStopLossRequired, "0", true},
		{"stop/not required", buy("1"), func() (Guardrails, Context) { return noLimits(), ctx() }, RuleStopLossRequired, "0", true},

		// allowedAssetTypes: the asset's type is in the list.
		{"asset/allowed", buy("1"), func() (Guardrails, Context) { return noLimits(), ctx() }, RuleAllowedAssetTypes, "1", true},
		{"asset/not allowed", buy("1"), func() (Guardrails, Context) {
			return with(noLimits(), ctx(), func(g *Guardrails, _ *Context) { g.AllowedAssetTypes = []string{"etf", "crypto"} })
		}, RuleAllowedAssetTypes, "0", false},
		{"asset/empty list allows none", buy("1"), func() (Guardrails, Context) {
			return with(noLimits(), ctx(), func(g *Guardrails, _ *Context) { g.AllowedAssetTypes = nil })
		}, RuleAllowedAssetTypes, "0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, c := tt.setup()
			r, err := Check(tt.o, g, c)
			if err != nil {
				t.Fatalf("Check() error = %v", err)
			}
			if len(r.Rules) != 5 {
				t.Fatalf("Check() evaluated %d rules, want 5", len(r.Rules))
			}
			var got RuleCheck
			for _, rc := range r.Rules {
				if rc.Rule == tt.rule {
					got = rc
				} else if !rc.OK {
					t.Errorf("rule %s fails too: %s", rc.Rule, rc.Message)
				}
			}
			if !got.Actual.Equal(dec(tt.actual)) || got.OK != tt.ok {
				t.Errorf("%s: Actual, OK = %s, %v; want %s, %v (%s)", tt.rule, got.Actual, got.OK, tt.actual, tt.ok, got.Message)
			}
			if got.OK != (got.Message == "") {
				t.Errorf("%s: OK = %v with message %q", tt.rule, got.OK, got.Message)
			}
			if r.OK() != tt.ok || (r.Err() == nil) != tt.ok {
				t.Errorf("OK() = %v, Err() = %v; want OK %v", r.OK(), r.Err(), tt.ok)
			}
			if !tt.ok && (len(r.Violations) != 1 || r.Violations[0].Rule != tt.rule ||
				!r.Violations[0].Actual.Equal(got.Actual) || !r.Violations[0].Limit.Equal(got.Limit)) {
				t.Errorf("Violations = %+v, want only %s", r.Violations, tt.rule)
			}
		})
	}
}

func TestCheckFigures(t *testing.T) {
	g := noLimits()
	c := ctx(append([]Held{{Symbol: "AAPL", Quantity: dec("5"), Price: dec("98"), StopLossPrice: ptr("90")}}, mixed...)...)
	c.TradesToday = 2
	r, err := Check(withStop(atLimit(buy("3"), "101.5"), "95"), g, c)
	if err != nil {
		t.Fatal(err)
	}
	// Risk: mixed 100 + held 5 × (98 − 90) = 40 + order 3 × (101.5 − 95) = 19.5.
	for _, f := range []struct {
		name      string
		got, want decimal.Decimal
	}{
		{"Price", r.Price, dec("101.5")},
		{"Notional", r.Notional, dec("304.5")},
		{"Position", r.Position, dec("8")},
		{"PositionPct", r.PositionPct, dec("8.12")}, // 8 × 101.5 / 10,000 × 100
		{"Risk", r.Risk, dec("159.5")},
		{"RiskPct", r.RiskPct, dec("1.595")},
	} {
		if !f.got.Equal(f.want) {
			t.Errorf("%s = %s, want %s", f.name, f.got, f.want)
		}
	}
	if r.Trades != 3 {
		t.Errorf("Trades = %d, want 3", r.Trades)
	}
	c.Equity = dec("30000")
	if r, _ := Check(buy("8"), g, c); !r.PositionPct.Equal(dec("4.33333333")) {
		t.Errorf("PositionPct = %s, want 4.33333333 (13 × 100 / 30,000 × 100 to %d places)", r.PositionPct, PctPlaces)
	}
}

func TestCheckErrors(t *testing.T) {
	tests := []struct {
		name  string
		o     Order
		price string // Context.Price
		param string // the ParamError's, "" for another error
	}{
		{"invalid order", buy("0"), "100", "quantity"},
		{"buy stop at the price", withStop(buy("1"), "100"), "100", "stopLossPrice"},
		{"buy stop above the price", withStop(buy("1"), "100.01"), "100", "stopLossPrice"},
		{"buy stop above the limit price", withStop(atLimit(buy("1"), "90"), "95"), "100", "stopLossPrice"},
		{"sell stop at the price", withStop(sell("1"), "100"), "100", "stopLossPrice"},
		{"sell stop below the price", withStop(sell("1"), "99.99"), "100", "stopLossPrice"},
		{"market order without a price", buy("1"), "0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ctx()
			c.Price = dec(tt.price)
			_, err := Check(tt.o, DefaultGuardrails(), c)
			if !errors.Is(err, tradekit.ErrInvalid) || errors.Is(err, tradekit.ErrRejected) {
				t.Fatalf("Check() error = %v, want one wrapping ErrInvalid only", err)
			}
			var pe *tradekit.ParamError
			if errors.As(err, &pe) != (tt.param != "") || pe != nil && pe.Param != tt.param {
				t.Errorf("Check() error = %#v, want a ParamError for %q", err, tt.param)
			}
		})
	}
	// Just on the right side of the price: no error.
	for _, o := range []Order{withStop(buy("1"), "99.99"), withStop(sell("1"), "100.01"), atLimit(buy("1"), "200")} {
		c := ctx()
		c.Price = dec("0") // a limit order does not need it
		if o.Type == Market {
			c.Price = dec("100")
		}
		if _, err := Check(o, DefaultGuardrails(), c); err != nil {
			t.Errorf("Check(%+v) error = %v, want nil", o, err)
		}
	}
}

func TestOrderValidate(t *testing.T) {
	tests := []struct {
		name  string
		o     Order
		param string // "" when valid
	}{
		{"market", buy("1"), ""},
		{"limit", atLimit(buy("0.001"), "0.01"), ""},
		{"stop", withStop(sell("2"), "150"), ""},
		{"no symbol", Order{Side: Buy, Type: Market, Quantity: dec("1")}, "symbol"},
		{"unknown side", Order{Symbol: "A", Side: "hold", Type: Market, Quantity: dec("1")}, "side"},
		{"unknown type", Order{Symbol: "A", Side: Buy, Type: "stop", Quantity: dec("1")}, "type"},
		{"zero quantity", buy("0"), "quantity"},
		{"negative quantity", buy("-1"), "quantity"},
		{"limit without a price", Order{Symbol: "A", Side: Buy, Type: Limit, Quantity: dec("1")}, "limitPrice"},
		{"limit at zero", atLimit(buy("1"), "0"), "limitPrice"},
		{"market with a limit price", func() Order { o := buy("1"); o.LimitPrice = ptr("10"); return o }(), "limitPrice"},
		{"stop at zero", withStop(buy("1"), "0"), "stopLossPrice"},
		{"negative stop", withStop(buy("1"), "-1"), "stopLossPrice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate()
			var pe *tradekit.ParamError
			switch {
			case tt.param == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.param != "" && (!errors.As(err, &pe) || pe.Param != tt.param || !errors.Is(err, tradekit.ErrInvalid)):
				t.Errorf("Validate() = %v, want a ParamError for %q", err, tt.param)
			}
		})
	}
}

func TestRejectedError(t *testing.T) {
	g := DefaultGuardrails()
	g.StopLossRequired = true
	c := ctx()
	c.TradesToday = 25
	r, err := Check(buy("1"), g, c)
	if err != nil {
		t.Fatal(err)
	}
	err = r.Err()
	var re *RejectedError
	if !errors.Is(err, tradekit.ErrRejected) || !errors.As(err, &re) || len(re.Violations) != 2 {
		t.Fatalf("Err() = %#v, want a *RejectedError of 2 violations wrapping ErrRejected", err)
	}
	want := "brokers: order rejected by maxDailyTrades: this would be order 26 today (UTC), over the limit of 25 (and 1 more rule)"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
	if !strings.Contains(re.Violations[1].Message, "stopLossPrice") {
		t.Errorf("second violation = %+v, want stopLossRequired", re.Violations[1])
	}
}

func TestUTCDay(t *testing.T) {
	ny := time.FixedZone("EST", -5*3600)
	got := UTCDay(time.Date(2026, 3, 9, 21, 30, 0, 0, ny)) // 02:30 UTC on 10 March
	if want := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("UTCDay() = %v, want %v", got, want)
	}
}

// TestRiskSum checks that the allocation-free sum of [riskSum] equals the
// plain decimal sum of [risk], on random positions whose sizes and
// exponents range from ones that fit 64 bits easily to ones that do not.
func TestRiskSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	num := func() decimal.Decimal {
		digits := 1 + rng.IntN(22) // beyond 18 digits takes the slow path
		var b strings.Builder
		b.WriteByte(byte('1' + rng.IntN(9)))
		for range digits - 1 {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		return decimal.RequireFromString(b.String()).Shift(-int32(rng.IntN(12)))
	}
	for i := range 2000 {
		var s riskSum
		want := decimal.Zero
		for range rng.IntN(25) {
			q, p := num(), num()
			if rng.IntN(3) == 0 {
				q = q.Neg()
			}
			var stop *decimal.Decimal
			atr := decimal.Decimal{}
			switch rng.IntN(4) {
			case 0, 1:
				st := num()
				stop = &st
			case 2:
				atr = num()
			}
			s.add(q, p, stop, atr)
			want = want.Add(risk(q, p, stop, atr))
		}
		if got := s.sum(); !got.Equal(want) {
			t.Fatalf("case %d: riskSum = %s, want %s", i, got, want)
		}
	}
}
