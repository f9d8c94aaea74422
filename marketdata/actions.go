package marketdata

import (
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

// ActionKind is the kind of a corporate action.
type ActionKind string

// The kinds of corporate action.
const (
	// Split: Value is the ratio, new shares per old share (a 4-for-1 split
	// is 4, a 1-for-10 reverse split 0.1).
	Split ActionKind = "split"
	// Dividend: Value is the cash amount per share, in the asset's
	// currency.
	Dividend ActionKind = "dividend"
)

// Action is a split or a cash dividend of an asset, by ex-date: the first
// session whose prices reflect it.
type Action struct {
	AssetID uuid.UUID
	Date    calendar.Date
	Kind    ActionKind
	Value   decimal.Decimal
}

// Validate checks the action: a valid date, a known kind and a positive
// value. The error wraps [tradekit.ErrInvalid].
func (a Action) Validate() error {
	switch {
	case !a.Date.IsValid():
		return fmt.Errorf("marketdata: invalid date %v: %w", a.Date, tradekit.ErrInvalid)
	case a.Kind != Split && a.Kind != Dividend:
		return fmt.Errorf("marketdata: unknown action kind %q: %w", a.Kind, tradekit.ErrInvalid)
	case !a.Value.IsPositive():
		name := "ratio"
		if a.Kind == Dividend {
			name = "amount"
		}
		return fmt.Errorf("marketdata: %s: %s %s must be positive: %w", a.Date, name, a.Value, tradekit.ErrInvalid)
	}
	return nil
}

// adjustScale is the number of decimal places of adjusted prices.
const adjustScale = 6

// Adjust returns the bars back-adjusted for the actions, by the CRSP and
// Yahoo convention: the latest prices stay as traded and every earlier
// bar is scaled so that the series has no cliff at an ex-date. Each action
// with ex-date e multiplies every bar dated before e by its factor:
//
//	split of ratio r:        f = 1 / r
//	dividend of amount D:    f = 1 - D / C_prev
//
// where C_prev is the close of the last bar before e (as traded). A bar's
// prices are multiplied by the product F of the factors of all later
// ex-dates, rounded to 6 decimal places; its volume is divided by the
// product of the later split factors only (shares traded, in today's
// shares), rounded to the nearest whole number. So after a 4-for-1 split,
// a bar before it that closed at 100 shows 25 and four times its volume.
//
// bars must be one asset's, oldest first; actions may come in any order
// and may belong to dates without bars. A dividend with no bar before its
// ex-date, or one of at least C_prev, is ignored (it cannot be expressed
// as a factor in (0, 1)). bars is not modified.
func Adjust(bars []Price, actions []Action) []Price {
	out := slices.Clone(bars)
	if len(actions) == 0 || len(bars) == 0 {
		return out
	}
	acts := slices.Clone(actions)
	slices.SortFunc(acts, func(a, b Action) int { return b.Date.Compare(a.Date) }) // newest first
	one := decimal.NewFromInt(1)
	price, volume := one, one // factors for the bars not yet passed
	k := 0
	for i := len(out) - 1; i >= 0; i-- {
		// Apply the actions whose ex-date is after this bar.
		for k < len(acts) && acts[k].Date.After(out[i].Date) {
			a := acts[k]
			k++
			switch a.Kind {
			case Split:
				price = price.DivRound(a.Value, 18)
				volume = volume.Mul(a.Value)
			case Dividend:
				prev := bars[i].Close // the last bar before the ex-date, as traded
				if a.Value.LessThan(prev) {
					price = price.Mul(one.Sub(a.Value.DivRound(prev, 18)))
				}
			}
		}
		if price.Equal(one) && volume.Equal(one) {
			continue
		}
		p := &out[i]
		p.Open = p.Open.Mul(price).Round(adjustScale)
		p.High = p.High.Mul(price).Round(adjustScale)
		p.Low = p.Low.Mul(price).Round(adjustScale)
		p.Close = p.Close.Mul(price).Round(adjustScale)
		p.Volume = decimal.NewFromInt(p.Volume).Mul(volume).Round(0).IntPart()
	}
	return out
}
