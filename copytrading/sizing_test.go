package copytrading_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/copytrading"
)

// dec is decimal.RequireFromString, for short tables.
func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// sizeControls returns the controls allocation %, scaling % and max position %.
func sizeControls(allocation, scaling, maxPosition string) copytrading.Controls {
	c := copytrading.DefaultControls()
	c.AllocationPct, c.ScalingPct, c.MaxPositionPct = dec(allocation), dec(scaling), dec(maxPosition)
	return c
}

// buyInput is a leader buy of 40 ACME at 50 with 200,000 of equity (1 % of
// it), copied by a follower of 40,000 equity allocating 25 %: 10,000,
// with room for 25 % of it, 2,500, or 50 ACME.
func buyInput() copytrading.SizeInput {
	return copytrading.SizeInput{Side: brokers.Buy, Quantity: dec("40"), Price: dec("50"), LeaderEquity: dec("200000"),
		Equity: dec("40000"), Controls: sizeControls("25", "100", "25"), Symbol: "ACME"}
}

// sellInput is a leader selling 25 of its 100 ACME, with a follower that
// copied 8 and holds 10.
func sellInput() copytrading.SizeInput {
	return copytrading.SizeInput{Side: brokers.Sell, Quantity: dec("25"), Price: dec("50"), LeaderEquity: dec("200000"),
		LeaderBefore: dec("100"), Equity: dec("40000"), Controls: sizeControls("25", "100", "25"), Held: dec("10"), Copied: dec("8"), Symbol: "ACME"}
}

func TestSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		in         func(*copytrading.SizeInput)
		base       func() copytrading.SizeInput
		want       string // the quantity; "0" with a reason
		wantReason string
	}{
		// 40 × 50 × 10,000 × 100 / 100 / 200,000 / 50 = 2.
		{name: "buy", base: buyInput, want: "2"},
		// A quarter of the allocation, 2,500, is 50 ACME; 49 are held.
		{name: "buy capped by max position", base: buyInput, in: func(in *copytrading.SizeInput) { in.Held = dec("49") }, want: "1"},
		{name: "buy capped by max position to a fraction", base: buyInput, in: func(in *copytrading.SizeInput) { in.Held = dec("48.56789") }, want: "1.4321"},
		{name: "buy with scaling 200", base: buyInput, in: func(in *copytrading.SizeInput) { in.Controls.ScalingPct = dec("200") }, want: "4"},
		{name: "buy with scaling 50", base: buyInput, in: func(in *copytrading.SizeInput) { in.Controls.ScalingPct = dec("50") }, want: "1"},
		{name: "buy with scaling 1000", base: buyInput, in: func(in *copytrading.SizeInput) { in.Controls.ScalingPct = dec("1000") }, want: "20"},
		{name: "buy with scaling 1000 capped by max position", base: buyInput, in: func(in *copytrading.SizeInput) { in.Controls.ScalingPct, in.Held = dec("1000"), dec("40") }, want: "10"},
		// 7 × 10,000 / 200,000 = 0.35 at any price.
		{name: "buy of a fraction", base: buyInput, in: func(in *copytrading.SizeInput) { in.Quantity = dec("7") }, want: "0.35"},
		// 1 × 10,000 / 30,000 = 0.33333… rounds down.
		{name: "buy rounding down", base: buyInput, in: func(in *copytrading.SizeInput) { in.Quantity, in.LeaderEquity = dec("1"), dec("30000") }, want: "0.3333"},
		// 2 × 10,000 / 30,000 = 0.66666… rounds down, not to nearest.
		{name: "buy rounding down not to nearest", base: buyInput, in: func(in *copytrading.SizeInput) { in.Quantity, in.LeaderEquity = dec("2"), dec("30000") }, want: "0.6666"},
		// 0.001 × 10,000 / 200,000 = 0.00005.
		{name: "buy rounding to nothing", base: buyInput, in: func(in *copytrading.SizeInput) { in.Quantity = dec("0.001") },
			want: "0", wantReason: "the copy rounds to no ACME"},
		{name: "buy at max position", base: buyInput, in: func(in *copytrading.SizeInput) { in.Held = dec("50") },
			want: "0", wantReason: "your ACME position is at its maximum, 25 % of the allocation"},
		{name: "buy beyond max position", base: buyInput, in: func(in *copytrading.SizeInput) { in.Held = dec("70") },
			want: "0", wantReason: "your ACME position is at its maximum, 25 % of the allocation"},
		{name: "buy with zero leader equity", base: buyInput, in: func(in *copytrading.SizeInput) { in.LeaderEquity = dec("0") },
			want: "0", wantReason: "the leader's equity is not positive"},
		{name: "buy with negative leader equity", base: buyInput, in: func(in *copytrading.SizeInput) { in.LeaderEquity = dec("-5") },
			want: "0", wantReason: "the leader's equity is not positive"},
		{name: "buy at zero price", base: buyInput, in: func(in *copytrading.SizeInput) { in.Price = dec("0") },
			want: "0", wantReason: "the leader's ACME price is not positive"},
		{name: "buy with zero equity", base: buyInput, in: func(in *copytrading.SizeInput) { in.Equity = dec("0") },
			want: "0", wantReason: "your equity is not positive"},
		{name: "buy with negative equity", base: buyInput, in: func(in *copytrading.SizeInput) { in.Equity = dec("-100") },
			want: "0", wantReason: "your equity is not positive"},
		{name: "buy of no quantity", base: buyInput, in: func(in *copytrading.SizeInput) { in.Quantity = dec("0") },
			want: "0", wantReason: "the leader's ACME fill has no quantity"},

		// 8 × 25 / 100 = 2.
		{name: "partial sell", base: sellInput, want: "2"},
		{name: "partial sell capped by held", base: sellInput, in: func(in *copytrading.SizeInput) { in.Held = dec("1.5") }, want: "1.5"},
		// The follower trades ACME on its own too: it holds more than it
		// copied, and only the copied share is sold.
		{name: "partial sell of copied only", base: sellInput, in: func(in *copytrading.SizeInput) { in.Held = dec("500") }, want: "2"},
		// 1 × 1 / 3 = 0.3333… rounds down.
		{name: "partial sell rounding down", base: sellInput, in: func(in *copytrading.SizeInput) {
			in.Quantity, in.LeaderBefore, in.Copied = dec("1"), dec("3"), dec("1")
		}, want: "0.3333"},
		{name: "partial sell rounding to nothing", base: sellInput, in: func(in *copytrading.SizeInput) { in.Quantity, in.Copied = dec("0.001"), dec("0.01") },
			want: "0", wantReason: "the copy rounds to no ACME"},
		{name: "full sell", base: sellInput, in: func(in *copytrading.SizeInput) { in.Quantity = dec("100") }, want: "8"},
		// Two thirds then the rest: the rest is all that was copied, with
		// no rounding loss.
		{name: "full sell of an odd copy", base: sellInput, in: func(in *copytrading.SizeInput) { in.Quantity, in.Copied = dec("100"), dec("0.3334") }, want: "0.3334"},
		// The leader sells more than it held (it goes short): f is 1.
		{name: "sell beyond the position", base: sellInput, in: func(in *copytrading.SizeInput) { in.Quantity = dec("150") }, want: "8"},
		{name: "full sell capped by held", base: sellInput, in: func(in *copytrading.SizeInput) { in.Quantity, in.Held = dec("100"), dec("5.25") }, want: "5.25"},
		{name: "full sell of held rounded down", base: sellInput, in: func(in *copytrading.SizeInput) { in.Quantity, in.Held = dec("100"), dec("5.123456") }, want: "5.1234"},
		{name: "sell with nothing copied", base: sellInput, in: func(in *copytrading.SizeInput) { in.Copied = dec("0") },
			want: "0", wantReason: "you hold no ACME copied from this leader to sell"},
		{name: "sell with less than nothing copied", base: sellInput, in: func(in *copytrading.SizeInput) { in.Copied = dec("-3") },
			want: "0", wantReason: "you hold no ACME copied from this leader to sell"},
		{name: "sell with nothing held", base: sellInput, in: func(in *copytrading.SizeInput) { in.Held = dec("0") },
			want: "0", wantReason: "you hold no ACME to sell"},
		{name: "sell with nothing held nor copied", base: sellInput, in: func(in *copytrading.SizeInput) { in.Held, in.Copied = dec("0"), dec("0") },
			want: "0", wantReason: "you hold no ACME to sell"},
		{name: "sell with no leader position", base: sellInput, in: func(in *copytrading.SizeInput) { in.LeaderBefore = dec("0") },
			want: "0", wantReason: "the leader held no ACME before selling"},
		// Sells do not depend on equity.
		{name: "sell with zero equities", base: sellInput, in: func(in *copytrading.SizeInput) { in.Equity, in.LeaderEquity = dec("0"), dec("0") }, want: "2"},

		{name: "unknown side", base: buyInput, in: func(in *copytrading.SizeInput) { in.Side = "short" },
			want: "0", wantReason: `the leader's fill has the side "short", neither buy nor sell`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.base()
			if tt.in != nil {
				tt.in(&in)
			}
			got, reason := copytrading.Size(in)
			if !got.Equal(dec(tt.want)) || reason != tt.wantReason {
				t.Errorf("Size() = %s, %q; want %s, %q", got, reason, tt.want, tt.wantReason)
			}
			if !got.Equal(got.Truncate(copytrading.CopyPlaces)) {
				t.Errorf("Size() = %s: more than %d places", got, copytrading.CopyPlaces)
			}
		})
	}
}
