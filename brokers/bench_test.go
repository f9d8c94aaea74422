package brokers

import (
	"strconv"
	"testing"

	"github.com/shopspring/decimal"
)

// BenchmarkCheck checks one limit buy with a stop against all five rules
// of the default guardrails, in accounts of 1, 20 and 200 positions: half
// with a stop-loss, a quarter at 2 × ATR, a quarter at the fallback; and
// a quarter as many open orders (at least one): an open buy of the
// order's symbol, then alternately a buy that adds to a held position,
// whose risk counts, and a sell of one, whose risk does not.
//
// The sums are plain decimal arithmetic, which allocates at every step
// (about 180 allocations for 20 positions, some tens of µs). That is well
// under 1 % of placing an order, which reads the account from the broker
// and prices from the database (BenchmarkOrderPlace in package server:
// several milliseconds), so Check stays simple rather than fast.
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{1, 20, 200} {
		b.Run("positions="+strconv.Itoa(n), func(b *testing.B) { benchmarkCheck(b, n) })
	}
}

func benchmarkCheck(b *testing.B, n int) {
	c := Context{
		Price:       decimal.RequireFromString("187.42"),
		ATR:         decimal.RequireFromString("3.85"),
		Equity:      decimal.New(int64(max(1, n/20))*25000000, -2), // 250,000.00 per 20 positions
		Cash:        decimal.RequireFromString("40000.00"),
		TradesToday: 3,
		Positions:   make([]Held, n),
	}
	for i := range c.Positions {
		h := Held{
			Symbol:   "SYM" + strconv.Itoa(i),
			Quantity: decimal.New(int64(10+i%20*7), 0),
			Price:    decimal.New(int64(5000+i%20*1317), -2),
		}
		switch i % 4 {
		case 0, 1:
			s := h.Price.Mul(decimal.New(95, -2)).Round(2)
			h.StopLossPrice = &s
		case 2:
			h.ATR = decimal.New(int64(100+i%20*13), -2)
		}
		c.Positions[i] = h
	}
	c.Positions[n/2].Symbol = "AAPL" // the order adds to a held position
	for j := range max(1, n/4) {
		p := &c.Positions[j]
		v := Reservation{Symbol: p.Symbol, Quantity: decimal.New(int64(1+j%5), 0), Price: p.Price, ATR: decimal.New(150, -2)}
		if j%2 == 1 {
			v.Quantity = v.Quantity.Neg() // a sell of a held long: no risk
		}
		c.Open = append(c.Open, v)
	}
	c.Open[0].Symbol = "AAPL" // an open buy of the order's symbol
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
