package brokers

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	return Context{Price: dec("100"), Equity: dec("10000"), Cash: dec("10000"), Positions: ps, CanShort: true}
}

// cash is ctx of an account that cannot sell short.
func cash(ps ...Held) Context {
	c := ctx(ps...)
	c.CanShort = false
	return c
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

		// heldQuantity: without shorting, a sell within what is held
		// and not offered by open sells.
		{"held/sell of what is held", sell("10"), func() (Guardrails, Context) { return noLimits(), cash(aapl("10", "")) }, RuleHeldQuantity, "10", true},
		{"held/sell beyond what is held", sell("1000"), func() (Guardrails, Context) { return noLimits(), cash(aapl("10", "")) }, RuleHeldQuantity, "1000", false},
		{"held/sell of nothing held", sell("1"), func() (Guardrails, Context) { return noLimits(), cash() }, RuleHeldQuantity, "1", false},
		{"held/sell of a short", sell("1"), func() (Guardrails, Context) { return noLimits(), cash(aapl("-10", "")) }, RuleHeldQuantity, "1", false},
		{"held/open sells count", sell("5"), func() (Guardrails, Context) {
			return with(noLimits(), cash(aapl("10", "")), func(_ *Guardrails, c *Context) {
				c.Open = []Reservation{{Symbol: "AAPL", Quantity: dec("-6"), Price: dec("100")}, {Symbol: "AAPL", Quantity: dec("3"), Price: dec("100")}}
			})
		}, RuleHeldQuantity, "5", false},
		{"held/open sells leave room", sell("4"), func() (Guardrails, Context) {
			return with(noLimits(), cash(aapl("10", "")), func(_ *Guardrails, c *Context) {
				c.Open = []Reservation{{Symbol: "AAPL", Quantity: dec("-6"), Price: dec("100")}}
			})
		}, RuleHeldQuantity, "4", true},
		{"held/a buy", buy("1000"), func() (Guardrails, Context) { return noLimits(), cash() }, RuleHeldQuantity, "0", true},
		{"held/an account that can short", sell("1000"), func() (Guardrails, Context) { return noLimits(), ctx(aapl("10", "")) }, RuleHeldQuantity, "1000", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, c := tt.setup()
			r, err := Check(tt.o, g, c)
			if err != nil {
				t.Fatalf("Check() error = %v", err)
			}
			if len(r.Rules) != 6 {
				t.Fatalf("Check() evaluated %d rules, want 6", len(r.Rules))
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

// TestAllowedAssetTypesMessage checks that the rejection names the
// allowed types as a person reads them ("stock, etf"), not as Go prints a
// slice (["stock" "etf"]), since the API and the dashboard show it.
func TestAllowedAssetTypesMessage(t *testing.T) {
	for _, tt := range []struct {
		allowed []string
		want    string
	}{
		{[]string{"etf", "crypto"}, `asset type "stock" is not among the allowed types: etf, crypto`},
		{[]string{"etf"}, `asset type "stock" is not among the allowed types: etf`},
		{nil, `asset type "stock" is not among the allowed types: none`},
	} {
		g := noLimits()
		g.AllowedAssetTypes = tt.allowed
		r, err := Check(buy("1"), g, ctx())
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Violations) != 1 || r.Violations[0].Message != tt.want {
			t.Errorf("allowed %q: violations %+v, want the message %q", tt.allowed, r.Violations, tt.want)
		}
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

// reserve returns an open order of qty units (negative for a sell) of
// symbol reserved at price, with stop as its stop-loss ("" for none).
func reserve(symbol, qty, price, stop string) Reservation {
	v := Reservation{Symbol: symbol, Quantity: dec(qty), Price: dec(price)}
	if stop != "" {
		v.StopLossPrice = ptr(stop)
	}
	return v
}

// figures are the parts of a [Result] that the open orders change.
type figures struct {
	Position, Exposure, PositionPct, Risk, RiskPct decimal.Decimal
	Broken                                         []string // the rules of the violations
}

func figuresOf(r Result) figures {
	f := figures{Position: r.Position, Exposure: r.Exposure, PositionPct: r.PositionPct, Risk: r.Risk, RiskPct: r.RiskPct}
	for _, v := range r.Violations {
		f.Broken = append(f.Broken, v.Rule)
	}
	return f
}

func TestCheckOpen(t *testing.T) {
	// ctx: equity 10,000 and AAPL at 100, so a unit of AAPL is 1 % of
	// equity. Without a stop or an ATR, a unit at 100 risks 10 (the
	// fallback), 0.1 % of equity.
	size := func(limit string) Guardrails { g := noLimits(); g.MaxPositionSizePct = dec(limit); return g }
	risk := func(limit string) Guardrails { g := noLimits(); g.MaxPortfolioRiskPct = dec(limit); return g }
	aapl := func(qty, stop string) Held {
		h := Held{Symbol: "AAPL", Quantity: dec(qty), Price: dec("100")}
		if stop != "" {
			h.StopLossPrice = ptr(stop)
		}
		return h
	}
	tests := []struct {
		name string
		o    Order
		held []Held
		open []Reservation
		g    Guardrails
		// Position, Exposure, PositionPct, Risk and RiskPct.
		pos, exp, posPct, risk, riskPct string
		broken                          []string
		msg                             string // in the first violation's message
	}{
		// maxPositionSizePct: |W + q| × P / E × 100, W = H + the open
		// orders in the symbol on the order's side.
		{"size/second 8% buy fits", atLimit(buy("8"), "100"), nil,
			[]Reservation{reserve("AAPL", "8", "100", "")}, size("20"),
			"8", "16", "16", "160", "1.6", nil, ""},
		{"size/third 8% buy over 20%", atLimit(buy("8"), "100"), nil,
			[]Reservation{reserve("AAPL", "8", "100", ""), reserve("AAPL", "8", "100", "")}, size("20"),
			"8", "24", "24", "240", "2.4", []string{RuleMaxPositionSizePct},
			"the AAPL position with its 2 open buys would be 24.00% of equity, over the limit of 20%"},
		{"size/open orders count at the order's price", atLimit(buy("8"), "125"), nil,
			[]Reservation{reserve("AAPL", "8", "100", "")}, size("20"),
			"8", "16", "20", "180", "1.8", nil, ""}, // 16 × 125; risk 8 × 10 + 8 × 12.5
		{"size/open sell frees no room for a buy", buy("8"), []Held{aapl("16", "")},
			[]Reservation{reserve("AAPL", "-10", "100", "")}, size("20"),
			"24", "24", "24", "240", "2.4", []string{RuleMaxPositionSizePct}, "the AAPL position would be 24.00%"},
		{"size/open buy frees no room for a sell", sell("25"), []Held{aapl("10", "")},
			[]Reservation{reserve("AAPL", "30", "100", "")}, size("20"),
			"-15", "-15", "15", "450", "4.5", nil, ""}, // risk: open buy 300, the short 150
		{"size/open orders in other symbols do not count", buy("8"), nil,
			[]Reservation{reserve("MSFT", "50", "100", "")}, size("20"),
			"8", "8", "8", "580", "5.8", nil, ""},
		{"size/open buys grow a small position over the limit", buy("2"), []Held{aapl("10", "")},
			[]Reservation{reserve("AAPL", "9", "100", "")}, size("20"),
			"12", "21", "21", "210", "2.1", []string{RuleMaxPositionSizePct}, "with its open buy would be 21.00%"},
		{"size/sell reducing the worst-case position passes", sell("5"), []Held{aapl("40", "")},
			[]Reservation{reserve("AAPL", "-5", "100", "")}, size("20"),
			"35", "30", "30", "350", "3.5", nil, ""},
		{"size/open buys do not count against a sell", sell("5"), []Held{aapl("10", "")},
			[]Reservation{reserve("AAPL", "20", "100", "")}, size("4"),
			"5", "5", "5", "250", "2.5", nil, ""}, // reduces the held 10, so passes
		{"size/open sells and a sell", sell("6"), nil,
			[]Reservation{reserve("AAPL", "-15", "100", "")}, size("20"),
			"-6", "-21", "21", "210", "2.1", []string{RuleMaxPositionSizePct}, "with its open sell would be 21.00%"},

		// maxPortfolioRiskPct: Σ risk / E × 100, open orders that grow a
		// position included; mixed holds 100 of risk.
		{"risk/open buys add risk at the limit", withStop(buy("10"), "95"), mixed,
			[]Reservation{reserve("V", "10", "50", "45"), reserve("AAPL", "10", "100", "95")}, risk("2.5"),
			"10", "20", "20", "250", "2.5", nil, ""}, // 100 + 50 + 50 + the order's 50
		{"risk/open buys add risk over the limit", withStop(buy("10"), "95"), mixed,
			[]Reservation{reserve("V", "10", "50", "45"), reserve("AAPL", "10", "100", "95")}, risk("2.49"),
			"10", "20", "20", "250", "2.5", []string{RuleMaxPortfolioRiskPct},
			"the portfolio's risk with its 2 open orders would be 2.50% of equity, over the limit of 2.49%"},
		{"risk/open sell of a held long adds none", withStop(buy("1"), "99"), []Held{aapl("100", "90")},
			[]Reservation{reserve("AAPL", "-50", "100", "")}, risk("10.01"),
			"101", "101", "101", "1001", "10.01", nil, ""},
		{"risk/open buy of a held short adds none", withStop(buy("1"), "99"),
			[]Held{{Symbol: "Q", Quantity: dec("-10"), Price: dec("50"), StopLossPrice: ptr("55")}},
			[]Reservation{reserve("Q", "10", "50", "")}, risk("0.51"),
			"1", "1", "1", "51", "0.51", nil, ""},
		{"risk/open sell with nothing held adds a short's risk", withStop(buy("1"), "99"), nil,
			[]Reservation{reserve("S", "-10", "20", "22")}, risk("0.21"),
			"1", "1", "1", "21", "0.21", nil, ""},
		{"risk/open order at 2 ATR", withStop(buy("1"), "99"), nil,
			[]Reservation{{Symbol: "Y", Quantity: dec("10"), Price: dec("50"), ATR: dec("1")}}, risk("0.21"),
			"1", "1", "1", "21", "0.21", nil, ""},
		{"risk/empty open order counts for nothing", buy("8"), nil,
			[]Reservation{reserve("AAPL", "0", "100", "")}, risk("0.1"),
			"8", "8", "8", "80", "0.8", []string{RuleMaxPortfolioRiskPct}, "the portfolio's risk would be 0.80%"},
		{"risk/order lowering risk passes over the limit", sell("50"), []Held{aapl("100", "90")},
			[]Reservation{reserve("MSFT", "100", "100", "90")}, risk("5"),
			"50", "50", "50", "1500", "15", nil, ""}, // before 2,000
		{"risk/order adding risk fails over the limit", withStop(buy("1"), "99"), []Held{aapl("100", "90")},
			[]Reservation{reserve("MSFT", "100", "100", "90")}, risk("5"),
			"101", "101", "101", "2001", "20.01", []string{RuleMaxPortfolioRiskPct}, "with its open order would be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ctx(tt.held...)
			c.Open = tt.open
			r, err := Check(tt.o, tt.g, c)
			if err != nil {
				t.Fatalf("Check() error = %v", err)
			}
			want := figures{dec(tt.pos), dec(tt.exp), dec(tt.posPct), dec(tt.risk), dec(tt.riskPct), tt.broken}
			if diff := cmp.Diff(want, figuresOf(r)); diff != "" {
				t.Errorf("Check() mismatch (-want +got):\n%s", diff)
			}
			if tt.msg != "" && (len(r.Violations) == 0 || !strings.Contains(r.Violations[0].Message, tt.msg)) {
				t.Errorf("Violations = %+v, want a message containing %q", r.Violations, tt.msg)
			}
		})
	}
}

// TestCheckEmptyOpen checks that a nil or empty Open gives the results
// Check gave before it had open orders: Exposure is Position, and the
// figures are those of TestCheckFigures and TestCheckRules.
func TestCheckEmptyOpen(t *testing.T) {
	withHeld := ctx(append([]Held{{Symbol: "AAPL", Quantity: dec("5"), Price: dec("98"), StopLossPrice: ptr("90")}}, mixed...)...)
	tests := []struct {
		name string
		o    Order
		c    Context
		want figures
	}{
		{"buy adding to a position", withStop(atLimit(buy("3"), "101.5"), "95"), withHeld,
			figures{dec("8"), dec("8"), dec("8.12"), dec("159.5"), dec("1.595"), []string{RuleMaxPositionSizePct}}},
		{"sell turning short", withStop(sell("30"), "110"), ctx(Held{Symbol: "AAPL", Quantity: dec("10"), Price: dec("100"), StopLossPrice: ptr("90")}),
			figures{dec("-20"), dec("-20"), dec("20"), dec("200"), dec("2"), []string{RuleMaxPositionSizePct}}},
		{"sell reducing a position", sell("50"), ctx(Held{Symbol: "AAPL", Quantity: dec("100"), Price: dec("100"), StopLossPrice: ptr("90")}),
			figures{dec("50"), dec("50"), dec("50"), dec("500"), dec("5"), nil}},
		{"buy with nothing held", buy("10"), ctx(mixed...),
			figures{dec("10"), dec("10"), dec("10"), dec("200"), dec("2"), []string{RuleMaxPositionSizePct}}},
	}
	g := noLimits()
	g.MaxPositionSizePct, g.MaxPortfolioRiskPct = dec("8"), dec("10")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var results [2]Result
			for i, open := range [][]Reservation{nil, {}} {
				c := tt.c
				c.Open = open
				r, err := Check(tt.o, g, c)
				if err != nil {
					t.Fatalf("Check() error = %v", err)
				}
				results[i] = r
			}
			if diff := cmp.Diff(tt.want, figuresOf(results[0])); diff != "" {
				t.Errorf("Check() with a nil Open mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(results[0], results[1]); diff != "" {
				t.Errorf("Check() with an empty Open differs from a nil one (-nil +empty):\n%s", diff)
			}
		})
	}
}

// TestCheckSequential places the same order again and again, adding each
// accepted one to Open as a program does until it fills, and counts the
// accepted: floor((limit − held) / size), however small the orders.
func TestCheckSequential(t *testing.T) {
	// ctx: equity 10,000 and AAPL at 100. A unit is 1 % of equity; with a
	// stop at 90, its risk is 10, 0.1 % of equity.
	tests := []struct {
		name  string
		rule  string // the limited rule
		limit string // in percent of equity
		o     Order
		held  string // units of AAPL held, at 100 with no stop
		pct   string // what one order adds, in percent of equity
		want  int    // floor((limit − held's percent) / pct)
	}{
		{"size/8% under 20%", RuleMaxPositionSizePct, "20", atLimit(buy("8"), "100"), "0", "8", 2},
		{"size/5% under 20%", RuleMaxPositionSizePct, "20", atLimit(buy("5"), "100"), "0", "5", 4},
		{"size/7% under 20%", RuleMaxPositionSizePct, "20", atLimit(buy("7"), "100"), "0", "7", 2},
		{"size/0.3% under 20%", RuleMaxPositionSizePct, "20", atLimit(buy("0.3"), "100"), "0", "0.3", 66},
		{"size/2.5% under 10%", RuleMaxPositionSizePct, "10", atLimit(buy("2.5"), "100"), "0", "2.5", 4},
		{"size/25% under 20%", RuleMaxPositionSizePct, "20", atLimit(buy("25"), "100"), "0", "25", 0},
		{"size/8% sells under 20%", RuleMaxPositionSizePct, "20", atLimit(sell("8"), "100"), "0", "8", 2},
		{"size/8% with 4% held", RuleMaxPositionSizePct, "20", atLimit(buy("8"), "100"), "4", "8", 2},
		{"size/8% with 5% held", RuleMaxPositionSizePct, "20", atLimit(buy("8"), "100"), "5", "8", 1},
		{"risk/0.5% under 2%", RuleMaxPortfolioRiskPct, "2", withStop(atLimit(buy("5"), "100"), "90"), "0", "0.5", 4},
		{"risk/3% under 10%", RuleMaxPortfolioRiskPct, "10", withStop(atLimit(buy("30"), "100"), "90"), "0", "3", 3},
		{"risk/0.7% under 2%", RuleMaxPortfolioRiskPct, "2", withStop(atLimit(buy("7"), "100"), "90"), "0", "0.7", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := noLimits()
			if tt.rule == RuleMaxPositionSizePct {
				g.MaxPositionSizePct = dec(tt.limit)
			} else {
				g.MaxPortfolioRiskPct = dec(tt.limit)
			}
			var c Context
			if held := dec(tt.held); held.IsZero() {
				c = ctx()
			} else {
				c = ctx(Held{Symbol: "AAPL", Quantity: held, Price: dec("100"), StopLossPrice: ptr("100")}) // no risk
			}
			if floor, _ := dec(tt.limit).Sub(dec(tt.held)).QuoRem(dec(tt.pct), 0); floor.IntPart() != int64(tt.want) {
				t.Fatalf("want = %d, but floor((%s − %s) / %s) = %s", tt.want, tt.limit, tt.held, tt.pct, floor)
			}
			accepted := 0
			for range tt.want + 5 {
				r, err := Check(tt.o, g, c)
				if err != nil {
					t.Fatalf("Check() error = %v", err)
				}
				if !r.OK() {
					if len(r.Violations) != 1 || r.Violations[0].Rule != tt.rule {
						t.Fatalf("Violations = %+v, want only %s", r.Violations, tt.rule)
					}
					continue
				}
				accepted++
				q := tt.o.Quantity
				if tt.o.Side == Sell {
					q = q.Neg()
				}
				c.Open = append(c.Open, Reservation{Symbol: tt.o.Symbol, Quantity: q, Price: *tt.o.LimitPrice, StopLossPrice: tt.o.StopLossPrice})
			}
			if accepted != tt.want {
				t.Errorf("accepted %d orders, want %d", accepted, tt.want)
			}
		})
	}
}

func TestRisk(t *testing.T) {
	tests := []struct {
		name           string
		q, price, stop string // stop "" for none
		atr            string
		want           string
	}{
		{"long with a stop", "10", "50", "45", "0", "50"},
		{"short with a stop", "-10", "50", "55", "0", "50"},
		{"long with a stop above the price", "10", "50", "55", "0", "0"},
		{"short with a stop below the price", "-10", "50", "45", "0", "0"},
		{"2 ATR", "10", "50", "", "1", "20"},
		{"2 ATR capped at the price", "10", "50", "", "30", "500"},
		{"2 ATR of a short", "-10", "50", "", "1", "20"},
		{"fallback", "10", "50", "", "0", "50"},
		{"fallback of a short", "-3", "20", "", "0", "6"},
		{"nothing", "0", "50", "45", "0", "0"},
		{"stop wins over the ATR", "10", "50", "49", "5", "10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stop *decimal.Decimal
			if tt.stop != "" {
				stop = ptr(tt.stop)
			}
			if got := risk(dec(tt.q), dec(tt.price), stop, dec(tt.atr)); !got.Equal(dec(tt.want)) {
				t.Errorf("risk(%s, %s, %s, %s) = %s, want %s", tt.q, tt.price, tt.stop, tt.atr, got, tt.want)
			}
		})
	}
}
