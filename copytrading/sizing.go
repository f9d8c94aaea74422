package copytrading

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/brokers"
)

// CopyPlaces is the number of decimal places of a copy's quantity: [Size]
// rounds every copy down to it.
const CopyPlaces = 4

// SizeInput is what sizing a copy needs to know, all as of the leader's
// fill.
type SizeInput struct {
	// Side is the leader fill's side, [brokers.Buy] or [brokers.Sell].
	Side brokers.Side
	// Quantity and Price are the leader fill's quantity (positive) and
	// price.
	Quantity, Price decimal.Decimal
	// LeaderEquity is the leader's equity.
	LeaderEquity decimal.Decimal
	// LeaderBefore is the leader's position in the symbol just before the
	// fill; only sells use it.
	LeaderBefore decimal.Decimal
	// Equity is the follower's equity.
	Equity decimal.Decimal
	// Controls are the follow's controls; Size reads AllocationPct,
	// ScalingPct and MaxPositionPct (in percent).
	Controls Controls
	// Held is what the follower holds in the symbol now, less its open
	// sells: the most it can sell.
	Held decimal.Decimal
	// Copied is the follower's copied position in the symbol: the net
	// quantity of this follow's filled copies.
	Copied decimal.Decimal
	// Symbol names the instrument in the reasons.
	Symbol string
}

// Size returns the quantity of the copy of a leader's fill, rounded down
// to [CopyPlaces] decimal places, or, when there is none, a reason for
// people why (and a zero quantity). A buy is sized from the follower's
// allocation:
//
//	A        = Equity × AllocationPct / 100
//	notional = Quantity × Price × A × ScalingPct / 100 / LeaderEquity
//	qty      = notional / Price
//	room     = A × MaxPositionPct / 100 / Price − Held
//	copy     = min(qty, room), rounded down
//
// that is, the leader's trade as a share of the leader's equity, applied
// to the allocation and scaled, within the room left under the maximum
// position. A sell sells the share of the position the leader sold,
// applied to what this follow copied:
//
//	f    = min(Quantity / LeaderBefore, 1)
//	copy = min(Copied × f, Held), rounded down
//
// so a full sell (Quantity ≥ LeaderBefore) sells min(Copied, Held), with
// no rounding loss when Copied has at most CopyPlaces places. A copy never
// sells more than Held. The divisions are exact up to the rounding down:
// no digit is lost to an intermediate precision.
//
// The reasons are: for a buy, a leader equity, price, quantity or
// follower equity that is not positive, or a copy that rounds to nothing
// or finds the position at its maximum; for a sell, nothing held or
// nothing copied ("you hold no X to sell"), a LeaderBefore or quantity
// that is not positive, or a copy that rounds to nothing. A side other
// than buy or sell has a reason too.
func Size(in SizeInput) (qty decimal.Decimal, reason string) {
	switch in.Side {
	case brokers.Buy:
		return sizeBuy(in)
	case brokers.Sell:
		return sizeSell(in)
	}
	return decimal.Zero, fmt.Sprintf("the leader's fill has the side %q, neither buy nor sell", in.Side)
}

// sizeBuy is [Size] for a buy.
func sizeBuy(in SizeInput) (decimal.Decimal, string) {
	switch {
	case !in.LeaderEquity.IsPositive():
		return decimal.Zero, "the leader's equity is not positive"
	case !in.Price.IsPositive():
		return decimal.Zero, fmt.Sprintf("the leader's %s price is not positive", in.Symbol)
	case !in.Quantity.IsPositive():
		return decimal.Zero, fmt.Sprintf("the leader's %s fill has no quantity", in.Symbol)
	case !in.Equity.IsPositive():
		return decimal.Zero, "your equity is not positive"
	}
	c := in.Controls
	allocation := in.Equity.Mul(c.AllocationPct).Shift(-2)
	// qty = notional / Price, in which Price cancels out, so the
	// quotient is exact before it is rounded down.
	qty, _ := in.Quantity.Mul(allocation).Mul(c.ScalingPct).Shift(-2).QuoRem(in.LeaderEquity, CopyPlaces)
	// room = (A × MaxPositionPct / 100 − Held × Price) / Price, likewise.
	room, _ := allocation.Mul(c.MaxPositionPct).Shift(-2).Sub(in.Held.Mul(in.Price)).QuoRem(in.Price, CopyPlaces)
	if !room.IsPositive() {
		return decimal.Zero, fmt.Sprintf("your %s position is at its maximum, %s %% of the allocation", in.Symbol, c.MaxPositionPct)
	}
	qty = decimal.Min(qty, room)
	if !qty.IsPositive() {
		return decimal.Zero, fmt.Sprintf("the copy rounds to no %s", in.Symbol)
	}
	return qty, ""
}

// sizeSell is [Size] for a sell.
func sizeSell(in SizeInput) (decimal.Decimal, string) {
	switch {
	case !in.Held.IsPositive():
		return decimal.Zero, fmt.Sprintf("you hold no %s to sell", in.Symbol)
	case !in.Copied.IsPositive():
		return decimal.Zero, fmt.Sprintf("you hold no %s copied from this leader to sell", in.Symbol)
	case !in.LeaderBefore.IsPositive():
		return decimal.Zero, fmt.Sprintf("the leader held no %s before selling", in.Symbol)
	case !in.Quantity.IsPositive():
		return decimal.Zero, fmt.Sprintf("the leader's %s fill has no quantity", in.Symbol)
	}
	held := in.Held.RoundDown(CopyPlaces)
	var qty decimal.Decimal
	if in.Quantity.GreaterThanOrEqual(in.LeaderBefore) {
		qty = decimal.Min(in.Copied.RoundDown(CopyPlaces), held)
	} else {
		// Copied × Quantity / LeaderBefore, rounded down exactly.
		share, _ := in.Copied.Mul(in.Quantity).QuoRem(in.LeaderBefore, CopyPlaces)
		qty = decimal.Min(share, held)
	}
	if !qty.IsPositive() {
		return decimal.Zero, fmt.Sprintf("the copy rounds to no %s", in.Symbol)
	}
	return qty, ""
}
