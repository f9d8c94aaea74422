package brokers

import (
	"math"
	"math/big"
	"math/bits"

	"github.com/shopspring/decimal"
)

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

// riskSum adds up the risks of positions, exactly, as [risk] computes
// them. Each decimal operation allocates, which made summing the risks
// of 20 positions the bulk of a check's time; so a position whose
// coefficients fit in 64 bits is added into a 128-bit coefficient with
// no allocation at all, and only the others go through [risk]. The zero
// value is an empty sum.
type riskSum struct {
	hi, lo uint64 // the coefficient of the fast part, times 10^exp
	exp    int32
	used   bool            // whether the fast part holds a term
	slow   decimal.Decimal // the terms that did not fit
}

// add adds the risk of a position of signed quantity q at price.
func (a *riskSum) add(q, price decimal.Decimal, stop *decimal.Decimal, atr decimal.Decimal) {
	if hi, lo, exp, ok := riskFast(q, price, stop, atr); ok && a.addFast(hi, lo, exp) {
		return
	}
	if r := risk(q, price, stop, atr); r.Sign() != 0 {
		a.slow = a.slow.Add(r)
	}
}

// sum returns the sum of the risks added.
func (a *riskSum) sum() decimal.Decimal {
	if !a.used {
		return a.slow
	}
	var d decimal.Decimal
	if a.hi == 0 && a.lo <= math.MaxInt64 {
		d = decimal.New(int64(a.lo), a.exp)
	} else {
		v := new(big.Int).SetUint64(a.hi)
		v.Lsh(v, 64).Or(v, new(big.Int).SetUint64(a.lo))
		d = decimal.NewFromBigInt(v, a.exp)
	}
	if a.slow.Sign() != 0 {
		d = d.Add(a.slow)
	}
	return d
}

// addFast adds (hi·2^64 + lo) × 10^exp to the fast part, reporting false,
// with the sum's value unchanged, if it does not fit.
func (a *riskSum) addFast(hi, lo uint64, exp int32) bool {
	if hi == 0 && lo == 0 {
		return true
	}
	if !a.used {
		a.hi, a.lo, a.exp, a.used = hi, lo, exp, true
		return true
	}
	var ok bool
	if exp > a.exp {
		if hi, lo, ok = mul128(hi, lo, exp-a.exp); !ok {
			return false
		}
	} else if exp < a.exp {
		h, l, ok := mul128(a.hi, a.lo, a.exp-exp)
		if !ok {
			return false
		}
		a.hi, a.lo, a.exp = h, l, exp // the same value, more digits
	}
	l, c := bits.Add64(a.lo, lo, 0)
	h, c := bits.Add64(a.hi, hi, c)
	if c != 0 {
		return false
	}
	a.hi, a.lo = h, l
	return true
}

// riskFast is [risk] on 64-bit coefficients: it returns the risk as
// (hi·2^64 + lo) × 10^exp, or ok false when an input or an intermediate
// value does not fit.
func riskFast(q, price decimal.Decimal, stop *decimal.Decimal, atr decimal.Decimal) (hi, lo uint64, exp int32, ok bool) {
	qm, qe, qneg, ok := small(q)
	if !ok || qm == 0 {
		return 0, 0, 0, ok
	}
	pm, pe, pneg, ok := small(price)
	if !ok || pneg {
		return 0, 0, 0, false
	}
	var d uint64 // the loss per unit, times 10^de
	var de int32
	switch {
	case stop != nil:
		sm, se, sneg, ok := small(*stop)
		if !ok || sneg {
			return 0, 0, 0, false
		}
		x, y, e, ok := align(pm, pe, sm, se)
		if !ok {
			return 0, 0, 0, false
		}
		if qneg {
			x, y = y, x
		}
		if x > y {
			d, de = x-y, e
		}
	case atr.Sign() > 0:
		am, ae, _, ok := small(atr)
		if !ok {
			return 0, 0, 0, false
		}
		x, y, e, ok := align(am*DefaultStopATRs, ae, pm, pe) // am < 10^18: no overflow
		if !ok {
			return 0, 0, 0, false
		}
		d, de = min(x, y), e
	default:
		d, de = pm*FallbackStopPct, pe-2 // pm < 10^18: no overflow
	}
	if d == 0 {
		return 0, 0, 0, true
	}
	hi, lo = bits.Mul64(qm, d) // < 10^18 × 2^64: fits
	return hi, lo, qe + de, true
}

// small returns d as a magnitude, an exponent and a sign, with ok false
// unless the magnitude is below 10^18 and the exponent within ±64, so
// that the arithmetic of riskFast cannot overflow.
func small(d decimal.Decimal) (m uint64, exp int32, neg, ok bool) {
	exp = d.Exponent()
	if d.NumDigits() > 18 || exp < -64 || exp > 64 {
		return 0, 0, false, false
	}
	c := d.CoefficientInt64()
	if c < 0 {
		return uint64(-c), exp, true, true
	}
	return uint64(c), exp, false, true
}

// align returns a × 10^ea and b × 10^eb as x × 10^e and y × 10^e, with e
// the smaller exponent, or ok false if x or y does not fit in 64 bits.
func align(a uint64, ea int32, b uint64, eb int32) (x, y uint64, e int32, ok bool) {
	switch {
	case ea == eb:
		return a, b, ea, true
	case ea > eb:
		x, ok = mul64(a, ea-eb)
		return x, b, eb, ok
	default:
		y, ok = mul64(b, eb-ea)
		return a, y, ea, ok
	}
}

// pow10 holds 10^0 … 10^19, the powers of ten that fit in a uint64.
var pow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// mul64 returns a × 10^k, or ok false if it does not fit in 64 bits.
func mul64(a uint64, k int32) (uint64, bool) {
	if k >= int32(len(pow10)) {
		return 0, a == 0
	}
	hi, lo := bits.Mul64(a, pow10[k])
	return lo, hi == 0
}

// mul128 returns (hi·2^64 + lo) × 10^k, or ok false if it does not fit in
// 128 bits.
func mul128(hi, lo uint64, k int32) (uint64, uint64, bool) {
	if k >= int32(len(pow10)) {
		return 0, 0, false
	}
	c, l := bits.Mul64(lo, pow10[k])
	h1, h := bits.Mul64(hi, pow10[k])
	h, carry := bits.Add64(h, c, 0)
	return h, l, h1 == 0 && carry == 0
}
