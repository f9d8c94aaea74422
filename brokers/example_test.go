package brokers_test

import (
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
)

func ExampleCheck() {
	stop := decimal.RequireFromString("180")
	o := brokers.Order{
		Symbol: "AAPL", AssetType: "stock", Side: brokers.Buy, Type: brokers.Market,
		Quantity: decimal.RequireFromString("40"), StopLossPrice: &stop,
	}
	held := decimal.RequireFromString("410")
	c := brokers.Context{
		Price:  decimal.RequireFromString("190"),
		Equity: decimal.RequireFromString("50000"),
		Positions: []brokers.Held{
			{Symbol: "MSFT", Quantity: decimal.RequireFromString("20"), Price: decimal.RequireFromString("430"), StopLossPrice: &held},
			{Symbol: "SPY", Quantity: decimal.RequireFromString("10"), Price: decimal.RequireFromString("560"), ATR: decimal.RequireFromString("6.5")},
		},
		TradesToday: 4,
	}
	g := brokers.DefaultGuardrails() // 25 trades, 20 % in a position, 10 % at risk
	g.StopLossRequired = true

	r, err := brokers.Check(o, g, c)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, rc := range r.Rules {
		fmt.Printf("%-19s limit %-3s actual %-5s ok %v\n", rc.Rule, rc.Limit, rc.Actual, rc.OK)
	}
	fmt.Println("notional", r.Notional, "risk", r.Risk, "error", r.Err())

	o.Quantity = decimal.RequireFromString("60") // 11,400 is 22.8 % of equity
	r, _ = brokers.Check(o, g, c)
	fmt.Println(r.Err())
	// Output:
	// maxDailyTrades      limit 25  actual 5     ok true
	// maxPositionSizePct  limit 20  actual 15.2  ok true
	// maxPortfolioRiskPct limit 10  actual 1.86  ok true
	// stopLossRequired    limit 1   actual 1     ok true
	// allowedAssetTypes   limit 1   actual 1     ok true
	// heldQuantity        limit 0   actual 0     ok true
	// notional 7600 risk 930 error <nil>
	// brokers: order rejected by maxPositionSizePct: the AAPL position would be 22.80% of equity, over the limit of 20%
}

// ExampleCheck_open places the same limit buy three times, adding each
// accepted one to the open orders, as it waits to fill: at 8 % of equity
// each, the third would take the position past 20 %.
func ExampleCheck_open() {
	limit := decimal.RequireFromString("200")
	o := brokers.Order{
		Symbol: "AAPL", AssetType: "stock", Side: brokers.Buy, Type: brokers.Limit,
		Quantity: decimal.RequireFromString("20"), LimitPrice: &limit, // 4,000: 8 % of equity
	}
	c := brokers.Context{Price: decimal.RequireFromString("190"), Equity: decimal.RequireFromString("50000")}
	g := brokers.DefaultGuardrails() // at most 20 % of equity in one position

	for i := 1; i <= 3; i++ {
		r, err := brokers.Check(o, g, c)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("order %d: position %s, worst case %s (%s%%): %v\n", i, r.Position, r.Exposure, r.PositionPct, r.Err())
		if r.OK() {
			c.Open = append(c.Open, brokers.Reservation{Symbol: o.Symbol, Quantity: o.Quantity, Price: *o.LimitPrice})
			c.TradesToday++
		}
	}
	// Output:
	// order 1: position 20, worst case 20 (8%): <nil>
	// order 2: position 20, worst case 40 (16%): <nil>
	// order 3: position 20, worst case 60 (24%): brokers: order rejected by maxPositionSizePct: the AAPL position with its 2 open buys would be 24.00% of equity, over the limit of 20%
}

func ExampleOrder_Validate() {
	limit := decimal.RequireFromString("-5")
	o := brokers.Order{
		Symbol: "AAPL", AssetType: "stock", Side: brokers.Buy, Type: brokers.Limit,
		Quantity: decimal.RequireFromString("10"), LimitPrice: &limit,
	}
	err := o.Validate()
	var pe *tradekit.ParamError
	fmt.Println(err)
	fmt.Println(errors.As(err, &pe), pe.Param, errors.Is(err, tradekit.ErrInvalid))
	// Output:
	// limitPrice: must be positive, not -5
	// true limitPrice true
}
