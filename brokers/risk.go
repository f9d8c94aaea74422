package brokers

import "github.com/shopspring/decimal"

// risk returns what a position of signed quantity q at price loses if it
// exits at its stop: |q| × (price − stop) for a long, |q| × (stop −
// price) for a short, never less than zero; without a stop, |q| ×
// min(price, DefaultStopATRs × atr), or |q| × price × FallbackStopPct /
// 100 when atr is zero. See the package documentation.
func risk(q, price decimal.Decimal, stop *decimal.Decimal, atr decimal.Decimal) decimal.Decimal {
	var d decimal.Decimal // the loss per unit
	switch {
	case q.Sign() == 0:
		return decimal.Decimal{}
	case stop != nil && q.Sign() > 0:
		d = price.Sub(*stop)
	case stop != nil:
		d = stop.Sub(price)
	case atr.Sign() > 0:
		d = atr.Mul(stopATRs)
		if d.Cmp(price) > 0 {
			d = price
		}
	default:
		d = price.Mul(fallbackPct)
	}
	if d.Sign() <= 0 {
		return decimal.Decimal{}
	}
	return q.Abs().Mul(d)
}
