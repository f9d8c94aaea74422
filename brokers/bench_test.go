package brokers

import (
	"strconv"
	"testing"

	"github.com/shopspring/decimal"
)

// BenchmarkCheck checks one limit buy with a stop against all five rules
// of the default guardrails, in an account of 20 positions: half with a
// stop-loss, a quarter sized by ATR, a quarter by the fallback.
func BenchmarkCheck(b *testing.B) {
	c := Context{
		Price:       decimal.RequireFromString("187.42"),
		ATR:         decimal.RequireFromString("3.85"),
		Equity:      decimal.RequireFromString("250000.00"),
		Cash:        decimal.RequireFromString("40000.00"),
		TradesToday: 3,
		Positions:   make([]Held, 20),
	}
	for i := range c.Positions {
		h := Held{
			Symbol:   "SYM" + strconv.Itoa(i),
			Quantity: decimal.New(int64(10+i*7), 0),
			Price:    decimal.New(int64(5000+i*1317), -2),
		}
		switch i % 4 {
		case 0, 1:
			s := h.Price.Mul(decimal.New(95, -2)).Round(2)
			h.StopLossPrice = &s
		case 2:
			h.ATR = decimal.New(int64(100+i*13), -2)
		}
		c.Positions[i] = h
	}
	c.Positions[7].Symbol = "AAPL" // the order adds to a held position
	limit, stop := decimal.RequireFromString("187.50"), decimal.RequireFromString("178.00")
	o := Order{Symbol: "AAPL", AssetType: "stock", Side: Buy, Type: Limit,
		Quantity: decimal.New(25, 0), LimitPrice: &limit, StopLossPrice: &stop}
	g := DefaultGuardrails()
	g.StopLossRequired = true

	b.ReportAllocs()
	for b.Loop() {
		r, err := Check(o, g, c)
		if err != nil || !r.OK() {
			b.Fatalf("Check = %+v, %v; want OK", r.Violations, err)
		}
	}
}
