package copytrading_test

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/copytrading"
)

// ExampleSize sizes the copies of a leader with 200,000 of equity buying
// 40 ACME at 50 (1 % of its equity), then selling a quarter of its 100,
// for a follower of 40,000 that allocates 25 % to the leader.
func ExampleSize() {
	controls := copytrading.DefaultControls()
	controls.AllocationPct = decimal.New(25, 0)
	in := copytrading.SizeInput{
		Side:         brokers.Buy,
		Quantity:     decimal.New(40, 0),
		Price:        decimal.New(50, 0),
		LeaderEquity: decimal.New(200_000, 0),
		Equity:       decimal.New(40_000, 0),
		Controls:     controls,
		Symbol:       "ACME",
	}
	qty, reason := copytrading.Size(in)
	fmt.Printf("buy %s %q\n", qty, reason)

	// The follower is at its maximum position: 25 % of the 10,000
	// allocation is 50 ACME.
	in.Held = decimal.New(50, 0)
	qty, reason = copytrading.Size(in)
	fmt.Printf("buy %s %q\n", qty, reason)

	// The leader sells 25 of its 100; the follower copied 8.
	in.Side, in.Quantity, in.LeaderBefore, in.Copied = brokers.Sell, decimal.New(25, 0), decimal.New(100, 0), decimal.New(8, 0)
	qty, reason = copytrading.Size(in)
	fmt.Printf("sell %s %q\n", qty, reason)
	// Output:
	// buy 2 ""
	// buy 0 "your ACME position is at its maximum, 25 % of the allocation"
	// sell 2 ""
}
