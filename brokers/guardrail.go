package brokers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
)

// Guardrails are a user's limits on the orders Tradekit places for them,
// checked before an order reaches the broker. A zero MaxDailyTrades,
// MaxPositionSizePct or MaxPortfolioRiskPct means no limit of that kind;
// an empty AllowedAssetTypes allows none.
type Guardrails struct {
	// MaxDailyTrades bounds the orders accepted in a UTC day.
	MaxDailyTrades int
	// MaxPositionSizePct bounds one position's value after an order, in
	// percent of equity, in (0, 100].
	MaxPositionSizePct decimal.Decimal
	// MaxPortfolioRiskPct bounds what the portfolio loses if every
	// position and the order hit their stop-loss, in percent of equity,
	// in (0, 100].
	MaxPortfolioRiskPct decimal.Decimal
	// StopLossRequired requires a buy to carry a stop-loss price below
	// its price.
	StopLossRequired bool
	// AllowedAssetTypes lists the asset types orders may trade: "stock",
	// "etf", "fx", "crypto", "commodity".
	AllowedAssetTypes []string
}

// AssetTypes returns the asset types Tradekit knows, as marketdata names
// them.
func AssetTypes() []string { return []string{"stock", "etf", "fx", "crypto", "commodity"} }

// DefaultGuardrails returns a new user's guardrails: 25 trades a day, at
// most 20 % of equity in one position, at most 10 % of equity at risk, no
// stop-loss required, every asset type allowed.
func DefaultGuardrails() Guardrails {
	return Guardrails{
		MaxDailyTrades:      25,
		MaxPositionSizePct:  decimal.New(20, 0),
		MaxPortfolioRiskPct: decimal.New(10, 0),
		AllowedAssetTypes:   AssetTypes(),
	}
}

// The bounds of the guardrails a user sets, which [GuardrailsPatch.Check]
// enforces.
const (
	// MaxDailyTradesLimit is the largest MaxDailyTrades a user may set.
	MaxDailyTradesLimit = 100000
	// GuardrailPctPlaces is the most decimal places of MaxPositionSizePct
	// and MaxPortfolioRiskPct.
	GuardrailPctPlaces = 4
)

// GuardrailsPatch changes some of a user's [Guardrails]: nil fields keep
// their values. [GuardrailsPatch.Check] says whether it may be applied.
type GuardrailsPatch struct {
	MaxDailyTrades      *int             // from 1 to MaxDailyTradesLimit
	MaxPositionSizePct  *decimal.Decimal // above 0, at most 100, at most GuardrailPctPlaces places
	MaxPortfolioRiskPct *decimal.Decimal // as MaxPositionSizePct
	StopLossRequired    *bool
	// AllowedAssetTypes, when not nil, replaces the allowed asset types:
	// types of [AssetTypes], at least one, in any order, repeats allowed.
	AllowedAssetTypes []string
}

// IsEmpty reports whether p changes nothing.
func (p GuardrailsPatch) IsEmpty() bool {
	return p.MaxDailyTrades == nil && p.MaxPositionSizePct == nil && p.MaxPortfolioRiskPct == nil &&
		p.StopLossRequired == nil && p.AllowedAssetTypes == nil
}

// Check returns nil when every field p gives is within its bounds, else
// a *[tradekit.ParamError] (wrapping [tradekit.ErrInvalid]) for the first
// that is not, in the order of the fields. The error names the field as
// the API's parameter (maxDailyTrades, maxPositionSizePct,
// maxPortfolioRiskPct, allowedAssetTypes) and words it as the API does.
func (p GuardrailsPatch) Check() error {
	if n := p.MaxDailyTrades; n != nil && (*n < 1 || *n > MaxDailyTradesLimit) {
		return &tradekit.ParamError{Param: "maxDailyTrades",
			Msg: fmt.Sprintf("must be an integer from 1 to %d, got %s", MaxDailyTradesLimit, tradekit.Quote(strconv.Itoa(*n)))}
	}
	if err := checkPct("maxPositionSizePct", p.MaxPositionSizePct); err != nil {
		return err
	}
	if err := checkPct("maxPortfolioRiskPct", p.MaxPortfolioRiskPct); err != nil {
		return err
	}
	if p.AllowedAssetTypes != nil {
		known := AssetTypes()
		for _, t := range p.AllowedAssetTypes {
			if !slices.Contains(known, t) {
				return &tradekit.ParamError{Param: "allowedAssetTypes",
					Msg: fmt.Sprintf("unknown asset type %s; the types are %s", tradekit.Quote(t), strings.Join(known, ", "))}
			}
		}
		if len(p.AllowedAssetTypes) == 0 {
			return &tradekit.ParamError{Param: "allowedAssetTypes",
				Msg: "give at least one asset type: " + strings.Join(known, ", ")}
		}
	}
	return nil
}

// hundred is the upper bound of a guardrail's percentage.
var hundred = decimal.New(100, 0)

// checkPct returns the error of the percentage v of the guardrail param
// when it is outside (0, 100] or has more than GuardrailPctPlaces decimal
// places; nil for a nil v. It bounds v by its digits and exponent before
// computing, since comparing decimals rescales them: 1e-999999999 would
// otherwise take a power of ten of a billion digits.
func checkPct(param string, v *decimal.Decimal) error {
	if v == nil {
		return nil
	}
	// v < 10^magnitude, and v ≥ 10^(magnitude-1) when positive.
	exp, digits := int(v.Exponent()), v.NumDigits()
	magnitude := digits + exp
	if v.Sign() <= 0 || magnitude > 3 || (magnitude > -40 && v.GreaterThan(hundred)) {
		return &tradekit.ParamError{Param: param, Msg: "must be a number above 0 and at most 100, got " + quoteDecimal(*v)}
	}
	// A coefficient of digits digits ends in at most digits-1 zeros.
	if places := -exp; places > GuardrailPctPlaces && (places-GuardrailPctPlaces >= digits || !v.Equal(v.Truncate(GuardrailPctPlaces))) {
		return &tradekit.ParamError{Param: param,
			Msg: fmt.Sprintf("must have at most %d decimal places, got %s", GuardrailPctPlaces, quoteDecimal(*v))}
	}
	return nil
}

// quoteDecimal quotes d for a message: in plain digits, or with an
// exponent when plain digits would run to many zeros.
func quoteDecimal(d decimal.Decimal) string {
	if exp := d.Exponent(); exp > 30 || exp < -40 {
		return tradekit.Quote(d.Coefficient().String() + "e" + strconv.Itoa(int(exp)))
	}
	return tradekit.Quote(d.String())
}

// Apply sets on g the fields p gives. Allowed asset types are stored
// once each, in the order of [AssetTypes]. Apply does not check p: call
// [GuardrailsPatch.Check] first.
func (p GuardrailsPatch) Apply(g *Guardrails) {
	if p.MaxDailyTrades != nil {
		g.MaxDailyTrades = *p.MaxDailyTrades
	}
	if p.MaxPositionSizePct != nil {
		g.MaxPositionSizePct = *p.MaxPositionSizePct
	}
	if p.MaxPortfolioRiskPct != nil {
		g.MaxPortfolioRiskPct = *p.MaxPortfolioRiskPct
	}
	if p.StopLossRequired != nil {
		g.StopLossRequired = *p.StopLossRequired
	}
	if p.AllowedAssetTypes != nil {
		g.AllowedAssetTypes = slices.DeleteFunc(AssetTypes(), func(t string) bool { return !slices.Contains(p.AllowedAssetTypes, t) })
	}
}
