package indicators

import "math"

// ADX returns Wilder's average directional index, as TA-Lib's ADX:
//
//	+DM = high-prevHigh if it is > 0 and > prevLow-low, else 0   (-DM mirrored)
//	TR  = true range
//	+DM14, -DM14, TR14: sums over the first period-1 bars, then
//	                    x = x - x/period + today's value   (Wilder smoothing)
//	+DI = 100 * +DM14/TR14,  -DI = 100 * -DM14/TR14
//	DX  = 100 * |+DI - -DI| / (+DI + -DI)
//	ADX = mean of the first period DX, then (ADX*(period-1) + DX) / period
//
// The first 2*period-1 values are NaN (lookback 2*period-1). ADX panics if
// period < 2 (TA-Lib's minimum) or the inputs differ in length.
func ADX(high, low, close []float64, period int) []float64 {
	_, _, adx := dmi("ADX", high, low, close, period, false, false, true)
	return adx
}

// PlusDI returns the plus directional indicator +DI of [ADX], as TA-Lib's
// PLUS_DI (0 when the smoothed true range is 0). The first period values
// are NaN (lookback period). PlusDI panics if period < 2 (TA-Lib's own
// period-1 PLUS_DI is a fraction, not a percentage, so it is not offered)
// or the inputs differ in length.
func PlusDI(high, low, close []float64, period int) []float64 {
	plus, _, _ := dmi("PlusDI", high, low, close, period, true, false, false)
	return plus
}

// MinusDI returns the minus directional indicator -DI of [ADX], as
// TA-Lib's MINUS_DI. The first period values are NaN (lookback period).
// MinusDI panics if period < 2 or the inputs differ in length.
func MinusDI(high, low, close []float64, period int) []float64 {
	_, minus, _ := dmi("MinusDI", high, low, close, period, false, true, false)
	return minus
}

func dmi(name string, high, low, close []float64, period int, wantPlus, wantMinus, wantADX bool) (plus, minus, adx []float64) {
	checkPeriod(name, period, 2)
	n := len(close)
	checkLen(name, n, len(high), len(low))
	if wantPlus {
		plus = make([]float64, n)
	}
	if wantMinus {
		minus = make([]float64, n)
	}
	if wantADX {
		adx = make([]float64, n)
	}
	s := NewDMIStream(period)
	for i := range close {
		p, m, a := s.Next(high[i], low[i], close[i])
		if wantPlus {
			plus[i] = p
		}
		if wantMinus {
			minus[i] = m
		}
		if wantADX {
			adx[i] = a
		}
	}
	return plus, minus, adx
}

// DMIStream computes +DI, -DI and ADX ([PlusDI], [MinusDI], [ADX]) one bar
// at a time. Create it with [NewDMIStream].
type DMIStream struct {
	period              int
	n                   int // bars seen, capped at 2*period
	prevHigh, prevLow   float64
	prevClose           float64
	plusDM, minusDM, tr float64
	sumDX, adx          float64
}

// NewDMIStream returns a stream giving the same values as [PlusDI],
// [MinusDI] and [ADX]. It panics if period < 2.
func NewDMIStream(period int) *DMIStream {
	checkPeriod("DMI", period, 2)
	return &DMIStream{period: period}
}

// Next adds a bar and returns +DI, -DI (NaN during the first period bars)
// and ADX (NaN during the first 2*period-1 bars).
func (s *DMIStream) Next(high, low, close float64) (plusDI, minusDI, adx float64) {
	return s.update(high, low, close, true)
}

// Peek returns what [DMIStream.Next] would return for the bar without
// changing the stream.
func (s *DMIStream) Peek(high, low, close float64) (plusDI, minusDI, adx float64) {
	return s.update(high, low, close, false)
}

func (s *DMIStream) update(high, low, close float64, commit bool) (plusDI, minusDI, adxOut float64) {
	nan := math.NaN()
	plusDI, minusDI, adxOut = nan, nan, nan
	if s.n == 0 {
		if commit {
			s.prevHigh, s.prevLow, s.prevClose = high, low, close
			s.n = 1
		}
		return
	}
	p := float64(s.period)
	diffP := high - s.prevHigh
	diffM := s.prevLow - low
	plusDM, minusDM, tr, sumDX, adx := s.plusDM, s.minusDM, s.tr, s.sumDX, s.adx
	trueR := trueRange(high, low, s.prevClose)
	if s.n < s.period { // bars 1..period-1: plain sums
		if diffM > 0 && diffP < diffM {
			minusDM += diffM
		} else if diffP > 0 && diffP > diffM {
			plusDM += diffP
		}
		tr += trueR
	} else {
		minusDM -= minusDM / p
		plusDM -= plusDM / p
		if diffM > 0 && diffP < diffM {
			minusDM += diffM
		} else if diffP > 0 && diffP > diffM {
			plusDM += diffP
		}
		tr = tr - (tr / p) + trueR
		plusDI, minusDI = 0, 0
		dx, hasDX := 0.0, false
		if !isZero(tr) {
			minusDI = 100.0 * (minusDM / tr)
			plusDI = 100.0 * (plusDM / tr)
			if t := minusDI + plusDI; !isZero(t) {
				dx, hasDX = 100.0*(math.Abs(minusDI-plusDI)/t), true
			}
		}
		last := 2*s.period - 1
		switch {
		case s.n < last:
			if hasDX {
				sumDX += dx
			}
		case s.n == last:
			if hasDX {
				sumDX += dx
			}
			adx = sumDX / p
			adxOut = adx
		default:
			if hasDX {
				adx = ((adx * float64(s.period-1)) + dx) / p
			}
			adxOut = adx
		}
	}
	if commit {
		s.prevHigh, s.prevLow, s.prevClose = high, low, close
		s.plusDM, s.minusDM, s.tr, s.sumDX, s.adx = plusDM, minusDM, tr, sumDX, adx
		if s.n < 2*s.period {
			s.n++
		}
	}
	return plusDI, minusDI, adxOut
}
